"""Backfill campaigns: page a connector's whole history in resumable slices, watch, pause, resume.

A campaign (:mod:`rareindex.storage.backfills` holds its state machine) is worked off in
*slices*: each is one crawl run in ``mode="backfill"`` with ``max_pages=page_budget``, resuming
from the campaign's committed cursor. After a slice the campaign learns its progress (pages and
items processed, ``total_pages`` and ``reached_date`` when the connector reports them, a percent
from ``total_pages``), its failures (``errors``, ``retries``, ``last_error``) and whether it is
complete: **a connector signals completion by its cursor** — a ``sweeps`` counter that grows (the
store connectors), ``"complete": true``, or a successful slice that did not move the cursor.

Slices run in the scheduler's fleet (it continues ``running`` campaigns; see
:func:`rareindex.crawl.run_queued`) or in-process with :func:`run_campaign`
(``rareindex backfill start ID --run``, ``rareindex backfill run ID``).

**A crawler that dies** (``kill -9``, a lost machine) leaves its slice ``running`` under a lease
that lapses ``RI_RUN_LEASE_SECONDS`` after its last commit at most. The next slice *takes that run
over* — same run id, fencing token bumped, from the campaign's committed cursor — rather than
starting a new one: :func:`run_campaign` waits while the lease is live and unchanged (a dead
holder never renews it), and refuses when it is renewed meanwhile (a live crawler elsewhere).
What the dead crawler committed stays; the page it was on is fetched again; nothing is skipped.

Example:
    >>> backfill_id = start_backfill(engine, "cards-shop", page_budget=10)    # doctest: +SKIP
    >>> done = asyncio.run(run_campaign(connector, backfill_id, db=engine,    # doctest: +SKIP
    ...                                 stack=stack, store=store))
    >>> done.backfill.status                                                  # doctest: +SKIP
    'completed'
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog

from rareindex_connectors import Connector, Progress

from .crawl import RunSummary, run_connector
from .fetching import FetchStack
from .storage import Engine, RawRecordStore
from .storage.backfills import (
    Action,
    Backfill,
    BackfillError,
    SliceBusy,
    create_backfill,
    find_backfill,
    load_backfill,
    mark_completed_if_finished,
    record_slice,
    set_status,
    slice_run_id,
)

__all__ = [
    "Backfill",
    "BackfillError",
    "CampaignResult",
    "SliceBusy",
    "SliceResult",
    "backfill_status",
    "cancel",
    "pause",
    "resume",
    "run_backfill_slice",
    "run_campaign",
    "start_backfill",
]

log = structlog.get_logger(__name__)


def start_backfill(
    db: Engine,
    connector_id: str,
    *,
    since: datetime | None = None,
    start_page: int | None = None,
    page_budget: int = 50,
) -> str:
    """Start a ``running`` campaign for ``connector_id`` and return its id (``bkf_…``).

    Raises:
        BackfillError: unknown connector, one already running or paused, a bad argument.
    """
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    with db.begin() as conn:
        backfill = create_backfill(
            conn, connector_id, since=since, start_page=start_page, page_budget=page_budget
        )
    log.info("backfill.started", connector=connector_id, backfill=backfill.id, pages=page_budget)
    return backfill.id


def backfill_status(db: Engine, ref: str) -> Backfill:
    """A campaign by id (``bkf_…``), or a connector's latest campaign by connector id."""
    return find_backfill(db, ref)


def _move(db: Engine, ref: str, action: Action) -> Backfill:
    backfill = find_backfill(db, ref)
    moved = set_status(db, backfill.id, action)
    log.info(f"backfill.{action}d", connector=moved.connector_id, backfill=moved.id)
    return moved


def pause(db: Engine, ref: str) -> Backfill:
    """Pause a running campaign: no further slices until it is resumed."""
    return _move(db, ref, "pause")


def resume(db: Engine, ref: str) -> Backfill:
    """Resume a paused (or failed) campaign from its committed cursor."""
    return _move(db, ref, "resume")


def cancel(db: Engine, ref: str) -> Backfill:
    """Cancel a campaign for good; what it stored stays."""
    return _move(db, ref, "cancel")


@dataclass(frozen=True, slots=True)
class SliceResult:
    """One slice: its run (None when the campaign turned out complete already) and the campaign
    after it."""

    summary: RunSummary | None
    backfill: Backfill


