"""Check a connector against its live source: one page, no database.

:func:`check_connector` fetches the connector's first page through the router, then runs its
``normalize()`` on each capture and reports what would be stored and what it would become —
parse failures included, with their reasons. ``rareindex connectors check ID`` prints it;
``tests/contract/recording.py`` uses the same capture to record fixtures.

Example:
    >>> report = asyncio.run(check_connector(connector, settings))   # doctest: +SKIP
    >>> report.ok, len(report.raws)                                 # doctest: +SKIP
    (True, 30)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import structlog

from rareindex_connectors import Connector, CrawlContext, CrawlOptions, scorer_of
from rareindex_connectors.errors import FetchError, ParseError
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput, content_hash

from .fetching import build_fetch_stack
from .settings import Settings

__all__ = ["CheckReport", "as_raw", "capture_first_page", "check_connector"]

MAX_RECORDS = 25


@dataclass(slots=True)
class CheckReport:
    """What one page of a connector yields and normalizes to."""

    connector_id: str
    raws: list[RawRecord] = field(default_factory=list)
    normalized: list[NormalizedRecord] = field(default_factory=list)
    failures: list[tuple[str, str, str | None]] = field(default_factory=list)  # raw, reason, field
    fetch_error: str | None = None
    engines: dict[str, object] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """What the connector logged as a warning while it fetched (``store.currency_disagreed``…)."""

    @property
    def ok(self) -> bool:
        """Fetched something, and normalized at least one record."""
        return self.fetch_error is None and bool(self.raws) and bool(self.normalized)

    def kinds(self) -> Counter[str]:
        return Counter(record.kind for record in self.normalized)


def as_raw(connector: Connector, record: RawRecordInput, index: int) -> RawRecord:
    """The stored shape of a capture (positional ids, so recordings are stable)."""
    return RawRecord(
        **record.model_dump(),
        id=f"raw_{index:06d}",
        connector_id=connector.meta.id,
        content_hash=content_hash(record.payload, record.snapshot),
        connector_version=connector.version,
        parser_version=connector.parser_version,
    )


@dataclass(slots=True)
class _KeptWarnings:
    """The connector's logger during a check: logs as usual, and keeps each warning as text."""

    log: Any
    kept: list[str]

    def warning(self, event: str, **values: Any) -> None:
        details = " ".join(f"{key}={value}" for key, value in values.items())
        self.kept.append(f"{event} {details}".strip())
        self.log.warning(event, **values)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.log, name)


async def capture_first_page(
    connector: Connector,
    settings: Settings,
    *,
    max_records: int = MAX_RECORDS,
    warnings: list[str] | None = None,
) -> tuple[list[RawRecordInput], dict[str, object]]:
    """What the connector yields up to its first cursor (one page), and the engine stats;
    ``warnings`` receives what the connector logs as a warning meanwhile."""
    stack = build_fetch_stack(settings)
    log = structlog.get_logger("rareindex_connectors").bind(connector=connector.meta.id)
    ctx = CrawlContext(
        connector_id=connector.meta.id,
        fetch=stack.router.fetcher(connector.meta.engines, scorer=scorer_of(connector)),
        robots_source=partial(stack.router.robots_rules, engines=connector.meta.engines),
        options=CrawlOptions(max_pages=1),
        log=log if warnings is None else _KeptWarnings(log, warnings),
    )
    captured: list[RawRecordInput] = []
    crawl = connector.crawl(ctx)
    try:
        async for record in crawl:
            captured.append(record)
            if ctx.cursor is not None or len(captured) >= max_records:
                break
    finally:
        close = getattr(crawl, "aclose", None)
        if close is not None:
            await close()
        await stack.aclose()
    stats: dict[str, object] = {name: s.as_dict() for name, s in stack.router.stats.items()}
    return captured, stats


async def check_connector(connector: Connector, settings: Settings) -> CheckReport:
    """Fetch one page and normalize it; nothing is written anywhere."""
    report = CheckReport(connector.meta.id)
    try:
        captured, report.engines = await capture_first_page(
            connector, settings, warnings=report.warnings
        )
    except FetchError as exc:
        report.fetch_error = f"{type(exc).__name__}: {exc}"
        return report
    report.raws = [as_raw(connector, record, i) for i, record in enumerate(captured)]
    for raw in report.raws:
        try:
            report.normalized.extend(connector.normalize(raw))
        except ParseError as exc:
            report.failures.append((raw.id, exc.reason.value, exc.field))
    return report
