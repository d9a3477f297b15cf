"""Crawl runs: drive a connector's ``crawl()`` through the router into ``raw_records``.

:func:`run_connector` is the crawler stage. It batches the records a connector yields and
commits each batch *together with the cursor the connector set after them* (one transaction,
fenced by the run's lease), at a page boundary once a batch holds ``batch_size`` records or
``commit_every_s`` has passed — so a crash re-fetches at most that much and never skips a page,
and a fast source pays one commit per few pages, not one per page. Runs are
time-boxed (``RI_MAX_RUN_MINUTES``) and resume from their cursor; paid-engine credits go to
``costs`` per connector and day; the run row keeps pages, records, dupes, engine stats, cost,
cursor, outcome and a failure reason from a closed vocabulary.

Example:
    >>> run = run_connector(connector, db=engine, stack=stack, store=store)  # doctest: +SKIP
    >>> summary = asyncio.run(run)                                          # doctest: +SKIP
    >>> summary.records, summary.dupes                                      # doctest: +SKIP
    (600, 0)
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import structlog

from rareindex_connectors import (
    Connector,
    CrawlContext,
    CrawlMode,
    CrawlOptions,
    Progress,
    refresh_interval,
    scorer_of,
)
from rareindex_connectors.errors import (
    Blocked,
    BudgetExhausted,
    CircuitOpen,
    DNSError,
    FetchError,
    ParseError,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    RobotsDisallowed,
    RobotsUnavailable,
    TLSError,
    TransientFetchError,
    TruncatedBody,
    UndecodableBody,
    UnsafeURL,
)
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import CostEntry

from .budget import UrlBudget
from .fetching import FetchStack, build_fetch_stack
from .heap import frozen_heap
from .lease_watch import LeaseWatch, keep_lease
from .registry import load_registry
from .settings import Settings
from .storage import BlobStore, Engine, RawRecordStore, is_database_outage
from .storage.backfills import load_backfill, record_slice
from .storage.crawl_state import UrlState
from .storage.raw_store import prepare_batch
from .storage.runs import (
    BatchResult,
    LeaseLost,
    RunNotClaimable,
    commit_batch,
    finish_run,
    load_run,
    start_run,
)

__all__ = ["RunSummary", "failure_reason", "run_connector", "run_queued"]

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class RunSummary:
    """What one run did, as the CLI and the demo print it."""

    run_id: str
    connector_id: str
    mode: str
    status: str = "running"
    outcome: str = ""
    failure_reason: str | None = None
    error: str | None = None
    pages: int = 0
    records: int = 0
    dupes: int = 0
    blocked: int = 0
    unchanged: int = 0
    """Conditional fetches answered 304: unchanged, nothing to store."""
    skipped: int = 0
    """Detail pages not fetched at all: the budget store said they were not due."""
    credits: Decimal = Decimal(0)
    engines: dict[str, Any] = field(default_factory=dict)
    elapsed_s: float = 0.0
    raw_ids: list[str] = field(default_factory=list)


def failure_reason(exc: BaseException) -> str:
    """The closed-vocabulary reason for an exception that ended a run."""
    if isinstance(exc, FetchError) and exc.indeterminate:
        return "indeterminate"  # sent, no answer: maybe done and billed; not a plain transient
    if is_database_outage(exc):
        return "database"  # ours, not the source's: the scheduler retries it soon
    table: tuple[tuple[type[BaseException], str], ...] = (
        (LeaseLost, "lease_lost"),
        (Blocked, "blocked"),
        (CircuitOpen, "circuit_open"),
        (BudgetExhausted, "budget_exhausted"),
        (RateLimited, "rate_limited"),
        (UnsafeURL, "unsafe_url"),
        (DNSError, "dns_error"),
        (TLSError, "tls_error"),
        (TruncatedBody, "truncated_body"),
        (UndecodableBody, "undecodable_body"),
        (RobotsDisallowed, "robots_disallowed"),
        (RobotsUnavailable, "robots_unavailable"),
        (TransientFetchError, "transient"),
        (PermanentFetchError, "permanent"),
        (FetchError, "transient"),
        (ParseError, "parse_error"),
        (PolicyError, "policy"),
    )
    return next((reason for kind, reason in table if isinstance(exc, kind)), "crashed")


class _Batch:
    """Records waiting for their cursor, and the paid-engine charges made meanwhile."""

    def __init__(self) -> None:
        self.records: list[RawRecordInput] = []
        self.credits: list[CostEntry] = []
        self.pages_seen = 0
        self.states: list[UrlState] = []  # budget observations the batch's cursor covers
        self.reported_pages: int | None = None  # pages the connector reported (None: it does not)

    def charge(self, entry: CostEntry) -> None:
        self.credits.append(entry)

    def take(self) -> _Batch:
        """What waits now, as a batch of its own to commit; this one starts empty (the router's
        cost callback stays bound to it)."""
        taken = _Batch()
        taken.records, taken.credits, taken.states = self.records, self.credits, self.states
        taken.reported_pages = self.reported_pages
        self.records, self.credits, self.states = [], [], []
        if self.reported_pages is not None:
            self.reported_pages = 0  # a reporter: later batches count from zero, not fetches
        return taken

    def put_back(self, failed: _Batch) -> None:
        """A commit that failed: its records, charges and observations wait again, before the
        ones that came after them (the next commit's cursor covers them all)."""
        self.records[:0] = failed.records
        self.credits[:0] = failed.credits
        self.states[:0] = failed.states
        if failed.reported_pages is not None:
            self.reported_pages = (self.reported_pages or 0) + failed.reported_pages


@dataclass(slots=True)
class _InFlight:
    """The one commit on the writer thread: its batch, the fetches it counts, its outcome."""

    batch: _Batch
    pages: int
    done: asyncio.Future[BatchResult]


def _retry_not_before(exc: BaseException, stack: FetchStack, connector_id: str) -> datetime | None:
    """When a run ended by a host's ``Retry-After`` (a 429, or a 503 that said when) may be
    followed by the next: that time, cut to the host policy's ``reschedule_max_ms``."""
    if not isinstance(exc, RateLimited) or exc.retry_after is None:
        return None
    cap = stack.policies.for_host(exc.host or "").reschedule_max_ms / 1000
    wait = min(exc.retry_after, cap)
    if exc.retry_after > cap:
        log.warning(
            "crawl.retry_after_capped",
            connector=connector_id,
            host=exc.host,
            retry_after_s=int(exc.retry_after),
            cap_s=int(cap),
        )
    return datetime.now(UTC) + timedelta(seconds=wait)


async def run_connector(
    connector: Connector,
    *,
    db: Engine,
    stack: FetchStack,
    store: RawRecordStore,
    mode: CrawlMode = "incremental",
    max_pages: int | None = None,
    since: datetime | None = None,
    backfill_id: str | None = None,
    run_id: str | None = None,
    max_run_minutes: float = 40,
    batch_size: int = 500,
    commit_every_s: float = 1.0,
    lease_seconds: float = 300.0,
    on_progress: Callable[[RunSummary, Progress | None], None] | None = None,
) -> RunSummary:
    """Run ``connector`` once (incremental, or one backfill slice) and record everything.

    ``max_pages`` is the connector's page budget (``ctx.options.max_pages``); one that ignores it
    is stopped at its first cursor move past the budget. For a backfill slice, the connector's
    ``total_pages`` and ``reached_date`` progress reach the campaign with each commit. A commit
    happens at a page boundary once ``batch_size`` records wait or ``commit_every_s`` passed.
    """
    meta = connector.meta
    run = start_run(
        db,
        connector_id=meta.id,
        mode=mode,
        backfill_id=backfill_id,
        run_id=run_id,
        lease_seconds=lease_seconds,
    )
    summary = RunSummary(run.id, meta.id, mode)
    batch = _Batch()
    session = stack.router.session(meta.engines, scorer=scorer_of(connector), on_cost=batch.charge)
    deadline = datetime.now(UTC) + timedelta(minutes=max_run_minutes)
    budget = UrlBudget(
        db, meta.id, initial_interval_s=refresh_interval(meta.refresh_class).total_seconds()
    )
    reported: dict[str, Any] = {}  # the latest total_pages / reached_date, for the backfill row

    def report(progress: Progress) -> None:
        if progress.pages:
            batch.reported_pages = (batch.reported_pages or 0) + progress.pages
        if progress.total_pages is not None:
            reported["total_pages"] = progress.total_pages
        if progress.reached_date is not None:
            reported["reached_date"] = progress.reached_date
        if on_progress:
            on_progress(summary, progress)

    watch = LeaseWatch(db, run)
    ctx = CrawlContext(
        connector_id=meta.id,
        # a run that lost its lease sends nothing more; conditional fetches use stored validators
        fetch=session.fetcher(before=lambda _url: watch.check(), validators=budget),
        due=budget.should_fetch,
        known=lambda url: budget.state(url) is not None,
        on_cursor=lambda: batch.states.extend(budget.take_pending()),
        robots_source=session.robots_rules,
        options=CrawlOptions(mode=mode, since=since, max_pages=max_pages, deadline=deadline),
        cursor=run.cursor_start,
        on_progress=report,
        log=log.bind(connector=meta.id, run=run.id),
    )
    seen_cursor = run.cursor_start
    next_commit = time.monotonic() + commit_every_s
    started = time.monotonic()

    def pages_fetched() -> int:
        return sum(s.success for s in session.stats.values())

    # The writer: one thread beside the fetch loop runs each batch's commit (its own transaction,
    # records and cursor together, as before) while the loop fetches and parses the next pages.
    # At most one commit is in flight and the next starts only once it has ended, so commits
    # keep their order and a cursor never lands before the records it covers.
    # An in-memory SQLite database is one connection per thread: its commits stay inline.
    loop = asyncio.get_running_loop()
    writer = (
        None
        if db.dialect.name == "sqlite" and db.url.database in (None, "", ":memory:")
        else ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"crawl-writer-{run.id}")
    )
    in_flight: _InFlight | None = None

    def submit(job: Callable[[], BatchResult]) -> asyncio.Future[BatchResult]:
        if writer is not None:
            return loop.run_in_executor(writer, job)
        done: asyncio.Future[BatchResult] = loop.create_future()
        try:
            done.set_result(job())
        except Exception as exc:
            done.set_exception(exc)
        return done

    async def settle() -> None:
        """Wait for the commit in flight, and count it; a failed one raises here, its batch put
        back to wait for the next commit (LeaseLost: the run stops, committing nothing more)."""
        nonlocal in_flight
        if in_flight is None:
            return
        done, in_flight = in_flight, None
        try:
            result = await asyncio.shield(done.done)
        except BaseException:
            batch.put_back(done.batch)
            batch.pages_seen -= done.pages
            raise
        watch.held()  # the fenced commit went through: the lease is ours
        summary.pages += done.pages
        summary.records += result.records
        summary.dupes += result.dupes
        summary.raw_ids.extend(result.raw_ids)
        if on_progress:
            on_progress(summary, None)

    async def flush(cursor: dict[str, Any] | None, *, wait: bool = False) -> None:
        """Commit what waits with ``cursor`` on the writer (after the commit before it);
        ``wait``: and wait for it."""
        nonlocal next_commit, in_flight
        await settle()
        pages = pages_fetched() - batch.pages_seen
        # JSON, hashes and ids here (before the batch is taken: a failure leaves it waiting),
        # so the writer holds the interpreter lock only to write
        prepared = prepare_batch(batch.records)
        batch.pages_seen += pages
        taken = batch.take()
        job = functools.partial(
            commit_batch,
            db,
            run,
            store,
            prepared,
            connector_version=connector.version,
            parser_version=connector.parser_version,
            cursor=cursor,
            pages=pages,
            backfill_pages=taken.reported_pages,
            credits=taken.credits,
            url_states=taken.states,
            progress=dict(reported),
        )
        in_flight = _InFlight(taken, pages, submit(job))
        next_commit = time.monotonic() + commit_every_s
        if wait:
            await settle()

    outcome, status, reason, error = "complete", "succeeded", None, None
    retry_not_before: datetime | None = None
    lease_lost = watch.lost
    heartbeat = asyncio.create_task(keep_lease(db, run, watch))
    crawl = connector.crawl(ctx)
    # The long-lived heap is left out of the collector's passes while the pages stream in
    # (rareindex.heap): the records of a batch live long enough to trigger full passes.
    with frozen_heap():
        try:
            async for record in crawl:
                if lease_lost:  # another worker took the run over: stop, commit nothing more
                    raise lease_lost[0]
                if in_flight is not None and in_flight.done.done():
                    await settle()  # a failed commit stops the run now, not at the next commit
                # A cursor move is a page boundary: it covers every record before this one.
                if ctx.cursor != seen_cursor:
                    seen_cursor = ctx.cursor
                    if max_pages is not None and pages_fetched() > max_pages:
                        # Past the budget: this record's page is re-fetched by the next run (the
                        # pages before it are committed below, with the cursor that covers them).
                        outcome = "max_pages"
                        break
                    if len(batch.records) >= batch_size or time.monotonic() >= next_commit:
                        await flush(ctx.cursor)
                batch.records.append(record)
                if len(batch.records) >= 2 * batch_size:
                    # A page larger than a batch: commit what it yielded so far with the cursor
                    # before it (those records are re-fetched as dupes after a crash).
                    await flush(ctx.cursor)
                if datetime.now(UTC) >= deadline:
                    outcome = "time_boxed"
                    break
            if outcome == "complete":  # the crawl ended: every fetch is covered by its last cursor
                batch.states.extend(budget.take_pending())
            await flush(ctx.cursor, wait=True)
        except LeaseLost as exc:
            status, outcome, reason, error = "failed", "failed", "lease_lost", str(exc)
        except Exception as exc:  # the run ends; what was committed stays, the rest is re-fetched
            reason = failure_reason(exc)
            status, outcome, error = "failed", "failed", f"{type(exc).__name__}: {exc}"[:1000]
            retry_not_before = _retry_not_before(exc, stack, meta.id)
            try:
                # Every record yielded before the failure is in the batch (a failed commit's put
                # back too), and the connector sets a cursor only after yielding what it covers:
                # committing both together is exact.
                await flush(ctx.cursor, wait=True)
            except LeaseLost:
                reason = "lease_lost"
        finally:
            if in_flight is not None:  # a cancelled run: its commit ends (or fails) before the run
                await asyncio.wait([in_flight.done])
            if writer is not None:
                writer.shutdown(wait=True)
            heartbeat.cancel()
            # It ends before the run does (a cancel of ours propagates).
            await asyncio.wait([heartbeat])
            close = getattr(crawl, "aclose", None)
            if close is not None:
                await close()
    summary.engines = {name: stats.as_dict() for name, stats in session.stats.items()}
    summary.blocked = sum(s.blocked for s in session.stats.values())
    summary.unchanged = sum(s.statuses.get("304", 0) for s in session.stats.values())
    summary.skipped = ctx.skipped
    summary.credits = Decimal(str(sum(s.credits for s in session.stats.values())))
    summary.status, summary.outcome, summary.failure_reason, summary.error = (
        status,
        outcome,
        reason,
        error,
    )
    summary.elapsed_s = time.monotonic() - started
    if reason != "lease_lost":
        finish_run(
            db,
            run,
            status=status,
            outcome=outcome,
            failure_reason=reason,
            error=error,
            engine_stats=summary.engines,
            cost_credits=summary.credits,
            retry_not_before=retry_not_before,
        )
    log.info(
        "connector_run_finished",
        connector=meta.id,
        run=run.id,
        mode=mode,
        status=status,
        outcome=outcome,
        failure_reason=reason,
        pages=summary.pages,
        records=summary.records,
        dupes=summary.dupes,
        unchanged=summary.unchanged,
        skipped=summary.skipped,
        blocked=summary.blocked,
        elapsed_ms=int(summary.elapsed_s * 1000),
    )
    return summary


