"""Verification: asking the grading registries about cert numbers, and the cert-verify job.

Numbers are looked up through the connectors with the ``cert_lookup`` capability
(:func:`cert_connectors`), a few at a time; the registry's own grader decides whose cert it is,
never the number's length. A 404/410 from one registry is an answer ("no such cert"), so the next
one is asked.

* :func:`verify_numbers` — look up ``(grader or None, number)`` pairs: the certificate rows to
  save and what happened to each.
* :func:`verify_pending` — the cert-verify worker's job: every certificate still ``pending``
  (attributed sightings create them) is looked up; results and mismatches are stored.

A registry that fails transiently leaves a certificate ``pending`` for the next sweep.

Example:
    >>> summary = await verify_pending(engine, settings, registry)     # doctest: +SKIP
    >>> summary.checked, summary.verified, summary.failed              # doctest: +SKIP
    (3, 2, 0)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import structlog

from rareindex_connectors import Connector, CrawlContext, scorer_of
from rareindex_connectors.errors import FetchError, ParseError, PermanentFetchError
from rareindex_connectors.records import RawRecordInput

from ..errors import LookupRefused
from ..fetching import FetchStack, build_fetch_stack
from ..registry import Registry
from ..settings import Settings
from ..storage import Engine, cert_store
from .extract import GRADERS, cert_key, parse_grader
from .sightings import refresh_mismatches
from .views import VerifySummary

__all__ = [
    "CONCURRENCY",
    "Verification",
    "cert_connectors",
    "cert_payload",
    "crawl_context",
    "not_found_row",
    "verify_numbers",
    "verify_pending",
]

log = structlog.get_logger(__name__)

CONCURRENCY = 4
"""Registry lookups in flight at once (the host gate still enforces the host's own limits)."""


def _now() -> datetime:
    return datetime.now(UTC)


def cert_connectors(registry: Registry) -> list[Connector]:
    """The ``cert_lookup`` connectors; :class:`LookupRefused` (``no_connector``) when none."""
    found = [c for c in registry if "cert_lookup" in c.meta.capabilities]
    if not found:
        raise LookupRefused(
            "no_connector",
            "no connector with the cert_lookup capability is installed under "
            "RI_CONNECTORS_DIR (the grading-registry connector verifies certs)",
        )
    return found


def crawl_context(connector: Connector, stack: FetchStack) -> CrawlContext:
    """The context a connector's lookup fetches through: the router, with its engines."""
    engines = connector.meta.engines
    return CrawlContext(
        connector_id=connector.meta.id,
        fetch=stack.router.fetcher(engines, scorer=scorer_of(connector)),
        robots_source=partial(stack.router.robots_rules, engines=engines),
    )


@dataclass(slots=True)
class Verification:
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


def not_found_row(grader: str, key: str, when: datetime, why: str) -> dict[str, Any]:
    """A ``not_found`` certificate row answered at ``when``, with the reason."""
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
            raws: list[RawRecordInput] = await connector.lookup(
                number, crawl_context(connector, stack)
            )
        except PermanentFetchError as exc:
            if exc.status in (404, 410):
                continue  # "no such cert" is an answer: ask the next registry
            raise
        for raw in raws:
            if (record := cert_payload(raw)) is not None:
                return record, connector.meta.id, raw.url
    return None


def cert_payload(raw: RawRecordInput) -> Mapping[str, Any] | None:
    """The registry's certificate record in a raw cert capture (``{"Cert": {...}}``)."""
    payload: Any = raw.payload
    record = payload.get("Cert") if isinstance(payload, dict) else None
    return record if isinstance(record, dict) else None


async def verify_numbers(
    wanted: Iterable[tuple[str | None, str]], connectors: Sequence[Connector], stack: FetchStack
) -> Verification:
    """Look up each ``(grader or None, number)``; the registry's own grader decides, never the
    number's length."""
    result = Verification()
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
            result.rows.setdefault((grader, key), not_found_row(grader, key, when, why))
            result.outcome[grader, key] = "not_found"

    await asyncio.gather(*(one(g, n) for g, n in dict.fromkeys(wanted)))
    return result


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
    connectors = cert_connectors(registry)
    own = stack is None
    stack = stack if stack is not None else build_fetch_stack(settings)
    try:
        wanted = [(p["grader"], p["cert_number"]) for p in pending]
        verification = await verify_numbers(wanted, connectors, stack)
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
        summary.mismatches = refresh_mismatches(conn, [p["id"] for p in pending])
    log.info(
        "cert.verified",
        checked=summary.checked,
        verified=summary.verified,
        not_found=summary.not_found,
        failed=summary.failed,
        mismatches=summary.mismatches,
    )
    return summary
