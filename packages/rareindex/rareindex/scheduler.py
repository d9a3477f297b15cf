"""The scheduler: one fenced leader enqueues due crawls durably, then hands their ids to the broker.

Every tick (docs/run-a-fleet.md#how-a-crawl-is-scheduled-run-and-made-safe):

1. **lease** — renew the ``scheduler`` lease, or try to take it; a process that does not hold it
   does nothing else this tick. Any number of schedulers may run; one leads.
2. **decide** — :func:`~rareindex.storage.queue.due_connectors` from stored times: incremental
   crawls by refresh class, then the next slice of running backfill campaigns; skip connectors
   that are not active, whose ``requires`` are unset, or that already have a queued or running run.
   A connector the operator paused, disabled or put in maintenance is logged
   ``scheduler.skipped`` with ``reason=not_active``, its ``status``, and who set it and why
   (``status_changed_by``, ``status_reason``).
3. **commit** — one transaction that first checks the fencing token
   (:func:`~rareindex.storage.leases.holds`, which also keeps a takeover out until the commit),
   then inserts the queued runs and sweeps lost ones. A leader whose lease expired or was taken
   over between 1 and 3 commits nothing (:class:`LeaseLost`, logged ``scheduler.lease_lost``).
4. **send** — after the commit, ``send(run_id)`` for each new or re-sent run: messages carry ids
   only, and a send that fails is retried by a later sweep, because the row is already durable.

Missed ticks are harmless: due-ness comes from stored run times, not from counting ticks.

Example:
    >>> scheduler = Scheduler(engine, registry, send=crawl_actor.send)   # doctest: +SKIP
    >>> scheduler.run_forever(stop_event, interval_s=60)                 # doctest: +SKIP
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

import structlog

from rareindex_connectors import ConnectorMeta
from rareindex_connectors.runtime import Clock, SystemClock

from .storage import Engine
from .storage.connector_status import StatusNote, status_notes
from .storage.leases import Lease, acquire, holds, release, renew
from .storage.queue import Due, DuePlan, Skip, due_connectors, enqueue_runs, sweep_stale_runs
from .storage.runs import LeaseLost

__all__ = ["LEASE_NAME", "Declared", "Scheduler", "TickResult", "default_holder_id"]

log = structlog.get_logger(__name__)

LEASE_NAME = "scheduler"


class Declared(Protocol):
    """What the scheduler reads of a connector: its declared meta (every ``Connector`` has it)."""

    @property
    def meta(self) -> ConnectorMeta: ...


def default_holder_id() -> str:
    """``host:pid:nonce`` — unique per process, readable in the ``leases`` table."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(slots=True)
class TickResult:
    """What one tick did."""

    leader: bool
    token: int | None = None
    enqueued: list[str] = field(default_factory=list)
    resent: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    lease_lost: bool = False


@dataclass(slots=True)
class _Committed:
    enqueued: list[tuple[Due, str]]
    raced: list[Due]
    resent: list[str]
    crashed: list[str]


