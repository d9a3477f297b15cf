"""What the certificate calls hand out: pydantic views of certificates and their sightings.

A certificate (a node of the provenance graph) is a :class:`CertificateView`; each listing that
showed its number (an edge) is a :class:`SightingView`. :class:`CertLookupResult` is what
:func:`~rareindex.certs.lookup.lookup` found and :class:`VerifySummary` what one
:func:`~rareindex.certs.verify.verify_pending` pass did. :func:`certificate_views` and
:func:`sighting_view` turn :mod:`rareindex.storage.cert_store` rows into views.

A certificate's ``status`` is ``pending`` (seen, not yet answered), ``verified`` or
``not_found`` (the registry has no such cert for that grader — itself a fraud signal).

Example:
    >>> rows = cert_store.find_certificates(conn, number="12345678")   # doctest: +SKIP
    >>> views = certificate_views(conn, rows)                          # doctest: +SKIP
    >>> views[0].status, views[0].sightings[0].attribution             # doctest: +SKIP
    ('verified', 'attributed')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from rareindex_connectors.records import currency_minor_unit

from ..storage import cert_store
from .extract import cert_key

__all__ = [
    "CertLookupResult",
    "CertificateView",
    "SightingView",
    "VerifySummary",
    "certificate_views",
    "sighting_view",
]


class SightingView(BaseModel):
    """One listing that showed a cert number (an edge of the provenance graph)."""

    source_id: str
    listing_external_id: str
    url: str | None
    seen_at: datetime
    price: str | None
    currency: str | None
    attribution: str
    """``attributed``, ``ambiguous`` (no grader token) or ``negated`` (NOT PSA, PSA 10?…)."""
    grader: str | None
    mismatch: str | None
    """``subject``, ``year`` or ``subject,year``: the verified certificate disagrees with the
    listing's title (a mis-title or fraud signal). None when they agree or it is unverified."""


class CertificateView(BaseModel):
    """A certificate (a node of the provenance graph) and the sightings attributed to it."""

    grader: str
    cert_number: str
    """As the grader prints it once verified (``3193674-002``); stored and matched without the
    dash."""
    status: str
    """``verified``, ``not_found`` or ``pending``."""
    grade: str | None
    qualifier: str | None
    label_type: str | None
    subject: str | None
    year: int | None
    set_name: str | None
    verified_at: datetime | None
    """When the registry last answered (``verified`` or ``not_found``)."""
    sightings: list[SightingView]


class CertLookupResult(BaseModel):
    """What a lookup found: the certificates, the sightings in scope, the unattributed numbers."""

    target: str
    certificates: list[CertificateView]
    sightings: list[SightingView]
    """A listing lookup: that listing's sightings. A number lookup: every stored sighting of it."""
    ambiguous: list[str]
    """Numbers a listing showed with no grader token: candidates only, never verified by guess."""


class VerifySummary(BaseModel):
    """What one :func:`~rareindex.certs.verify.verify_pending` pass did."""

    linked: int = 0
    """Attributed sightings that had no certificate row yet (now pending)."""
    checked: int = 0
    verified: int = 0
    not_found: int = 0
    failed: int = 0
    """Lookups that failed transiently: still pending, retried next time."""
    mismatches: int = 0
    """Sightings of the certificates checked whose title disagrees with them."""


def _money_text(amount: Decimal | None, currency: str | None) -> str | None:
    if amount is None:
        return None
    try:
        places = currency_minor_unit(currency) if currency else 2
    except (KeyError, ValueError):
        places = 2
    return format(amount.quantize(Decimal(1).scaleb(-places)), "f")


def sighting_view(row: Mapping[str, Any]) -> SightingView:
    """A stored sighting row as a view (the price in the currency's minor units)."""
    return SightingView(
        source_id=row["source_id"],
        listing_external_id=row["listing_external_id"],
        url=row["url"],
        seen_at=row["seen_at"],
        price=_money_text(row["price"], row["currency"]),
        currency=row["currency"],
        attribution=row["attribution"],
        grader=row["grader"],
        mismatch=row["mismatch"],
    )


def _printed(row: Mapping[str, Any]) -> str:
    """The number as the grader prints it (``3193674-002``) once verified; else the stored key."""
    details = row.get("details") or {}
    printed = str((details.get("record") or {}).get("CertNumber") or "")
    return printed if cert_key(printed) == row["cert_number"] else row["cert_number"]


def _certificate_view(
    row: Mapping[str, Any], sightings: Sequence[Mapping[str, Any]]
) -> CertificateView:
    return CertificateView(
        grader=row["grader"],
        cert_number=_printed(row),
        status=row["status"],
        grade=row["grade"],
        qualifier=row["qualifier"],
        label_type=row["label_type"],
        subject=row["subject"],
        year=row["year"],
        set_name=row["set_name"],
        verified_at=row["verified_at"],
        sightings=[sighting_view(s) for s in sightings if s["certificate_id"] == row["id"]],
    )


def certificate_views(conn: Any, rows: Sequence[Mapping[str, Any]]) -> list[CertificateView]:
    """Stored certificate rows as views with their sightings: verified first, then not found,
    then pending; by grader within each."""
    sightings = cert_store.find_sightings(conn, certificate_ids=[r["id"] for r in rows])
    order = {"verified": 0, "not_found": 1, "pending": 2}
    ranked = sorted(rows, key=lambda r: (order.get(r["status"], 3), r["grader"]))
    return [_certificate_view(r, sightings) for r in ranked]
