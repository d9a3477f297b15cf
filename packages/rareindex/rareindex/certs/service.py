"""Certificate verification and provenance: lookups, sightings, the cert-verify job.

* :func:`lookup` — a cert number (``12345678``, ``PSA 12345678``, ``4321000-001``) is verified
  through the ``cert_lookup`` connectors; a listing URL is SSRF-checked, fetched through the router
  by the connector whose ``url_patterns`` match it, normalized, and every cert its title and item
  specifics show becomes a sighting; attributed ones are verified, and a verified subject or year
  that disagrees with the title sets the sighting's ``mismatch`` (``subject``, ``year``).
* :func:`get_certificate` — one stored certificate with its sightings.
* :func:`record_sightings_from_listings` — the sightings in stored normalized sales, listings and
  auction lots (no network).
* :func:`verify_pending` — the cert-verify worker's job: every certificate still ``pending``
  (attributed sightings create them) is looked up; results and mismatches are stored.

A certificate's ``status`` is ``pending`` (seen, not yet answered), ``verified`` or
``not_found`` (the registry has no such cert for that grader — itself a fraud signal). A registry
that fails transiently leaves it ``pending`` for the next sweep. The listing entity is never
changed: a mismatch is a signal on the sighting, for a reviewer.

Example:
    >>> result = await lookup(engine, settings, "PSA 97038834")         # doctest: +SKIP
    >>> result.certificates[0].subject, result.certificates[0].status  # doctest: +SKIP
    ('JOSH ALLEN', 'verified')
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import structlog
from pydantic import BaseModel

from rareindex_connectors import (
    Connector,
    CrawlContext,
    FetchError,
    ParseError,
    PermanentFetchError,
    RawRecordInput,
    SafeResolver,
    UnsafeURL,
    currency_minor_unit,
)

from ..check import as_raw
from ..errors import LookupRefused
from ..fetching import FetchStack, build_fetch_stack
from ..registry import Registry, load_registry
from ..settings import Settings
from ..storage import Engine, cert_store
from ..storage.connector_rows import source_slug
from .extract import (
    GRADERS,
    CertMention,
    cert_key,
    extract_certs,
    parse_cert_number,
    parse_grader,
    title_mismatch,
)

__all__ = [
    "LISTING_KINDS",
    "CertLookupResult",
    "CertificateView",
    "SightingView",
    "VerifySummary",
    "get_certificate",
    "lookup",
    "record_sightings_from_listings",
    "verify_pending",
]

log = structlog.get_logger(__name__)

LISTING_KINDS = ("sale", "listing", "auction_lot")
"""Normalized record kinds whose titles are scanned for certs."""
CONCURRENCY = 4
"""Registry lookups in flight at once (the host gate still enforces the host's own limits)."""
_TARGET = re.compile(
    r"^(?:(?!cert)(?P<grader>[a-z]+)[\s:#]*)?"
    r"(?:cert(?:ification)?(?:\s*(?:no\.?|number))?[\s:#]*)?"
    r"(?P<number>#?\d[\d-]*)$",
    re.IGNORECASE,
)
_SPECIFIC_KEYS = frozenset({"certification number", "cert number", "certification #", "cert #"})
_PRICE_FIELDS = ("price", "price_realised", "hammer_price")


# --- views ----------------------------------------------------------------------------------


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
    """What one :func:`verify_pending` pass did."""

    linked: int = 0
    """Attributed sightings that had no certificate row yet (now pending)."""
    checked: int = 0
    verified: int = 0
    not_found: int = 0
    failed: int = 0
    """Lookups that failed transiently: still pending, retried next time."""
    mismatches: int = 0
    """Sightings of the certificates checked whose title disagrees with them."""


# --- helpers --------------------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(UTC)


def title_hash(title: str) -> str:
    """SHA-256 of the NFKC title: the same listing re-titled is a new sighting."""
    return hashlib.sha256(unicodedata.normalize("NFKC", title).strip().encode()).hexdigest()


def _money_text(amount: Decimal | None, currency: str | None) -> str | None:
    if amount is None:
        return None
    try:
        places = currency_minor_unit(currency) if currency else 2
    except (KeyError, ValueError):
        places = 2
    return format(amount.quantize(Decimal(1).scaleb(-places)), "f")


def _sighting_view(row: Mapping[str, Any]) -> SightingView:
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
        sightings=[_sighting_view(s) for s in sightings if s["certificate_id"] == row["id"]],
    )