class Scheduler:
    """Enqueue due crawls while holding the ``scheduler`` lease.

    Args:
        db: the database (SQLite or PostgreSQL).
        registry: the loaded connectors (their ``meta``: refresh class and ``requires``).
        clock: wall-clock time for ticks without an explicit ``now``.
        holder_id: this process in the ``leases`` table (default ``host:pid:nonce``).
        lease_seconds: how long leadership lasts without a renewal; keep it a few tick intervals.
        send: hands a run id to the broker (``crawl_run.send``) or runs it in-process.
        env: where ``requires`` are looked up (default: the process environment).
        resend_after: a queued run not picked up for this long is sent again.
        max_claims: a running run whose worker died this many times is closed as crashed.
        before_commit: called with the plan between deciding and committing (a test seam).
    """

    def __init__(
        self,
        db: Engine,
        registry: Iterable[Declared],
        clock: Clock | None = None,
        holder_id: str | None = None,
        lease_seconds: float = 180.0,
        send: Callable[[str], object] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        resend_after: timedelta = timedelta(minutes=30),
        max_claims: int = 3,
        before_commit: Callable[[DuePlan], None] | None = None,
        after_tick: Callable[[TickResult], None] | None = None,
    ) -> None:
        self.db = db
        self.registry = registry
        self.clock = clock or SystemClock()
        self.holder_id = holder_id or default_holder_id()
        self.lease_ttl = timedelta(seconds=lease_seconds)
        self.send = send or (lambda run_id: None)
        self.env = env
        self.resend_after = resend_after
        self.max_claims = max_claims
        self.before_commit = before_commit
        self.after_tick = after_tick
        """Called after every tick (periodic leader-only jobs such as health snapshots)."""
        self.lease: Lease | None = None

    @property
    def _log(self) -> structlog.typing.FilteringBoundLogger:
        # Bound per use, not at import: the process configures logging after importing us.
        return log.bind(component="scheduler", holder=self.holder_id)  # type: ignore[no-any-return]

    def now(self) -> datetime:
        """The clock's time as an aware UTC datetime."""
        return datetime.fromtimestamp(self.clock.time(), UTC)

    def tick(self, now: datetime | None = None) -> TickResult:
        """Lead (if this process can), enqueue what is due in one fenced commit, then send."""
        now = now or self.now()
        started = time.monotonic()
        lease = self._lead(now)
        if lease is None:
            self._log.info("scheduler.tick", leader=False)
            return TickResult(leader=False)
        plan = self.decide(now)
        for skip in plan.skipped:
            self._log.info(
                "scheduler.skipped", connector=skip.connector_id, reason=skip.reason, **skip.detail
            )
        if self.before_commit is not None:
            self.before_commit(plan)
        # The lease must still be live when we commit, however long deciding took.
        commit_at = now + timedelta(seconds=time.monotonic() - started)
        try:
            committed = self.commit(plan, lease, now, fence_at=commit_at)
        except LeaseLost as exc:
            self.lease = None
            self._log.warning("scheduler.lease_lost", fencing_token=lease.token, error=str(exc))
            return TickResult(
                leader=False, token=lease.token, skipped=plan.skipped, lease_lost=True
            )
        result = TickResult(
            leader=True,
            token=lease.token,
            enqueued=[run_id for _, run_id in committed.enqueued],
            resent=committed.resent,
            crashed=committed.crashed,
            skipped=plan.skipped,
        )
        for due in committed.raced:  # queued by someone else between decide and commit
            skip = Skip(due.connector_id, "already_queued", {"mode": due.mode})
            result.skipped.append(skip)
            self._log.info("scheduler.skipped", connector=due.connector_id, reason=skip.reason)
        for due, run_id in committed.enqueued:
            self._log.info(
                "scheduler.enqueued",
                connector=due.connector_id,
                run=run_id,
                mode=due.mode,
                backfill=due.backfill_id,
            )
        for run_id in committed.resent:
            self._log.info("scheduler.resent", run=run_id)
        for run_id in committed.crashed:
            self._log.warning("scheduler.run_crashed", run=run_id, failure_reason="crashed")
        for run_id in [*result.enqueued, *committed.resent]:
            self._send(run_id, resent=run_id in committed.resent)
        self._log.info(
            "scheduler.tick",
            leader=True,
            fencing_token=lease.token,
            enqueued=len(result.enqueued),
            resent=len(result.resent),
            skipped=len(result.skipped),
            elapsed_ms=int((time.monotonic() - started) * 1000),
        )
        return result

    def decide(self, now: datetime) -> DuePlan:
        """What is due at ``now`` (reads only; nothing is locked)."""
        metas = {connector.meta.id: connector.meta for connector in self.registry}
        with self.db.connect() as conn:
            plan = due_connectors(conn, now, metas, env=self.env)
            if any(skip.reason == "not_active" for skip in plan.skipped):
                _explain_status(plan, status_notes(conn))
        return plan

    def commit(
        self, plan: DuePlan, lease: Lease, now: datetime, *, fence_at: datetime | None = None
    ) -> _Committed:
        """Enqueue ``plan`` and sweep lost runs in one transaction, only while ``lease`` holds
        at ``fence_at`` (default ``now``).

        Raises:
            LeaseLost: the lease expired or changed hands; nothing was written.
        """
        with self.db.begin() as conn:
            if not holds(conn, lease.name, lease.token, now=fence_at or now):
                raise LeaseLost(
                    f"scheduler lease token {lease.token} of {lease.holder} is no longer live"
                )
            committed = _Committed([], [], [], [])
            inserted = enqueue_runs(conn, plan.due, now=now)  # one INSERT per 500 runs
            for due in plan.due:
                run_id = inserted.get(due.connector_id)
                if run_id is None:
                    committed.raced.append(due)
                else:
                    committed.enqueued.append((due, run_id))
            sweep = sweep_stale_runs(
                conn, now, resend_after=self.resend_after, max_claims=self.max_claims
            )
            committed.resent, committed.crashed = sweep.resend, sweep.crashed
        return committed

    def release(self) -> None:
        """Give up leadership now, so another scheduler need not wait for the lease to expire."""
        if self.lease is None:
            return
        with self.db.begin() as conn:
            release(conn, self.lease, now=self.now())
        self._log.info("scheduler.released", fencing_token=self.lease.token)
        self.lease = None

    def run_forever(self, stop_event: threading.Event, interval_s: float = 60.0) -> None:
        """Tick every ``interval_s`` until ``stop_event`` is set, then release the lease.

        A failing tick (database down) is logged and the loop goes on; the lease simply lapses.
        """
        self._log.info("scheduler.started", interval_s=interval_s)
        try:
            while not stop_event.is_set():
                try:
                    result = self.tick()
                    if self.after_tick is not None:
                        self.after_tick(result)
                except Exception as exc:
                    self._log.error("scheduler.tick_failed", error=_one_line(exc))
                stop_event.wait(interval_s)
        finally:
            try:
                self.release()
            except Exception as exc:  # the lease lapses on its own
                self._log.warning("scheduler.release_failed", error=type(exc).__name__)
            self._log.info("scheduler.stopped")

    def _lead(self, now: datetime) -> Lease | None:
        with self.db.begin() as conn:
            if self.lease is not None:
                renewed = renew(conn, self.lease, now=now, ttl=self.lease_ttl)
                if renewed is not None:
                    self.lease = renewed
                    return renewed
                self._log.warning("scheduler.lease_lost", fencing_token=self.lease.token)
                self.lease = None
            self.lease = acquire(conn, LEASE_NAME, self.holder_id, now=now, ttl=self.lease_ttl)
        if self.lease is not None:
            self._log.info("scheduler.lease_acquired", fencing_token=self.lease.token)
        return self.lease

    def _send(self, run_id: str, *, resent: bool) -> None:
        try:
            self.send(run_id)
        except Exception as exc:  # the run is durable: a later sweep sends it again
            self._log.error(
                "scheduler.send_failed", run=run_id, resent=resent, error=type(exc).__name__
            )


def _explain_status(plan: DuePlan, notes: Mapping[str, StatusNote]) -> None:
    """Add the operator's note (who paused, disabled or put it in maintenance, and why) to each
    ``not_active`` skip, so ``scheduler.skipped`` says why the connector is not crawled."""
    for index, skip in enumerate(plan.skipped):
        note = notes.get(skip.connector_id)
        if skip.reason != "not_active" or note is None:
            continue
        detail = {**skip.detail, "status": note.status}
        if note.changed_by is not None:
            detail["status_changed_by"] = note.changed_by
        if note.reason is not None:
            detail["status_reason"] = note.reason
        plan.skipped[index] = Skip(skip.connector_id, skip.reason, detail)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]
