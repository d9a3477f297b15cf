"""Crawl runs in the database: claim a run with a lease, commit batches fenced by it, finish it.

Every batch commit is one transaction that (1) checks the run still holds its lease (a fencing
token: a stale worker whose lease was taken over cannot commit), (2) inserts the raw records,
(3) advances the connector's cursor — and the backfill's — to the position reached *after* those
records, (4) adds the run's counters and the paid-engine credits of the day. A crash before the
commit loses nothing that was committed and re-fetches the rest; it never skips.

Example:
    >>> run = start_run(engine, connector_id="demo-cards", mode="incremental")   # doctest: +SKIP
    >>> commit_batch(engine, run, store, records, cursor={"page": 2}, ...)       # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Engine, and_, exists, func, or_, select, update

from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import CostEntry

from ..errors import RareIndexError
from .crawl_state import UrlState, save_states
from .queue import enqueue_run
from .raw_store import PreparedBatch, RawRecordStore
from .schema import connector_backfills, connector_runs, connectors, costs

__all__ = [
    "BatchResult",
    "LeaseLost",
    "RunBusy",
    "RunHandle",
    "RunNotClaimable",
    "StoredRun",
    "add_costs",
    "commit_batch",
    "connector_cursor",
    "finish_run",
    "load_run",
    "renew_lease",
    "start_run",
    "takeable_run",
]

FAILURE_REASONS = frozenset(
    {
        "blocked",
        "circuit_open",
        "budget_exhausted",
        "rate_limited",
        "transient",
        "indeterminate",
        "permanent",
        "unsafe_url",
        "dns_error",
        "tls_error",
        "truncated_body",
        "undecodable_body",
        "robots_disallowed",
        "robots_unavailable",
        "parse_error",
        "policy",
        "lease_lost",
        "cancelled",
        "database",
        "crashed",
    }
)
"""Why a run failed: a closed vocabulary, safe as a metric label."""


class LeaseLost(RareIndexError):
    """This worker's lease on the run expired and another took over: it must stop, uncommitted."""


@dataclass(slots=True)
class BatchResult:
    """What one committed batch added."""

    records: int = 0
    dupes: int = 0
    raw_ids: list[str] = field(default_factory=list)


def _now() -> datetime:
    return datetime.now(UTC)