def _views(conn: Any, rows: Sequence[Mapping[str, Any]]) -> list[CertificateView]:
    sightings = cert_store.find_sightings(conn, certificate_ids=[r["id"] for r in rows])
    order = {"verified": 0, "not_found": 1, "pending": 2}
    ranked = sorted(rows, key=lambda r: (order.get(r["status"], 3), r["grader"]))
    return [_certificate_view(r, sightings) for r in ranked]


def _cert_connectors(registry: Registry) -> list[Connector]:
    found = [c for c in registry if "cert_lookup" in c.meta.capabilities]
    if not found:
        raise LookupRefused(
            "no_connector",
            "no connector with the cert_lookup capability is installed under "
            "RI_CONNECTORS_DIR (the grading-registry connector verifies certs)",
        )
    return found


def _context(connector: Connector, stack: FetchStack) -> CrawlContext:
    return CrawlContext(
        connector_id=connector.meta.id, fetch=stack.router.fetcher(connector.meta.engines)
    )


# --- verification ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Verification:
    """Rows to save, and what happened to each requested ``(grader, key)``."""

    rows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    outcome: dict[tuple[str | None, str], str] = field(default_factory=dict)
    errors: dict[tuple[str | None, str], FetchError | ParseError] = field(default_factory=dict)


def _certificate_row(
    record: Mapping[str, Any], number: str, connector_id: str, url: str | None, when: datetime
) -> dict[str, Any] | None:
    grader = parse_grader(str(record.get("Grader") or ""))
    if grader not in GRADERS:
        return None
    year = str(record.get("Year") or "")
    grade = record.get("Grade") or record.get("CardGrade")
    return {
        "grader": grader,
        "cert_number": cert_key(str(record.get("CertNumber") or number)),
        "status": "verified",
        "grade": str(grade) if grade is not None else None,
        "qualifier": record.get("Qualifier"),
        "label_type": record.get("LabelType"),
        "subject": record.get("Subject"),
        "year": int(year) if year.isdigit() else None,
        "set_name": record.get("Set") or record.get("Brand"),
        "details": {"record": dict(record), "connector": connector_id, "url": url},
        "verified_at": when,
    }


def _not_found_row(grader: str, key: str, when: datetime, why: str) -> dict[str, Any]:
    return {"grader": grader, "cert_number": key, "status": "not_found"} | {
        "details": {"reason": why},
        "verified_at": when,
    }


async def _registry_record(
    number: str, connectors: Sequence[Connector], stack: FetchStack
) -> tuple[Mapping[str, Any], str, str | None] | None:
    """The first registry record for ``number``, with the connector and URL; None: unknown."""
    for connector in connectors:
        try:
            raws: list[RawRecordInput] = await connector.lookup(number, _context(connector, stack))
        except PermanentFetchError as exc:
            if exc.status in (404, 410):
                continue  # "no such cert" is an answer: ask the next registry
            raise
        for raw in raws:
            if (record := _cert_payload(raw)) is not None:
                return record, connector.meta.id, raw.url
    return None


def _cert_payload(raw: RawRecordInput) -> Mapping[str, Any] | None:
    """The registry's certificate record in a raw cert capture (``{"Cert": {...}}``)."""
    payload: Any = raw.payload
    record = payload.get("Cert") if isinstance(payload, dict) else None
    return record if isinstance(record, dict) else None


