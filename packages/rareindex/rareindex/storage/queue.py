"""The run queue in ``connector_runs``: what is due, enqueueing it once, and finding lost runs.

A queued run is a ``connector_runs`` row with status ``queued``; the broker message that follows
carries only its id. Durable state is here, so a lost message is found again by
:func:`sweep_stale_runs` and re-sent, and a worker that takes a run over fences the old holder
(``start_run(run_id=…)`` bumps the run's lease token).

At most one run per connector is ``queued`` or ``running``: the partial unique index
``ux_connector_runs_active`` enforces it, so :func:`enqueue_run` is a no-op by constraint —
``INSERT … ON CONFLICT DO NOTHING … RETURNING`` — even when two transactions race, not merely by a
prior SELECT. :func:`enqueue_runs` does the same for a whole plan in one statement.

The statements a scheduler tick sends here do not grow with the backfill campaigns: one query for
the connectors and one for the campaigns (:func:`due_connectors`), one ``INSERT`` per 500 due
runs, one query for the sweep (and an ``UPDATE`` per lost run it finds).

Example:
    >>> with engine.begin() as conn:                                             # doctest: +SKIP
    ...     plan = due_connectors(conn, now, {c.meta.id: c.meta for c in registry})
    ...     run_ids = enqueue_runs(conn, plan.due, now=now)  # connector id -> run id
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

from sqlalchemy import Connection, and_, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from rareindex_connectors import ConnectorMeta, CrawlMode, refresh_interval

from .ids import new_id
from .schema import ACTIVE_RUN_STATUSES, connector_backfills, connector_runs, connectors
from .schema.coordination import ACTIVE_RUN_PREDICATE

__all__ = [
    "SKIP_REASONS",
    "Due",
    "DuePlan",
    "Skip",
    "Sweep",
    "due_connectors",
    "enqueue_run",
    "enqueue_runs",
    "sweep_stale_runs",
]

SKIP_REASONS = frozenset(
    {
        "not_active",
        "not_in_registry",
        "requires_unmet",
        "already_queued",
        "backfill_backoff",
        "retry_after",
    }
)
"""Why a connector that wanted a run got none: a closed vocabulary, safe as a metric label."""


@dataclass(frozen=True, slots=True)
class Due:
    """A run to enqueue: an incremental crawl, or the next slice of a backfill campaign."""

    connector_id: str
    mode: CrawlMode
    backfill_id: str | None = None
    last_started_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """A connector that wanted a run and gets none this time, and why (:data:`SKIP_REASONS`)."""

    connector_id: str
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class DuePlan:
    """What one scheduler tick decided."""

    due: list[Due] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


@dataclass(slots=True)
class Sweep:
    """Runs found by :func:`sweep_stale_runs`: ids to hand to the broker again, and ids closed."""

    resend: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)


def enqueue_run(
    conn: Connection,
    connector_id: str,
    mode: str,
    backfill_id: str | None = None,
    *,
    now: datetime | None = None,
) -> str | None:
    """Insert a ``queued`` run and return its id — or None, writing nothing, when the connector
    already has a queued or running run (refused by the unique index, race-free)."""
    inserted = _insert_queued(conn, [(connector_id, mode, backfill_id)], now or datetime.now(UTC))
    return inserted.get(connector_id)


ENQUEUE_CHUNK = 500
"""Rows per ``INSERT`` of :func:`enqueue_runs` (7 bound parameters each: far below SQLite's
32,766 and PostgreSQL's 65,535)."""


def enqueue_runs(conn: Connection, due: Sequence[Due], *, now: datetime) -> dict[str, str]:
    """:func:`enqueue_run` for many connectors in one statement per :data:`ENQUEUE_CHUNK` rows:
    connector id → new run id for those inserted. A connector left out already had a queued or
    running run (refused by the unique index, as for one)."""
    inserted: dict[str, str] = {}
    rows = [(d.connector_id, d.mode, d.backfill_id) for d in due]
    for start in range(0, len(rows), ENQUEUE_CHUNK):
        inserted |= _insert_queued(conn, rows[start : start + ENQUEUE_CHUNK], now)
    return inserted


def _insert_queued(
    conn: Connection, runs: Sequence[tuple[str, str, str | None]], now: datetime
) -> dict[str, str]:
    """``INSERT … VALUES (…), (…) ON CONFLICT DO NOTHING RETURNING``: one statement."""
    for _, mode, backfill_id in runs:
        if mode not in get_args(CrawlMode):
            raise ValueError(f"unknown run mode {mode!r}; known: backfill, incremental")
        if (mode == "backfill") != (backfill_id is not None):
            raise ValueError(
                "a backfill run needs its backfill_id, and only a backfill run has one"
            )
    if not runs:
        return {}
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(connector_runs)
        .values(
            [
                {
                    "id": new_id("run"),
                    "connector_id": connector_id,
                    "mode": mode,
                    "backfill_id": backfill_id,
                    "status": "queued",
                    "lease_token": 0,
                    "queued_at": now,
                }
                for connector_id, mode, backfill_id in runs
            ]
        )
        .on_conflict_do_nothing(
            index_elements=[connector_runs.c.connector_id],
            index_where=ACTIVE_RUN_PREDICATE,
        )
        .returning(connector_runs.c.connector_id, connector_runs.c.id)
    )
    return {row.connector_id: row.id for row in conn.execute(statement)}


