"""Certificates: cert numbers in listing titles, their verification, and the provenance graph.

:mod:`.extract` reads titles (pure, DOMAIN §1.2); :mod:`.service` looks up numbers and listing
URLs, records sightings and runs the cert-verify job. Storage is
:mod:`rareindex.storage.cert_store`; the guide is ``docs/certificates.md``.

Example:
    >>> from rareindex.certs import extract_certs
    >>> [(m.number, m.grader) for m in extract_certs("Luka Doncic #280 PSA 10 #12345678")]
    [('12345678', 'PSA')]
"""

from .extract import CertMention, extract_certs, title_mismatch
from .service import (
    CertificateView,
    CertLookupResult,
    SightingView,
    VerifySummary,
    get_certificate,
    lookup,
    record_sightings_from_listings,
    verify_pending,
)

__all__ = [
    "CertLookupResult",
    "CertMention",
    "CertificateView",
    "SightingView",
    "VerifySummary",
    "extract_certs",
    "get_certificate",
    "lookup",
    "record_sightings_from_listings",
    "title_mismatch",
    "verify_pending",
]