async def _verify(
    wanted: Iterable[tuple[str | None, str]], connectors: Sequence[Connector], stack: FetchStack
) -> _Verification:
    """Look up each ``(grader or None, number)``; the registry's own grader decides, never the
    number's length."""
    result = _Verification()
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(grader: str | None, number: str) -> None:
        key = cert_key(number)
        async with gate:
            try:
                found = await _registry_record(number, connectors, stack)
            except (FetchError, ParseError) as exc:
                log.warning("cert.verify_failed", grader=grader, error=type(exc).__name__)
                result.errors[grader, key] = exc
                result.outcome[grader, key] = "failed"
                return
        when = _now()
        row = _certificate_row(found[0], number, found[1], found[2], when) if found else None
        if row is not None:
            result.rows[row["grader"], row["cert_number"]] = row
        if grader is None:
            result.outcome[None, key] = "verified" if row else "not_found"
        elif row is not None and row["grader"] == grader:
            result.outcome[grader, key] = "verified"
        else:
            why = f"the registry has {key} as a {row['grader']} cert" if row else "unknown cert"
            result.rows.setdefault((grader, key), _not_found_row(grader, key, when, why))
            result.outcome[grader, key] = "not_found"

    await asyncio.gather(*(one(g, n) for g, n in dict.fromkeys(wanted)))
    return result