def due_connectors(
    conn: Connection,
    now: datetime,
    registry_metas: Mapping[str, ConnectorMeta],
    *,
    env: Mapping[str, str] | None = None,
    backfill_retry_after: timedelta = timedelta(minutes=15),
    database_retry_after: timedelta = timedelta(minutes=5),
) -> DuePlan:
    """Which connectors should get a run now, computed from stored times (so missed ticks only
    delay, never lose, a crawl).

    A connector wants an **incremental** run when the last incremental run that started did so at
    least its refresh interval ago (never started: at once) — a failed run counts, so a broken
    source is retried once per interval, not every tick; but a run that failed because our own
    database went away counts only for ``database_retry_after``. Otherwise it wants the next
    slice of its oldest ``running`` **backfill** campaign, unless the last slice failed less than
    ``backfill_retry_after`` ago. It gets one only when its status is ``active``, it is in the
    registry, every ``requires`` variable is set in ``env`` (default: the process environment) and
    it has no queued or running run.
    """
    env = os.environ if env is None else env
    # A run our own database cut short (failure_reason "database") says nothing about the
    # source: it counts as a visit only for ``database_retry_after``, then the crawl is due again.
    outage_over = and_(
        connector_runs.c.failure_reason == "database",
        connector_runs.c.finished_at <= now - database_retry_after,
    )
    last_started = (
        select(func.max(connector_runs.c.started_at))
        .where(
            connector_runs.c.connector_id == connectors.c.id,
            connector_runs.c.mode == "incremental",
            ~func.coalesce(outage_over, False),
        )
        .scalar_subquery()
    )
    busy = exists().where(
        connector_runs.c.connector_id == connectors.c.id,
        connector_runs.c.status.in_(ACTIVE_RUN_STATUSES),
    )
    # The host's Retry-After that ended the connector's latest run, if one did.
    hold = (
        select(connector_runs.c.retry_not_before)
        .where(connector_runs.c.connector_id == connectors.c.id)
        .order_by(connector_runs.c.started_at.desc().nulls_last(), connector_runs.c.id.desc())
        .limit(1)
        .correlate(connectors)
        .scalar_subquery()
    )
    rows = conn.execute(
        select(
            connectors.c.id,
            connectors.c.status,
            connectors.c.refresh_class,
            last_started.label("last_started_at"),
            busy.label("busy"),
            hold.label("retry_not_before"),
        ).order_by(connectors.c.id)
    ).all()
    backfills = _next_backfills(conn, now, backfill_retry_after)
    plan = DuePlan()
    for row in rows:
        meta = registry_metas.get(row.id)
        refresh_class = meta.refresh_class if meta is not None else row.refresh_class
        last: datetime | None = row.last_started_at
        hold_until: datetime | None = row.retry_not_before
        wants: Due | None = None
        backoff: dict[str, Any] | None = None
        if hold_until is not None and now < hold_until:
            # The host asked for a pause: nothing before its time, whatever is due.
            plan.skipped.append(
                Skip(row.id, "retry_after", {"retry_not_before": hold_until.isoformat()})
            )
            continue
        if (
            last is None
            or now - last >= refresh_interval(refresh_class)
            or hold_until is not None  # the pause is over: crawl now, not at the next interval
        ):
            wants = Due(row.id, "incremental", None, last)
        elif row.id in backfills:
            backfill_id, failed_at = backfills[row.id]
            wants = Due(row.id, "backfill", backfill_id, last)
            if failed_at is not None:
                backoff = {"backfill": backfill_id, "failed_at": failed_at.isoformat()}
        if wants is None:
            continue
        detail: dict[str, Any] = {"mode": wants.mode}
        if row.status != "active":
            plan.skipped.append(Skip(row.id, "not_active", {**detail, "status": row.status}))
        elif meta is None:
            plan.skipped.append(Skip(row.id, "not_in_registry", detail))
        elif missing := meta.missing_requires(env):
            plan.skipped.append(Skip(row.id, "requires_unmet", {**detail, "missing": missing}))
        elif row.busy:
            plan.skipped.append(Skip(row.id, "already_queued", detail))
        elif backoff is not None:
            plan.skipped.append(Skip(row.id, "backfill_backoff", {**detail, **backoff}))
        else:
            plan.due.append(wants)
    return plan