def connector_cursor(engine: Engine, connector_id: str) -> dict[str, Any] | None:
    """The connector's committed cursor (None before its first commit)."""
    with engine.connect() as conn:
        return conn.execute(
            select(connectors.c.cursor).where(connectors.c.id == connector_id)
        ).scalar_one_or_none()


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One ``connector_runs`` row: the one model of a stored run. The crawler reads it to take a
    run over and holds one it claimed (:class:`RunHandle`), the admin overview shows it as the last
    run (the API's ``RunView`` is validated from it), and the health rules read finished ones
    (``rareindex.health.RunRecord`` is this type).
    Build it from a row with :meth:`of`; the defaults make a run easy to write in a test."""

    id: str
    status: str
    mode: str = "incremental"
    connector_id: str = ""
    backfill_id: str | None = None
    outcome: str | None = None
    failure_reason: str | None = None
    pages: int = 0
    records: int = 0
    dupes: int = 0
    engine_stats: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    queued_at: datetime | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    lease_expires_at: datetime | None = None
    lease_token: int = 0
    cursor_start: dict[str, Any] | None = None

    @classmethod
    def of(cls, row: Any) -> StoredRun:
        """The run in a ``connector_runs`` row (any selection of its columns; the others keep
        their defaults)."""
        values = {name: row._mapping[name] for name in _RUN_FIELDS if name in row._mapping}
        if not isinstance(values.get("engine_stats", {}), Mapping):
            values["engine_stats"] = {}
        return cls(**values)

    @property
    def unchanged(self) -> int:
        """Conditional fetches answered 304 (the item is there, unchanged)."""
        return sum(_count(_statuses(stats).get("304")) for stats in self.engine_stats.values())

    @property
    def yielded(self) -> int:
        """Every item the source served this run: new, duplicate or unchanged."""
        return self.records + self.dupes + self.unchanged


_RUN_FIELDS = tuple(f.name for f in fields(StoredRun))


@dataclass(frozen=True, slots=True)
class RunHandle(StoredRun):
    """A run this worker holds (:func:`start_run`): the stored run as claimed, with its fencing
    token, and how long each renewal extends the lease."""

    lease_seconds: float = 300.0


def _count(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _statuses(stats: Mapping[str, Any]) -> Mapping[str, Any]:
    statuses = stats.get("statuses")
    return statuses if isinstance(statuses, Mapping) else {}


def load_run(engine: Engine, run_id: str) -> StoredRun | None:
    """The run ``run_id``, or None when it does not exist."""
    with engine.connect() as conn:
        row = conn.execute(select(connector_runs).where(connector_runs.c.id == run_id)).first()
    return None if row is None else StoredRun.of(row)


class RunBusy(RareIndexError):
    """The connector already has a queued or running crawl: one at a time per connector."""


class RunNotClaimable(RareIndexError):
    """The run is finished, or running under a live lease elsewhere: nothing to do here."""


def _claimable(now: datetime) -> ColumnElement[bool]:
    """A run that may be claimed at ``now``: queued, or running under a lease that has expired."""
    return or_(
        connector_runs.c.status == "queued",
        and_(
            connector_runs.c.status == "running",
            or_(
                connector_runs.c.lease_expires_at.is_(None),
                connector_runs.c.lease_expires_at <= now,
            ),
        ),
    )


def takeable_run(engine: Engine, connector_id: str) -> tuple[str, str] | None:
    """``(run id, mode)`` of the connector's crawl that a direct crawl may take over: queued (its
    message may be stranded in a dead worker), or running under a lease that has expired — never
    one a live lease holds, never a backfill slice (its campaign sends it again). Claiming it
    bumps its fencing token, so a worker that gets the message later finds it not claimable."""
    now = _now()
    with engine.connect() as conn:
        row = conn.execute(
            select(connector_runs.c.id, connector_runs.c.mode)
            .where(
                connector_runs.c.connector_id == connector_id,
                connector_runs.c.backfill_id.is_(None),
                _claimable(now),
            )
            .order_by(connector_runs.c.id)
        ).first()
    return (row.id, row.mode) if row else None


def start_run(
    engine: Engine,
    *,
    connector_id: str,
    mode: str,
    backfill_id: str | None = None,
    lease_seconds: float = 300.0,
    run_id: str | None = None,
) -> RunHandle:
    """Claim a run and hold its lease: the queued run ``run_id`` (a worker's message), or a new
    one (a direct crawl). Claiming bumps the fencing token, so a previous holder can no longer
    commit; a run that is finished or running under a live lease is not claimable.

    Raises:
        RunBusy: a direct crawl while the connector already has a queued or running one.
        RunNotClaimable: ``run_id`` is done, or held by a live lease elsewhere.
    """
    now = _now()
    with engine.begin() as conn:
        if backfill_id is not None:
            cursor = conn.execute(
                select(connector_backfills.c.last_cursor).where(
                    connector_backfills.c.id == backfill_id
                )
            ).scalar_one()
        else:
            cursor = conn.execute(
                select(connectors.c.cursor).where(connectors.c.id == connector_id)
            ).scalar_one()
        if run_id is None:
            run_id = enqueue_run(conn, connector_id, mode, backfill_id, now=now)
            if run_id is None:
                busy = conn.execute(
                    select(connector_runs.c.id, connector_runs.c.status).where(
                        connector_runs.c.connector_id == connector_id,
                        connector_runs.c.status.in_(("queued", "running")),
                    )
                ).first()
                where = f" ({busy.status} run {busy.id})" if busy else ""
                raise RunBusy(
                    f"{connector_id} already has a crawl queued or running{where}; "
                    "wait for it to finish, or run it here with `rareindex crawl "
                    f"{connector_id} --take-over` if no worker will (a lost message)"
                )
        claimable = _claimable(now)
        token = conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == run_id, claimable)
            .values(
                status="running",
                lease_token=connector_runs.c.lease_token + 1,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                started_at=func.coalesce(connector_runs.c.started_at, now),
                cursor_start=cursor,
                engine_stats={},
            )
            .returning(connector_runs.c.lease_token)
        ).scalar_one_or_none()
        if token is None:
            raise RunNotClaimable(f"run {run_id} is finished or held by a live lease")
    return RunHandle(
        id=run_id,
        status="running",
        mode=mode,
        connector_id=connector_id,
        backfill_id=backfill_id,
        lease_token=token,
        cursor_start=cursor,
        lease_seconds=lease_seconds,
    )


def _fence(
    conn: Any, run: RunHandle, *, release: bool = False, also: Any = None, **values: Any
) -> None:
    """Renew (or release) the lease and apply ``values`` — only while this worker still holds
    the token. ``also``: an ``UPDATE`` to run in the same statement, only if the token holds (on
    PostgreSQL one round trip for both, as data-modifying CTEs; elsewhere a second statement)."""
    expires = None if release else _now() + timedelta(seconds=run.lease_seconds)
    fence = (
        update(connector_runs)
        .where(connector_runs.c.id == run.id, connector_runs.c.lease_token == run.lease_token)
        .values(lease_expires_at=expires, **values)
        .returning(connector_runs.c.id)
    )
    if also is not None and conn.dialect.name == "postgresql":
        fenced = fence.cte("fence")
        also_cte = also.where(exists(select(fenced.c.id))).cte("fenced_update")
        held = conn.execute(select(fenced.c.id).add_cte(also_cte)).first()
    else:
        held = conn.execute(fence).first()
        if held is not None and also is not None:
            conn.execute(also)
    if held is None:
        raise LeaseLost(f"run {run.id} lost its lease (token {run.lease_token}); stopping")


def renew_lease(engine: Engine, run: RunHandle) -> None:
    """Extend the run's lease by its length, fenced: the crawler's heartbeat between commits
    (a slow host, a long ``Retry-After``). Raises :class:`LeaseLost` when another worker took
    the run over."""
    with engine.begin() as conn:
        _fence(conn, run)


def add_costs(conn: Any, connector_id: str, entries: Iterable[CostEntry]) -> None:
    """Add the paid-engine charges ``entries`` (as the router reports them) to the ledger: per
    engine and day, the credits and one request per entry."""
    totals: dict[tuple[str, date], tuple[Decimal, int]] = {}
    for entry in entries:
        engine_day = (entry.engine, entry.at.date())
        amount, requests = totals.get(engine_day, (Decimal(0), 0))
        totals[engine_day] = (amount + Decimal(str(entry.credits)), requests + 1)
    for (engine_name, day), (amount, requests) in totals.items():
        key = (
            costs.c.connector_id == connector_id,
            costs.c.day == day,
            costs.c.engine == engine_name,
        )
        current = conn.execute(select(costs.c.credits, costs.c.requests).where(*key)).first()
        if current is None:
            conn.execute(
                costs.insert().values(
                    connector_id=connector_id,
                    day=day,
                    engine=engine_name,
                    credits=amount,
                    requests=requests,
                )
            )
        else:  # exact decimal arithmetic in Python: SQLite has no exact numeric type
            conn.execute(
                update(costs)
                .where(*key)
                .values(credits=current.credits + amount, requests=current.requests + requests)
            )


def commit_batch(
    engine: Engine,
    run: RunHandle,
    store: RawRecordStore,
    records: Sequence[RawRecordInput] | PreparedBatch,
    *,
    connector_version: str,
    parser_version: str,
    cursor: dict[str, Any] | None,
    pages: int = 0,
    backfill_pages: int | None = None,
    credits: Sequence[CostEntry] = (),
    progress: Mapping[str, Any] | None = None,
    url_states: Sequence[UrlState] = (),
) -> BatchResult:
    """Store ``records`` and advance the cursor to ``cursor`` in one fenced transaction.

    ``records`` may come prepared (:func:`~.raw_store.prepare_batch`: a crawl's writer gets
    them so). ``pages`` (the fetches behind the batch) go to the run; a backfill counts
    ``backfill_pages`` when given: the pages its connector reported, in the unit of its
    ``total_pages`` (a variation fetched by id is a fetch, not a page of the listing)."""
    result = BatchResult()
    with engine.begin() as conn:
        stored = store.insert_many(
            conn,
            connector_id=run.connector_id,
            connector_version=connector_version,
            parser_version=parser_version,
            records=records,
            run_id=run.id,
        )
        result.records, result.dupes, result.raw_ids = (
            len(stored.raw_ids),
            stored.dupes,
            stored.raw_ids,
        )
        # The cursor: the connector's, or the backfill's with its progress.
        move: Any = None
        if cursor is not None and run.backfill_id is None:
            move = (
                update(connectors)
                .where(connectors.c.id == run.connector_id)
                .values(cursor=cursor, cursor_updated_at=_now())
            )
        elif cursor is not None:
            move = (
                update(connector_backfills)
                .where(connector_backfills.c.id == run.backfill_id)
                .values(
                    last_cursor=cursor,
                    pages_processed=connector_backfills.c.pages_processed
                    + (pages if backfill_pages is None else backfill_pages),
                    items_processed=connector_backfills.c.items_processed + len(records),
                    **dict(progress or {}),
                )
            )
        # The fence, with the run's counters and the cursor: one statement on PostgreSQL.
        # Checked before the commit, so a worker that lost its lease rolls back everything above.
        _fence(
            conn,
            run,
            also=move,
            pages=connector_runs.c.pages + pages,
            records=connector_runs.c.records + result.records,
            dupes=connector_runs.c.dupes + result.dupes,
            cursor_end=cursor,
        )
        if credits:
            add_costs(conn, run.connector_id, credits)
        if url_states:  # what the budget store learnt while fetching these records
            save_states(conn, run.connector_id, url_states)
    return result


def finish_run(
    engine: Engine,
    run: RunHandle,
    *,
    status: str,
    outcome: str,
    failure_reason: str | None = None,
    error: str | None = None,
    engine_stats: Mapping[str, Any] | None = None,
    cost_credits: Decimal = Decimal(0),
    anomalies: int = 0,
    retry_not_before: datetime | None = None,
) -> None:
    """Close the run (fenced: a stale worker cannot overwrite the new holder's ending).
    ``retry_not_before``: the host's ``Retry-After`` ended it; the scheduler waits until then."""
    if failure_reason is not None and failure_reason not in FAILURE_REASONS:
        raise ValueError(f"unknown failure reason {failure_reason!r}")
    with engine.begin() as conn:
        _fence(
            conn,
            run,
            release=True,
            status=status,
            outcome=outcome,
            failure_reason=failure_reason,
            error=error,
            finished_at=_now(),
            engine_stats=dict(engine_stats or {}),
            cost_credits=cost_credits,
            anomalies=anomalies,
            retry_not_before=retry_not_before,
        )