async def run_backfill_slice(
    connector: Connector,
    backfill_id: str,
    *,
    db: Engine,
    stack: FetchStack,
    store: RawRecordStore,
    lease_seconds: float = 300.0,
    max_run_minutes: float = 40,
    on_progress: Callable[[RunSummary, Progress | None], None] | None = None,
) -> SliceResult:
    """Run the campaign's next slice — a new run, its queued one, or its dead one taken over —
    then account it (progress, failure, completion).

    Raises:
        BackfillError: unknown campaign, another connector's, or not running.
        SliceBusy: the connector's run slot is held under a live lease.
    """
    backfill = load_backfill(db, backfill_id)
    if backfill is None:
        raise BackfillError(f"no backfill {backfill_id}")
    if backfill.connector_id != connector.meta.id:
        raise BackfillError(
            f"backfill {backfill_id} belongs to {backfill.connector_id}, not {connector.meta.id}"
        )
    if backfill.status == "running":  # a crash may have hidden its completion: look first
        backfill = mark_completed_if_finished(db, backfill_id) or backfill
        if backfill.status == "completed":
            return SliceResult(None, backfill)
    run_id = slice_run_id(db, backfill)
    summary = await run_connector(
        connector,
        db=db,
        stack=stack,
        store=store,
        mode="backfill",
        max_pages=backfill.page_budget,
        since=backfill.since,
        backfill_id=backfill.id,
        run_id=run_id,
        max_run_minutes=max_run_minutes,
        lease_seconds=lease_seconds,
        on_progress=on_progress,
    )
    after = record_slice(db, backfill.id, summary.run_id)
    log.info(
        "backfill.slice_finished",
        connector=after.connector_id,
        backfill=after.id,
        run=summary.run_id,
        taken_over=run_id is not None,
        status=summary.status,
        campaign=after.status,
        pages=after.pages_processed,
        records=summary.records,
    )
    return SliceResult(summary, after)


@dataclass(frozen=True, slots=True)
class CampaignResult:
    """How :func:`run_campaign` ended: the campaign, how many slices ran, the failed one if any."""

    backfill: Backfill
    slices: int
    failed: RunSummary | None = None


async def run_campaign(
    connector: Connector,
    backfill_id: str,
    *,
    db: Engine,
    stack: FetchStack,
    store: RawRecordStore,
    lease_seconds: float = 300.0,
    max_run_minutes: float = 40,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: Callable[[RunSummary, Progress | None], None] | None = None,
    on_slice: Callable[[SliceResult], None] | None = None,
    on_wait: Callable[[SliceBusy], None] | None = None,
    poll_s: float = 0.25,
) -> CampaignResult:
    """Run slices one after another, in this process, until the campaign is no longer running
    (completed; failed; paused or cancelled from elsewhere), a slice fails (the campaign stays
    running, for a later retry) or ``should_stop()`` says so between slices (then it is paused).

    While the connector's run slot is held under a live lease, it waits for the lease to lapse —
    as long as the lease is not renewed (see the module docstring).

    Raises:
        BackfillError: the campaign cannot get slices (not running, busy with a live crawler).
    """
    slices = 0
    waiting: SliceBusy | None = None
    while True:
        backfill = load_backfill(db, backfill_id)
        if backfill is None:
            raise BackfillError(f"no backfill {backfill_id}")
        if backfill.status != "running":
            return CampaignResult(backfill, slices)
        if should_stop():
            return CampaignResult(pause(db, backfill_id), slices)
        try:
            result = await run_backfill_slice(
                connector,
                backfill_id,
                db=db,
                stack=stack,
                store=store,
                lease_seconds=lease_seconds,
                max_run_minutes=max_run_minutes,
                on_progress=on_progress,
            )
        except SliceBusy as busy:
            renewed = waiting is not None and (
                waiting.run_id != busy.run_id or waiting.lease_expires_at != busy.lease_expires_at
            )
            if busy.lease_expires_at is None or renewed:
                raise BackfillError(f"{busy}; another crawler holds it, try again later") from None
            if waiting is None and on_wait is not None:
                on_wait(busy)
            waiting = busy
            await asyncio.sleep(poll_s)
            continue
        waiting = None
        if result.summary is not None:
            slices += 1
        if on_slice is not None:
            on_slice(result)
        if result.summary is not None and result.summary.status == "failed":
            return CampaignResult(result.backfill, slices, result.summary)
