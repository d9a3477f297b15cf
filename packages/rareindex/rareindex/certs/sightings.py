"""Sightings: the listings that showed a cert number, and the mismatch signal on each.

A sighting is one listing title (by :func:`title_hash`: the same listing re-titled is a new
sighting) showing one cert number. Its certs come from the title and from item specifics — the
payload's own (``Certification Number``) or the connector's reading (:func:`stated_specifics`).
An attributed sighting (a grader token next to the number) creates a ``pending`` certificate for
the cert-verify job.

* :func:`record_sightings_from_listings` — the sightings in stored normalized sales, listings and
  auction lots (no network).
* :func:`record_seen` — write the sightings of already-read listings (a listing-URL lookup too).
* :func:`refresh_mismatches` — a verified subject or year that disagrees with the sighting's
  title sets its ``mismatch`` (``subject``, ``year``). The listing entity is never changed: a
  mismatch is a signal on the sighting, for a reviewer.

Example:
    >>> record_sightings_from_listings(engine)                      # doctest: +SKIP
    3
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from ..storage import Engine, cert_store
from ..storage.change_events import cert_mismatch_events
from ..storage.outbox import emit
from .extract import CertMention, extract_certs, title_mismatch

__all__ = [
    "LISTING_KINDS",
    "Seen",
    "item_specifics",
    "record_seen",
    "record_sightings_from_listings",
    "refresh_mismatches",
    "stated_specifics",
    "title_hash",
]

LISTING_KINDS = ("sale", "listing", "auction_lot")
"""Normalized record kinds whose titles are scanned for certs."""
_SPECIFIC_KEYS = frozenset({"certification number", "cert number", "certification #", "cert #"})
_PRICE_FIELDS = ("price", "price_realised", "hammer_price")


def title_hash(title: str) -> str:
    """SHA-256 of the NFKC title: the same listing re-titled is a new sighting."""
    return hashlib.sha256(unicodedata.normalize("NFKC", title).strip().encode()).hexdigest()


def item_specifics(payload: Any, depth: int = 0) -> dict[str, str] | None:
    """Item specifics (a mapping with a ``Certification Number``) anywhere in a raw payload."""
    if depth > 6:
        return None
    if isinstance(payload, dict):
        if any(str(k).strip().casefold() in _SPECIFIC_KEYS for k in payload):
            return {str(k): str(v) for k, v in payload.items() if isinstance(v, str | int)}
        values: Iterable[Any] = payload.values()
    elif isinstance(payload, list):
        values = payload
    else:
        return None
    return next((s for v in values if (s := item_specifics(v, depth + 1)) is not None), None)


def stated_specifics(record: Mapping[str, Any]) -> dict[str, str] | None:
    """What the connector itself read as this item's cert and grader, as item specifics."""
    cert = (record.get("identifiers") or {}).get("cert_number")
    if not cert:
        return None
    grader = (record.get("grading") or {}).get("grader") or ""
    return {"Certification Number": str(cert), "Professional Grader": str(grader)}


def _price(record: Mapping[str, Any]) -> tuple[Decimal | None, str | None]:
    for name in _PRICE_FIELDS:
        money = record.get(name)
        if isinstance(money, dict) and money.get("amount") is not None:
            return Decimal(str(money["amount"])), money.get("currency")
    return None, None


@dataclass(slots=True)
class Seen:
    """One listing's cert mentions, ready to become sightings."""

    source_id: str
    record: Mapping[str, Any]
    mentions: list[CertMention]
    seen_at: datetime
    fallback_url: str | None = None

    @property
    def title(self) -> str:
        return str(self.record.get("title") or "")

    @property
    def key(self) -> tuple[str, str]:
        return (self.source_id, str(self.record.get("external_id")))