def _next_backfills(
    conn: Connection, now: datetime, retry_after: timedelta
) -> dict[str, tuple[str, datetime | None]]:
    """Per connector, its oldest running campaign and, when its last slice failed within
    ``retry_after``, when that was.

    One statement, whatever the number of campaigns: the oldest running campaign per connector
    (``row_number()``), its last slice's id by a correlated ``LIMIT 1`` on the
    ``connector_runs(backfill_id, created_at)`` index, then that slice's row by primary key.
    """
    campaigns = connector_backfills.c
    ranked = (
        select(
            campaigns.id,
            campaigns.connector_id,
            func.row_number()
            .over(
                partition_by=campaigns.connector_id,
                order_by=(campaigns.created_at, campaigns.id),
            )
            .label("rank"),
        )
        .where(campaigns.status == "running")
        .subquery("ranked")
    )
    slices = connector_runs.alias("slice")
    last_slice_id = (
        select(slices.c.id)
        .where(slices.c.backfill_id == ranked.c.id)
        .order_by(slices.c.created_at.desc(), slices.c.id.desc())
        .limit(1)
        .correlate(ranked)
        .scalar_subquery()
    )
    chosen = (
        select(ranked.c.id, ranked.c.connector_id, last_slice_id.label("last_slice_id"))
        .where(ranked.c.rank == 1)
        .subquery("chosen")
    )
    rows = conn.execute(
        select(
            chosen.c.id,
            chosen.c.connector_id,
            connector_runs.c.status,
            connector_runs.c.finished_at,
        ).select_from(
            chosen.outerjoin(connector_runs, connector_runs.c.id == chosen.c.last_slice_id)
        )
    ).all()
    chosen_campaigns: dict[str, tuple[str, datetime | None]] = {}
    for row in rows:
        failed_at = row.finished_at if row.status == "failed" else None
        if failed_at is not None and now - failed_at >= retry_after:
            failed_at = None
        chosen_campaigns[row.connector_id] = (row.id, failed_at)
    return chosen_campaigns


def sweep_stale_runs(
    conn: Connection, now: datetime, *, resend_after: timedelta, max_claims: int = 3
) -> Sweep:
    """Find runs whose message was lost or whose worker died, so no connector stays occupied.

    * ``queued`` runs handed to the broker ``resend_after`` ago or more are re-sent;
    * ``running`` runs whose lease expired are re-sent for another worker to take over from the
      committed cursor — at once, the first time after each expiry (not handed out since the
      lease ran out), then every ``resend_after`` — unless they were claimed ``max_claims`` times
      already (a run that kills its worker): those are closed as ``failed/crashed`` and their
      token bumped, so a worker still holding the old one commits nothing.

    A lapsed lease means the holder stopped committing (it died, or lost the database): its
    crawl actor's retry, a few seconds after the failure, met the lease still live and gave up,
    so waiting ``resend_after`` on top of the lease would leave the connector occupied for half
    an hour. Taking over is safe whenever the lease lapsed: the claim (``start_run``) bumps the
    fencing token, so a holder that comes back cannot commit.

    ``queued_at`` of a re-sent run becomes ``now``: it records when the run was last handed out.
    """
    runs = connector_runs.c
    cutoff = now - resend_after
    not_sent_lately = or_(runs.queued_at.is_(None), runs.queued_at <= cutoff)
    not_sent_since_lapse = or_(runs.queued_at.is_(None), runs.queued_at < runs.lease_expires_at)
    stale = conn.execute(
        select(runs.id, runs.status, runs.lease_token)
        .where(
            or_(
                and_(runs.status == "queued", not_sent_lately),
                and_(
                    runs.status == "running",
                    runs.lease_expires_at <= now,
                    or_(not_sent_lately, not_sent_since_lapse),
                ),
            )
        )
        .order_by(runs.queued_at, runs.id)
    ).all()
    sweep = Sweep()
    for run in stale:
        same_state = (
            connector_runs.c.id == run.id,
            connector_runs.c.status == run.status,
            connector_runs.c.lease_token == run.lease_token,
        )
        if run.status == "running" and run.lease_token >= max_claims:
            closed = conn.execute(
                update(connector_runs)
                .where(*same_state, connector_runs.c.lease_expires_at <= now)
                .values(
                    status="failed",
                    outcome="failed",
                    failure_reason="crashed",
                    error=f"lease expired after {run.lease_token} claims; closed by the scheduler",
                    finished_at=now,
                    lease_token=connector_runs.c.lease_token + 1,
                    lease_expires_at=None,
                )
                .returning(connector_runs.c.id)
            ).first()
            if closed is not None:
                sweep.crashed.append(run.id)
            continue
        resent = conn.execute(
            update(connector_runs)
            .where(*same_state)
            .values(queued_at=now)
            .returning(connector_runs.c.id)
        ).first()
        if resent is not None:
            sweep.resend.append(run.id)
    return sweep