def _refresh_mismatches(
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
    return disagree


# --- sightings from listings ----------------------------------------------------------------


def _specifics(payload: Any, depth: int = 0) -> dict[str, str] | None:
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
    return next((s for v in values if (s := _specifics(v, depth + 1)) is not None), None)


def _stated(record: Mapping[str, Any]) -> dict[str, str] | None:
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
class _Seen:
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


def _record_seen(conn: Any, seen: Sequence[_Seen]) -> tuple[int, list[str], list[str]]:
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
    _refresh_mismatches(conn, cert_ids.values(), titles)
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
                mentions = extract_certs(str(record["title"]), _stated(record))
                if mentions:
                    seen.append(_Seen(row["source_id"], record, mentions, row["fetched_at"]))
            new += _record_seen(conn, seen)[0] if seen else 0


# --- the public calls -----------------------------------------------------------------------


def _parse_number(target: str) -> tuple[str | None, str]:
    """``"PSA 12345678"``, ``"cert# 12345678"``, ``"4321000-001"`` -> ``(grader or None,
    number)``; :class:`LookupRefused` (``bad_input``) for anything else."""
    match = _TARGET.match(target.strip())
    number = parse_cert_number(match["number"]) if match else None
    grader = parse_grader(match["grader"]) if match and match["grader"] else None
    if match is None or number is None or (match["grader"] and grader is None):
        raise LookupRefused(
            "bad_input",
            f"{target.strip()[:80]!r} is neither a cert number (7-10 digits, optionally -NNN, "
            f"optionally after a grader: {', '.join(GRADERS)}) nor an http(s) listing URL",
        )
    return grader, number


async def _check_url(url: str, stack: FetchStack, settings: Settings) -> None:
    """The SSRF policy on the URL a caller handed in, before any connector sees it."""
    engine = stack.router.engines.get("api")
    resolver = getattr(engine, "resolver", None)
    if not isinstance(resolver, SafeResolver):
        resolver = SafeResolver(static=settings.connect_to)
    host = (urlsplit(url).hostname or "").lower()
    policy = stack.policies.for_host(host)
    try:
        await resolver.resolve(url, allow_private=policy.allow_private_network)
    except UnsafeURL as exc:
        raise LookupRefused("unsafe_url", f"refused {url[:200]}: {exc}") from None


def _normalized(
    connector: Connector, raws: Sequence[RawRecordInput]
) -> list[tuple[RawRecordInput, dict[str, Any]]]:
    """Each listing-like record the connector makes of ``raws``, with the raw it came from."""
    records = []
    for index, raw in enumerate(raws):
        for record in connector.normalize(as_raw(connector, raw, index)):
            if record.kind in LISTING_KINDS:
                records.append((raw, record.model_dump(mode="json")))
    return records


async def _lookup_url(
    engine: Engine, settings: Settings, url: str, registry: Registry, stack: FetchStack
) -> CertLookupResult:
    await _check_url(url, stack, settings)
    connector = next((c for c in registry if c.meta.matches_url(url)), None)
    if connector is None:
        handled = ", ".join(c.meta.id for c in registry if c.meta.url_patterns) or "none"
        raise LookupRefused(
            "no_connector",
            f"no connector looks up {urlsplit(url).hostname} URLs (connectors with URL "
            f"lookups: {handled})",
        )
    try:
        raws = await connector.lookup(url, _context(connector, stack))
    except UnsafeURL as exc:
        raise LookupRefused("unsafe_url", f"refused {url[:200]}: {exc}") from None
    except PermanentFetchError as exc:
        if exc.status in (404, 410):
            raise LookupRefused("not_found", f"{url[:200]} is gone ({exc.status})") from None
        raise
    if not raws:
        raise LookupRefused("not_found", f"{connector.meta.id} found no listing at {url[:200]}")
    certs = [c for r in raws if (c := _cert_payload(r)) is not None]
    if certs and "cert_lookup" in connector.meta.capabilities:  # a registry's own cert page
        number = str(certs[0].get("CertNumber") or "")
        return await _lookup_number(engine, url, None, number, registry, stack)
    source_id = source_slug(connector.meta.source)
    seen = []
    for raw, record in _normalized(connector, raws):
        specifics = _specifics(raw.payload) or _stated(record)
        mentions = extract_certs(str(record.get("title") or ""), specifics)
        seen.append(_Seen(source_id, record, mentions, raw.fetched_at, url))
    wanted = [
        (m.grader, m.number) for s in seen for m in s.mentions if m.attribution == "attributed"
    ]
    verifiers = [c for c in registry if "cert_lookup" in c.meta.capabilities]
    verification = await _verify(wanted, verifiers, stack) if wanted and verifiers else None
    with engine.begin() as conn:
        cert_store.ensure_source(conn, source_id, connector.meta.source)
        if verification is not None:
            cert_store.save_certificates(conn, list(verification.rows.values()))
        _, sighting_ids, cert_ids = _record_seen(conn, seen)
        extra = [cert_store.certificate_id(*k) for k in (verification.rows if verification else {})]
        certificates = _views(conn, cert_store.find_certificates(conn, ids=[*cert_ids, *extra]))
        sightings = [_sighting_view(s) for s in cert_store.find_sightings(conn, ids=sighting_ids)]
    ambiguous = [m.number for s in seen for m in s.mentions if m.attribution == "ambiguous"]
    return CertLookupResult(
        target=url, certificates=certificates, sightings=sightings, ambiguous=ambiguous
    )


async def _lookup_number(
    engine: Engine,
    target: str,
    grader: str | None,
    number: str,
    registry: Registry,
    stack: FetchStack,
) -> CertLookupResult:
    key = cert_key(number)
    verification = await _verify([(grader, number)], _cert_connectors(registry), stack)
    when = _now()
    with engine.begin() as conn:
        stored = cert_store.find_certificates(conn, number=key)
        rows = dict(verification.rows)
        if verification.outcome.get((grader, key)) == "not_found" and not any(
            r["status"] == "verified" for r in rows.values()
        ):
            # no registry knows the number at all: whatever was pending for it is not found
            for cert in stored:
                if cert["status"] == "pending":
                    rows[cert["grader"], key] = _not_found_row(cert["grader"], key, when, "unknown")
        cert_store.save_certificates(conn, list(rows.values()))
        _refresh_mismatches(conn, [cert_store.certificate_id(*k) for k in rows])
        views = _views(conn, cert_store.find_certificates(conn, number=key))
        sightings = cert_store.find_sightings(conn, number=key)
    error = verification.errors.get((grader, key))
    if not views and not sightings:
        if error is not None:
            raise error
        raise LookupRefused("not_found", f"no grader registry knows cert {number}")
    return CertLookupResult(
        target=target,
        certificates=views,
        sightings=[_sighting_view(s) for s in sightings],
        ambiguous=[],
    )


async def lookup(
    engine: Engine,
    settings: Settings,
    target: str,
    *,
    registry: Registry | None = None,
    stack: FetchStack | None = None,
) -> CertLookupResult:
    """Verify a cert number, or scan a listing URL for certs (module docstring).

    ``registry`` defaults to the connectors under ``settings.connectors_dir``; ``stack`` to a fresh
    fetch stack (closed afterwards; a given one is left open).

    Raises:
        LookupRefused: ``unsafe_url`` (SSRF policy: nothing is fetched or stored),
            ``no_connector``, ``bad_input`` or ``not_found``.
        FetchError: the source or the registry failed (a bare number could not be verified).
        ParseError: the connector could not read the listing page.
    """
    target = target.strip()
    registry = registry if registry is not None else load_registry(settings.connectors_dir)
    own = stack is None
    stack = stack if stack is not None else build_fetch_stack(settings)
    try:
        if "://" in target:
            return await _lookup_url(engine, settings, target, registry, stack)
        grader, number = _parse_number(target)
        return await _lookup_number(engine, target, grader, number, registry, stack)
    finally:
        if own:
            await stack.aclose()


def get_certificate(engine: Engine, grader: str, number: str) -> CertificateView | None:
    """The stored certificate ``(grader, number)`` with its sightings; None when never seen.

    ``grader`` is a token or name (``psa``, ``Beckett``); ``number`` may carry ``#`` or a dash.

    Raises:
        LookupRefused: ``bad_input`` for an unknown grader or a number that is no cert number.
    """
    canonical = parse_grader(grader)
    cert = parse_cert_number(number)
    if canonical is None or cert is None:
        raise LookupRefused(
            "bad_input",
            f"{grader[:20]!r} {number[:20]!r} is not a grader ({', '.join(GRADERS)}) and a cert "
            "number (7-10 digits, optionally -NNN)",
        )
    with engine.connect() as conn:
        rows = cert_store.find_certificates(conn, number=cert_key(cert), grader=canonical)
        return _views(conn, rows)[0] if rows else None


async def verify_pending(
    engine: Engine,
    settings: Settings,
    registry: Registry,
    *,
    limit: int = 200,
    stack: FetchStack | None = None,
) -> VerifySummary:
    """Verify up to ``limit`` pending certificates through the ``cert_lookup`` connectors.

    Attributed sightings without a certificate row get one first. Verified and not-found answers
    are stored with the time of the answer; a transient failure leaves the certificate pending.
    Then the mismatch signal of every sighting of the checked certificates is refreshed.

    Raises:
        LookupRefused: ``no_connector`` when no ``cert_lookup`` connector is installed.
    """
    summary = VerifySummary()
    with engine.begin() as conn:
        summary.linked = cert_store.link_attributed(conn)
        pending = cert_store.pending_certificates(conn, limit=limit)
    if not pending:
        return summary
    connectors = _cert_connectors(registry)
    own = stack is None
    stack = stack if stack is not None else build_fetch_stack(settings)
    try:
        wanted = [(p["grader"], p["cert_number"]) for p in pending]
        verification = await _verify(wanted, connectors, stack)
    finally:
        if own:
            await stack.aclose()
    outcomes = [verification.outcome[g, n] for g, n in wanted]
    summary.checked = len(wanted)
    summary.verified = outcomes.count("verified")
    summary.not_found = outcomes.count("not_found")
    summary.failed = outcomes.count("failed")
    with engine.begin() as conn:
        cert_store.save_certificates(conn, list(verification.rows.values()))
        summary.mismatches = _refresh_mismatches(conn, [p["id"] for p in pending])
    log.info(
        "cert.verified",
        checked=summary.checked,
        verified=summary.verified,
        not_found=summary.not_found,
        failed=summary.failed,
        mismatches=summary.mismatches,
    )
    return summary
