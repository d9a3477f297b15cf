"""Backfill campaigns in ``connector_backfills``: their state machine, their slices, their progress.

A campaign pages a connector from its beginning (or from ``start_page``) in *slices*: backfill
runs of at most ``page_budget`` pages, each resuming from the campaign's ``last_cursor`` — which
:func:`~rareindex.storage.runs.commit_batch` advances in the transaction that stores the records
before it, as it does the connector's cursor for incremental runs. The campaign's cursor is its
own: incremental crawls of the same connector keep theirs.

States (``status``) and the operator's moves between them::

    running ──pause──▶ paused ──resume──▶ running
    running | paused | failed ──cancel──▶ cancelled        (terminal)
    running ──slices──▶ completed                           (terminal)
    running ──max_retries failed slices in a row──▶ failed ──resume──▶ running

A connector has at most one *active* (``running`` or ``paused``) campaign. Only ``running``
campaigns get slices (the scheduler's :func:`~rareindex.storage.queue.due_connectors` reads
``running`` only); pausing or cancelling also cancels a slice that is queued and not yet claimed,
while a slice already running finishes its pages and commits them.

**Completion.** A connector signals through its cursor that it finished a sweep. A campaign is
complete when a successful slice leaves a cursor that

1. counts more ``sweeps`` than the campaign's starting cursor (the store connectors count a
   finished sweep and restart at the first page), or
2. says ``"complete": true``, or
3. did not move: the slice found no new page, so the next one would find none either (a
   time-boxed slice excepted).

Example:
    >>> with engine.begin() as conn:                                             # doctest: +SKIP
    ...     backfill = create_backfill(conn, "cards-shop", page_budget=10)
    >>> set_status(engine, backfill.id, "pause").status                          # doctest: +SKIP
    'paused'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import Connection, Engine, select, update

from ..errors import RareIndexError
from .ids import new_id
from .schema import ACTIVE_RUN_STATUSES, connector_backfills, connector_runs, connectors

__all__ = [
    "ACTIVE_STATUSES",
    "MAX_RETRIES",
    "Action",
    "Backfill",
    "BackfillError",
    "SliceBusy",
    "create_backfill",
    "find_backfill",
    "load_backfill",
    "mark_completed_if_finished",
    "record_slice",
    "set_status",
    "slice_run_id",
    "sweep_finished",
]

ACTIVE_STATUSES = ("running", "paused")
"""A campaign in one of these states occupies its connector: a second one is refused."""

MAX_RETRIES = 5
"""Failed slices in a row after which a campaign is ``failed`` (``resume`` starts it again)."""

Action = Literal["pause", "resume", "cancel"]

_TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    "pause": (frozenset({"running"}), "paused"),
    "resume": (frozenset({"paused", "failed"}), "running"),
    "cancel": (frozenset({"running", "paused", "failed"}), "cancelled"),
}
"""action -> (the states it leaves, the state it enters)."""


class BackfillError(RareIndexError):
    """A campaign cannot do what was asked (unknown, already active, a move its state forbids)."""


class SliceBusy(RareIndexError):
    """The connector's queued-or-running slot is held by a run under a live lease: a crawler is
    running it, or one died and its lease has not lapsed yet."""

    def __init__(self, message: str, *, run_id: str, lease_expires_at: datetime | None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.lease_expires_at = lease_expires_at


@dataclass(frozen=True, slots=True)
class Backfill:
    """A campaign as stored."""

    id: str
    connector_id: str
    status: str
    start_from: dict[str, Any]
    last_cursor: dict[str, Any] | None
    page_budget: int
    pages_processed: int
    items_processed: int
    total_pages: int | None
    reached_date: datetime | None
    percent: float | None
    errors: int
    retries: int
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None

    @property
    def since(self) -> datetime | None:
        """How far back the campaign goes (``CrawlOptions.since``), when it was given."""
        value = self.start_from.get("since")
        return datetime.fromisoformat(value) if value else None

    @property
    def start_cursor(self) -> dict[str, Any] | None:
        """The cursor the campaign started from: the baseline of the completion rule."""
        cursor = self.start_from.get("cursor")
        return dict(cursor) if isinstance(cursor, Mapping) else None


def _now() -> datetime:
    return datetime.now(UTC)


def _from_row(row: Any) -> Backfill:
    return Backfill(
        id=row.id,
        connector_id=row.connector_id,
        status=row.status,
        start_from=dict(row.start_from or {}),
        last_cursor=row.last_cursor,
        page_budget=row.page_budget,
        pages_processed=row.pages_processed,
        items_processed=row.items_processed,
        total_pages=row.total_pages,
        reached_date=row.reached_date,
        percent=row.percent,
        errors=row.errors,
        retries=row.retries,
        last_error=row.last_error,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )


def sweep_finished(start: Mapping[str, Any] | None, cursor: Mapping[str, Any] | None) -> bool:
    """Whether ``cursor`` says the connector finished a sweep since ``start`` (rules 1 and 2 of
    the module docstring; rule 3 needs the slice and lives in :func:`record_slice`)."""
    if not cursor:
        return False
    if cursor.get("complete") is True:
        return True
    sweeps = cursor.get("sweeps")
    started = (start or {}).get("sweeps", 0)
    return isinstance(sweeps, int) and isinstance(started, int) and sweeps > started


def create_backfill(
    conn: Connection,
    connector_id: str,
    *,
    since: datetime | None = None,
    start_page: int | None = None,
    page_budget: int = 50,
) -> Backfill:
    """Insert a ``running`` campaign; refused while the connector has an active one.

    ``start_page`` seeds the campaign's cursor as ``{"page": n}``, the convention of page-numbered
    connectors (the store connectors read it); without it the connector starts at its beginning.

    Raises:
        BackfillError: unknown connector, an active campaign already, or a bad argument.
    """
    if page_budget < 1:
        raise BackfillError(f"page budget must be at least 1 page, not {page_budget}")
    if start_page is not None and start_page < 1:
        raise BackfillError(f"start page must be 1 or more, not {start_page}")
    # Lock the connector's row (PostgreSQL; SQLite serialises writers anyway), so two starts
    # cannot both see "no active campaign" and insert one each.
    known = conn.execute(
        select(connectors.c.id).where(connectors.c.id == connector_id).with_for_update()
    ).first()
    if known is None:
        raise BackfillError(
            f"unknown connector {connector_id!r}; `rareindex connectors list` shows the known ones"
        )
    active = conn.execute(
        select(connector_backfills.c.id, connector_backfills.c.status).where(
            connector_backfills.c.connector_id == connector_id,
            connector_backfills.c.status.in_(ACTIVE_STATUSES),
        )
    ).first()
    if active is not None:
        first = "resume" if active.status == "paused" else "let it finish"
        raise BackfillError(
            f"{connector_id} already has a {active.status} backfill ({active.id}); "
            f"{first} or cancel it first (`rareindex backfill status {connector_id}`)"
        )
    cursor = {"page": start_page} if start_page is not None else None
    start_from: dict[str, Any] = {
        "since": since.astimezone(UTC).isoformat() if since is not None else None,
        "start_page": start_page,
        "cursor": cursor,
    }
    backfill_id = new_id("bkf")
    conn.execute(
        connector_backfills.insert().values(
            id=backfill_id,
            connector_id=connector_id,
            status="running",
            start_from=start_from,
            last_cursor=cursor,
            page_budget=page_budget,
        )
    )
    row = conn.execute(
        select(connector_backfills).where(connector_backfills.c.id == backfill_id)
    ).one()
    return _from_row(row)


def load_backfill(engine: Engine, backfill_id: str) -> Backfill | None:
    """The campaign ``backfill_id``, or None."""
    with engine.connect() as conn:
        row = conn.execute(
            select(connector_backfills).where(connector_backfills.c.id == backfill_id)
        ).first()
    return _from_row(row) if row is not None else None


def find_backfill(engine: Engine, ref: str) -> Backfill:
    """A campaign by its id (``bkf_…``), or a connector's latest campaign by the connector's id.

    Raises:
        BackfillError: no such campaign.
    """
    if ref.startswith("bkf_"):
        found = load_backfill(engine, ref)
        if found is None:
            raise BackfillError(f"no backfill {ref}")
        return found
    with engine.connect() as conn:
        row = conn.execute(
            select(connector_backfills)
            .where(connector_backfills.c.connector_id == ref)
            .order_by(connector_backfills.c.created_at.desc(), connector_backfills.c.id.desc())
            .limit(1)
        ).first()
    if row is None:
        raise BackfillError(
            f"{ref} has no backfill campaign; start one with `rareindex backfill start {ref}`"
        )
    return _from_row(row)


def _refusal(action: str, backfill: Backfill) -> str:
    where = f"backfill {backfill.id} of {backfill.connector_id} is {backfill.status}"
    start = f"start a new one with `rareindex backfill start {backfill.connector_id}`"
    if action == "pause":
        if backfill.status == "paused":
            return f"{where} already; `rareindex backfill resume {backfill.connector_id}` goes on"
        return f"{where}; only a running campaign can be paused"
    if action == "resume":
        if backfill.status == "running":
            return f"{where} already; nothing to resume"
        if backfill.status == "cancelled":
            return f"{where}; a cancelled campaign cannot be resumed — {start}"
        return f"{where}; a completed campaign has nothing left — {start}"
    return f"{where} already; nothing to cancel"


def set_status(engine: Engine, backfill_id: str, action: Action) -> Backfill:
    """Pause, resume or cancel a campaign (a conditional update: race-free).

    Pausing or cancelling also cancels the campaign's slice that is queued and not yet claimed;
    resuming clears the run of failures (``retries``) and ``finished_at``.

    Raises:
        BackfillError: unknown campaign, or a move its current state forbids.
    """
    if action not in _TRANSITIONS:
        raise BackfillError(f"unknown action {action!r}; known: {', '.join(sorted(_TRANSITIONS))}")
    leaves, enters = _TRANSITIONS[action]
    now = _now()
    values: dict[str, Any] = {"status": enters}
    if action == "resume":
        values.update(retries=0, finished_at=None)
    elif action == "cancel":
        values["finished_at"] = now
    with engine.begin() as conn:
        changed = conn.execute(
            update(connector_backfills)
            .where(
                connector_backfills.c.id == backfill_id, connector_backfills.c.status.in_(leaves)
            )
            .values(**values)
            .returning(connector_backfills.c.id)
        ).first()
        if changed is not None and action != "resume":
            conn.execute(
                update(connector_runs)
                .where(
                    connector_runs.c.backfill_id == backfill_id,
                    connector_runs.c.status == "queued",
                )
                .values(
                    status="cancelled",
                    outcome="cancelled",
                    failure_reason="cancelled",
                    error=f"backfill {action}d before this slice started",
                    finished_at=now,
                )
            )
    backfill = load_backfill(engine, backfill_id)
    if backfill is None:
        raise BackfillError(f"no backfill {backfill_id}")
    if changed is None:
        raise BackfillError(_refusal(action, backfill))
    return backfill


def slice_run_id(engine: Engine, backfill: Backfill, *, now: datetime | None = None) -> str | None:
    """The run the next slice of ``backfill`` should take: its queued slice, or its slice whose
    worker died (lease lapsed) — to be taken over from the committed cursor — or None for a new
    run.

    Raises:
        BackfillError: the campaign is not running.
        SliceBusy: the connector's run slot is held under a live lease (this campaign's slice
            elsewhere, or another crawl of the connector).
    """
    if backfill.status != "running":
        raise BackfillError(
            f"backfill {backfill.id} of {backfill.connector_id} is {backfill.status}; "
            "only a running campaign gets slices"
        )
    now = now or _now()
    with engine.connect() as conn:
        active = conn.execute(
            select(
                connector_runs.c.id,
                connector_runs.c.status,
                connector_runs.c.mode,
                connector_runs.c.backfill_id,
                connector_runs.c.lease_expires_at,
            ).where(
                connector_runs.c.connector_id == backfill.connector_id,
                connector_runs.c.status.in_(ACTIVE_RUN_STATUSES),
            )
        ).first()
    if active is None:
        return None
    lapsed = active.lease_expires_at is None or active.lease_expires_at <= now
    ours = active.backfill_id == backfill.id
    if ours and (active.status == "queued" or lapsed):
        return str(active.id)
    what = "this campaign's slice" if ours else f"a {active.mode} run"
    if active.status == "running" and not lapsed:
        raise SliceBusy(
            f"{backfill.connector_id} is busy: {what} ({active.id}) is running under a lease "
            f"until {active.lease_expires_at:%H:%M:%S} UTC",
            run_id=active.id,
            lease_expires_at=active.lease_expires_at,
        )
    gone = " and its crawler is gone" if active.status == "running" else ""
    raise SliceBusy(
        f"{backfill.connector_id} is busy: {what} ({active.id}) is {active.status}{gone}; "
        "a worker (or the scheduler's sweep) runs it first",
        run_id=active.id,
        lease_expires_at=None,
    )


def _percent(pages_processed: int, total_pages: int | None) -> float | None:
    if not total_pages:
        return None
    return min(99.9, round(100.0 * pages_processed / total_pages, 1))  # 100 only when completed


def mark_completed_if_finished(engine: Engine, backfill_id: str) -> Backfill | None:
    """Complete a running campaign whose stored cursor already says its sweep finished (a crash
    between a slice's end and :func:`record_slice`); the campaign as it is now."""
    with engine.begin() as conn:
        row = conn.execute(
            select(connector_backfills)
            .where(connector_backfills.c.id == backfill_id)
            .with_for_update()
        ).first()
        if row is None:
            return None
        backfill = _from_row(row)
        if backfill.status in ACTIVE_STATUSES and sweep_finished(
            backfill.start_cursor, backfill.last_cursor
        ):
            conn.execute(
                update(connector_backfills)
                .where(connector_backfills.c.id == backfill_id)
                .values(status="completed", percent=100.0, finished_at=_now())
            )
    return load_backfill(engine, backfill_id)


def record_slice(
    engine: Engine, backfill_id: str, run_id: str, *, max_retries: int = MAX_RETRIES
) -> Backfill:
    """Account a finished slice to its campaign: percent from ``total_pages``; on failure
    ``errors``, ``retries`` and ``last_error`` (and ``failed`` after ``max_retries`` in a row);
    ``completed`` with ``finished_at`` when the cursor says so (module docstring).

    A slice still running (its lease was taken over) is not accounted here; its new holder does.
    A cancelled campaign keeps its status; a paused one may still complete.
    """
    now = _now()
    with engine.begin() as conn:
        row = conn.execute(
            select(connector_backfills)
            .where(connector_backfills.c.id == backfill_id)
            .with_for_update()
        ).one()
        backfill = _from_row(row)
        run = conn.execute(
            select(
                connector_runs.c.status,
                connector_runs.c.outcome,
                connector_runs.c.backfill_id,
                connector_runs.c.failure_reason,
                connector_runs.c.error,
                connector_runs.c.cursor_start,
                connector_runs.c.cursor_end,
            ).where(connector_runs.c.id == run_id)
        ).first()
        if run is None or run.backfill_id != backfill_id or run.status in ACTIVE_RUN_STATUSES:
            return backfill
        values: dict[str, Any] = {
            "percent": _percent(backfill.pages_processed, backfill.total_pages)
        }
        if run.status == "failed":
            retries = backfill.retries + 1
            values.update(
                errors=backfill.errors + 1,
                retries=retries,
                last_error=f"{run.failure_reason}: {run.error or ''}".strip()[:1000],
            )
            if backfill.status == "running" and retries >= max_retries:
                values.update(status="failed", finished_at=now)
        elif run.status == "succeeded":
            values["retries"] = 0
            finished = sweep_finished(backfill.start_cursor, backfill.last_cursor)
            # A time-boxed slice may have spent its time on one slow page: not rule 3.
            no_new_page = run.outcome != "time_boxed" and run.cursor_end == run.cursor_start
            if backfill.status in ACTIVE_STATUSES and (finished or no_new_page):
                values.update(status="completed", percent=100.0, finished_at=now)
        conn.execute(
            update(connector_backfills)
            .where(connector_backfills.c.id == backfill_id)
            .values(**values)
        )
    updated = load_backfill(engine, backfill_id)
    assert updated is not None
    return updated