async def run_queued(
    run_id: str, *, db: Engine, settings: Settings, stack: FetchStack | None = None
) -> RunSummary | None:
    """Run (or take over) the queued run ``run_id``: what a crawl worker does with a message.

    Returns None, doing nothing, when the run no longer needs doing (finished, or held by a live
    lease elsewhere): a duplicate or late message is a no-op.
    """
    stored = load_run(db, run_id)
    if stored is None:
        log.warning("crawl.unknown_run", run=run_id)
        return None
    live_lease = stored.lease_expires_at is not None and stored.lease_expires_at > datetime.now(UTC)
    if stored.status not in ("queued", "running") or (stored.status == "running" and live_lease):
        log.info("crawl.skipped", run=run_id, status=stored.status, reason="not_due")
        return None
    registry = load_registry(settings.connectors_dir)
    connector = registry.get(stored.connector_id)
    # A backfill slice takes its page budget and ``since`` from its campaign, and reports back.
    campaign = load_backfill(db, stored.backfill_id) if stored.backfill_id else None
    own_stack = stack is None
    stack = stack or build_fetch_stack(settings)
    try:
        summary = await run_connector(
            connector,
            db=db,
            stack=stack,
            store=RawRecordStore(BlobStore(settings.blob_dir)),
            mode="backfill" if stored.mode == "backfill" else "incremental",
            max_pages=campaign.page_budget if campaign else None,
            since=campaign.since if campaign else None,
            backfill_id=stored.backfill_id,
            run_id=run_id,
            max_run_minutes=settings.max_run_minutes,
            lease_seconds=settings.run_lease_seconds,
        )
        if campaign is not None:
            record_slice(db, campaign.id, summary.run_id)
        return summary
    except RunNotClaimable:  # a duplicate message raced us to it: nothing to do
        log.info("crawl.skipped", run=run_id, reason="not_claimable")
        return None
    finally:
        if own_stack:
            await stack.aclose()