def refresh_mismatches(
    conn: Any,
    certificate_ids: Iterable[str],
    titles: Mapping[tuple[str, str], list[str]] | None = None,
) -> int:
    """Set each sighting's mismatch against its verified certificate; returns how many of these
    certificates' sightings disagree with their title."""
    certs = {
        c["id"]: c
        for c in cert_store.find_certificates(conn, ids=list(dict.fromkeys(certificate_ids)))
        if c["status"] == "verified"
    }
    if not certs:
        return 0
    sightings = cert_store.find_sightings(conn, certificate_ids=list(certs))
    known: dict[tuple[str, str], list[str]] = {k: list(v) for k, v in (titles or {}).items()}
    missing = {(s["source_id"], s["listing_external_id"]) for s in sightings} - known.keys()
    if missing:
        known.update(cert_store.listing_titles(conn, missing, kinds=LISTING_KINDS))
    changes: dict[str, str | None] = {}
    disagree = 0
    for sighting in sightings:
        candidates = known.get((sighting["source_id"], sighting["listing_external_id"]), [])
        title = next((t for t in candidates if title_hash(t) == sighting["title_hash"]), None)
        if title is None:
            disagree += sighting["mismatch"] is not None
            continue
        cert = certs[sighting["certificate_id"]]
        value = title_mismatch(title, cert["subject"], cert["year"])
        disagree += value is not None
        if value != sighting["mismatch"]:
            changes[sighting["id"]] = value
    cert_store.set_mismatches(conn, changes)
    emit(conn, cert_mismatch_events(changes, sightings, certs))
    return disagree


def record_seen(conn: Any, seen: Sequence[Seen]) -> tuple[int, list[str], list[str]]:
    """Write the sightings of ``seen`` (pending certificates for attributed ones) and refresh the
    mismatch of the verified ones; returns (new sightings, sighting ids, certificate ids)."""
    attributed = [
        (m.grader, m.key) for s in seen for m in s.mentions if m.attribution == "attributed"
    ]
    cert_ids = cert_store.add_pending(conn, [(g, k) for g, k in attributed if g])
    rows: list[dict[str, Any]] = []
    for item in seen:
        amount, currency = _price(item.record)
        for mention in item.mentions:
            rows.append(
                {
                    "certificate_id": cert_ids.get((mention.grader or "", mention.key)),
                    "cert_number": mention.key,
                    "grader": mention.grader,
                    "attribution": mention.attribution,
                    "source_id": item.source_id,
                    "listing_external_id": item.key[1],
                    "url": item.record.get("url") or item.fallback_url,
                    "seen_at": item.seen_at,
                    "title_hash": title_hash(item.title),
                    "image_hash": None,
                    "price": amount,
                    "currency": currency,
                    "mismatch": None,
                }
            )
    new = cert_store.add_sightings(conn, rows)
    titles: dict[tuple[str, str], list[str]] = {}
    for item in seen:
        titles.setdefault(item.key, []).append(item.title)
    refresh_mismatches(conn, cert_ids.values(), titles)
    sighting_ids = [
        cert_store.sighting_id(
            r["source_id"], r["listing_external_id"], r["cert_number"], r["title_hash"]
        )
        for r in rows
    ]
    return new, sighting_ids, list(dict.fromkeys(cert_ids.values()))


def record_sightings_from_listings(engine: Engine, *, since: datetime | None = None) -> int:
    """Record the cert sightings of stored normalized sales, listings and auction lots
    (normalized at or after ``since``); returns how many sightings are new.

    The title is read by :func:`.extract.extract_certs`; the connector's own reading
    (``identifiers.cert_number`` with ``grading.grader``) counts as item specifics. Fetches
    nothing; idempotent (a second pass adds nothing).
    """
    new = 0
    after: str | None = None
    while True:
        with engine.begin() as conn:
            batch = cert_store.listing_records(conn, kinds=LISTING_KINDS, after=after, since=since)
            if not batch:
                return new
            after = batch[-1]["id"]
            seen = []
            for row in batch:
                record = row["record"]
                if not isinstance(record, dict) or not record.get("title"):
                    continue
                mentions = extract_certs(str(record["title"]), stated_specifics(record))
                if mentions:
                    seen.append(Seen(row["source_id"], record, mentions, row["fetched_at"]))
            new += record_seen(conn, seen)[0] if seen else 0
