"""Certificates: cert numbers in listing titles, their verification, and the provenance graph.

A certificate is a node of the provenance graph; each listing that showed its number is a
sighting (an edge). The modules, each one concept, in import order:

* :mod:`.extract` — reading titles and item specifics for cert mentions (pure,
  docs/certificates.md#1-attribution-rules);
* :mod:`.views` — the pydantic views handed out (:class:`CertificateView`, :class:`SightingView`,
  :class:`CertLookupResult`, :class:`VerifySummary`);
* :mod:`.sightings` — recording sightings from stored listings
  (:func:`record_sightings_from_listings`) and the title-mismatch signal on them;
* :mod:`.verify` — the grading-registry lookups and the cert-verify job (:func:`verify_pending`);
* :mod:`.lookup` — a cert number or listing URL (:func:`lookup`, SSRF-checked) and one stored
  certificate (:func:`get_certificate`).

A certificate's ``status`` is ``pending`` (seen, not yet answered), ``verified`` or
``not_found`` (the registry has no such cert for that grader — itself a fraud signal). A registry
that fails transiently leaves it ``pending`` for the next sweep. The listing entity is never
changed: a mismatch is a signal on the sighting, for a reviewer.

Storage is :mod:`rareindex.storage.cert_store`; the guide is ``docs/certificates.md``.

Example:
    >>> from rareindex.certs import extract_certs
    >>> [(m.number, m.grader) for m in extract_certs("Luka Doncic #280 PSA 10 #12345678")]
    [('12345678', 'PSA')]
"""

from .extract import CertMention, extract_certs, title_mismatch
from .lookup import get_certificate, lookup
from .sightings import record_sightings_from_listings
from .verify import verify_pending
from .views import CertificateView, CertLookupResult, SightingView, VerifySummary

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
