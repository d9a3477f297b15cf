"""Looking up certificates: a cert number or a listing URL, and one stored certificate.

* :func:`lookup` — a cert number (``12345678``, ``PSA 12345678``, ``4321000-001``) is verified
  through the ``cert_lookup`` connectors; a listing URL is SSRF-checked, fetched through the router
  by the connector whose ``url_patterns`` match it, normalized, and every cert its title and item
  specifics show becomes a sighting; attributed ones are verified, and a verified subject or year
  that disagrees with the title sets the sighting's ``mismatch`` (``subject``, ``year``).
* :func:`get_certificate` — one stored certificate with its sightings.

A URL the caller hands in passes the SSRF policy (the ``api`` engine's resolver, or one built from
``settings.connect_to``) before any connector sees it; a refused URL fetches and stores nothing.

Example:
    >>> result = await lookup(engine, settings, "PSA 97038834")         # doctest: +SKIP
    >>> result.certificates[0].subject, result.certificates[0].status  # doctest: +SKIP
    ('JOSH ALLEN', 'verified')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from rareindex_connectors import Connector
from rareindex_connectors.errors import PermanentFetchError, UnsafeURL
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import SafeResolver

from ..check import as_raw
from ..errors import LookupRefused
from ..fetching import FetchStack, build_fetch_stack
from ..registry import Registry, load_registry
from ..settings import Settings
from ..storage import Engine, cert_store
from ..storage.connector_rows import source_slug
from .extract import GRADERS, cert_key, extract_certs, parse_cert_number, parse_grader
from .sightings import (
    LISTING_KINDS,
    Seen,
    item_specifics,
    record_seen,
    refresh_mismatches,
    stated_specifics,
)
from .verify import cert_connectors, cert_payload, crawl_context, not_found_row, verify_numbers
from .views import CertificateView, CertLookupResult, certificate_views, sighting_view

__all__ = ["get_certificate", "lookup"]

_TARGET = re.compile(
    r"^(?:(?!cert)(?P<grader>[a-z]+)[\s:#]*)?"
    r"(?:cert(?:ification)?(?:\s*(?:no\.?|number))?[\s:#]*)?"
    r"(?P<number>#?\d[\d-]*)$",
    re.IGNORECASE,
)


def _now() -> datetime:
    return datetime.now(UTC)


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
        raws = await connector.lookup(url, crawl_context(connector, stack))
    except UnsafeURL as exc:
        raise LookupRefused("unsafe_url", f"refused {url[:200]}: {exc}") from None
    except PermanentFetchError as exc:
        if exc.status in (404, 410):
            raise LookupRefused("not_found", f"{url[:200]} is gone ({exc.status})") from None
        raise
    if not raws:
        raise LookupRefused("not_found", f"{connector.meta.id} found no listing at {url[:200]}")
    certs = [c for r in raws if (c := cert_payload(r)) is not None]
    if certs and "cert_lookup" in connector.meta.capabilities:  # a registry's own cert page
        number = str(certs[0].get("CertNumber") or "")
        return await _lookup_number(engine, url, None, number, registry, stack)
    source_id = source_slug(connector.meta.source)
    seen = []
    for raw, record in _normalized(connector, raws):
        specifics = item_specifics(raw.payload) or stated_specifics(record)
        mentions = extract_certs(str(record.get("title") or ""), specifics)
        seen.append(Seen(source_id, record, mentions, raw.fetched_at, url))
    wanted = [
        (m.grader, m.number) for s in seen for m in s.mentions if m.attribution == "attributed"
    ]
    verifiers = [c for c in registry if "cert_lookup" in c.meta.capabilities]
    verification = await verify_numbers(wanted, verifiers, stack) if wanted and verifiers else None
    with engine.begin() as conn:
        cert_store.ensure_source(conn, source_id, connector.meta.source)
        if verification is not None:
            cert_store.save_certificates(conn, list(verification.rows.values()))
        _, sighting_ids, cert_ids = record_seen(conn, seen)
        extra = [cert_store.certificate_id(*k) for k in (verification.rows if verification else {})]
        certificates = certificate_views(
            conn, cert_store.find_certificates(conn, ids=[*cert_ids, *extra])
        )
        sightings = [sighting_view(s) for s in cert_store.find_sightings(conn, ids=sighting_ids)]
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
    verification = await verify_numbers([(grader, number)], cert_connectors(registry), stack)
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
                    rows[cert["grader"], key] = not_found_row(cert["grader"], key, when, "unknown")
        cert_store.save_certificates(conn, list(rows.values()))
        refresh_mismatches(conn, [cert_store.certificate_id(*k) for k in rows])
        views = certificate_views(conn, cert_store.find_certificates(conn, number=key))
        sightings = cert_store.find_sightings(conn, number=key)
    error = verification.errors.get((grader, key))
    if not views and not sightings:
        if error is not None:
            raise error
        raise LookupRefused("not_found", f"no grader registry knows cert {number}")
    return CertLookupResult(
        target=target,
        certificates=views,
        sightings=[sighting_view(s) for s in sightings],
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
        return certificate_views(conn, rows)[0] if rows else None
