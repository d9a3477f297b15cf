"""The scheduler on SQLite and PostgreSQL: due-ness by refresh class from stored times, skips with
reasons, one fenced leader (two schedulers, two threads, two OS processes), a stale leader that
commits nothing, enqueues that are no-ops by constraint even when they race, a tick whose
statement count does not grow with backfill campaigns, and runs whose lease lapsed re-sent at
once."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy import Engine, delete, event, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from structlog.testing import capture_logs

from rareindex.logging import redact_processor
from rareindex.scheduler import LEASE_NAME, Scheduler, TickResult
from rareindex.storage import downgrade, make_engine, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.leases import Lease, acquire, current_lease, holds, release, renew
from rareindex.storage.queue import DuePlan, due_connectors, enqueue_run, enqueue_runs
from rareindex.storage.runs import LeaseLost
from rareindex.storage.schema import connector_backfills, connector_runs, connectors
from rareindex_connectors import ConnectorMeta
from tests.subprocess_env import start_module

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=60)
TABLES = ("leases", "connector_runs", "connector_backfills", "connectors", "sources")


@pytest.fixture(scope="module")
def migrated_pg(pg_url: str) -> Iterator[Engine]:
    """The session's PostgreSQL database, migrated once for this module and left empty after it
    (a PostgreSQL migration costs ~0.4 s; there are 20 tests)."""
    engine = make_engine(pg_url)
    upgrade(engine)
    try:
        yield engine
    finally:
        downgrade(engine, "base")
        engine.dispose()


@pytest.fixture
def pg_db(migrated_pg: Engine) -> Iterator[Engine]:
    """The migrated PostgreSQL database, emptied after the test."""
    try:
        yield migrated_pg
    finally:
        with migrated_pg.begin() as conn:
            for table in TABLES:  # DELETE, not TRUNCATE … CASCADE: that walks every partition
                conn.exec_driver_sql(f"DELETE FROM {table}")  # noqa: S608 (constant names)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_engine(request: pytest.FixtureRequest) -> Engine:
    """Like ``any_engine`` — each test on embedded SQLite and on real PostgreSQL — but migrated,
    and on PostgreSQL emptied after each test instead of migrated from scratch."""
    if request.param == "sqlite":
        engine: Engine = request.getfixturevalue("sqlite_engine")
        upgrade(engine)
        return engine
    return request.getfixturevalue("pg_db")  # type: ignore[no-any-return]


@dataclass
class Stub:
    """Just what the registry sync and the scheduler read from a connector."""

    meta: ConnectorMeta
    version: str = "1"
    parser_version: str = "1"


class FixedClock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def time(self) -> float:
        return self.at.timestamp()

    async def sleep(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def stub(slug: str, refresh_class: str = "HOT", requires: tuple[str, ...] = ()) -> Stub:
    return Stub(
        ConnectorMeta(
            id=slug,
            source=f"Source {slug}",
            engines=("api",),
            categories=("tcg_card",),
            capabilities=("listing",),
            refresh_class=refresh_class,
            requires=requires,
        )
    )


def seed(db: Engine, *stubs: Stub) -> list[Stub]:
    with db.begin() as conn:
        sync_connectors(conn, cast(Any, stubs))  # sync reads only meta and versions
    return list(stubs)


def scheduler(db: Engine, registry: list[Stub], holder: str = "a", **kwargs: Any) -> Scheduler:
    kwargs.setdefault("env", {})
    return Scheduler(db, registry, FixedClock(T0), holder, LEASE.total_seconds(), **kwargs)


def add_run(
    db: Engine,
    connector_id: str,
    *,
    status: str = "succeeded",
    started_at: datetime | None = T0,
    mode: str = "incremental",
    backfill_id: str | None = None,
    **values: Any,
) -> str:
    run_id = f"run_{connector_id}_{time.monotonic_ns()}"
    with db.begin() as conn:
        conn.execute(
            insert(connector_runs).values(
                id=run_id,
                connector_id=connector_id,
                mode=mode,
                backfill_id=backfill_id,
                status=status,
                started_at=started_at,
                **{"queued_at": started_at, **values},
            )
        )
    return run_id


def runs(db: Engine, **where: Any) -> list[Any]:
    query = select(connector_runs).order_by(connector_runs.c.created_at, connector_runs.c.id)
    for name, value in where.items():
        query = query.where(connector_runs.c[name] == value)
    with db.connect() as conn:
        return list(conn.execute(query))


def finish(db: Engine, run_id: str, *, started_at: datetime, status: str = "succeeded") -> None:
    with db.begin() as conn:
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == run_id)
            .values(status=status, started_at=started_at, finished_at=started_at)
        )


def due_ids(db: Engine, now: datetime, registry: list[Stub]) -> set[str]:
    with db.connect() as conn:
        plan = due_connectors(conn, now, {s.meta.id: s.meta for s in registry}, env={})
    return {d.connector_id for d in plan.due}


# --- due-ness ---------------------------------------------------------------------------------


def test_due_per_refresh_class_from_the_last_started_run(db_engine: Engine) -> None:
    registry = seed(
        db_engine,
        stub("hot", "HOT"),
        stub("active", "ACTIVE"),
        stub("normal", "NORMAL"),
        stub("archive", "ARCHIVE"),
    )
    for slug in ("hot", "active", "normal"):
        add_run(db_engine, slug, started_at=T0)
    add_run(db_engine, "archive", status="failed", started_at=T0)  # a started run counts too
    second = timedelta(seconds=1)
    expectations = [
        (timedelta(minutes=5) - second, set()),
        (timedelta(minutes=5), {"hot"}),
        (timedelta(minutes=60) - second, {"hot"}),
        (timedelta(minutes=60), {"hot", "active"}),
        (timedelta(hours=24) - second, {"hot", "active"}),
        (timedelta(hours=24), {"hot", "active", "normal"}),
        (timedelta(days=7) - second, {"hot", "active", "normal"}),
        (timedelta(days=7), {"hot", "active", "normal", "archive"}),
    ]
    for offset, expected in expectations:
        assert due_ids(db_engine, T0 + offset, registry) == expected, offset


def test_a_run_our_database_cut_short_counts_only_for_five_minutes(db_engine: Engine) -> None:
    """Two NORMAL connectors crawled a day ago, then failed 30 s later: the source's failure
    counts for the day's interval; the failure of our own database (``database``) only for
    5 minutes, then the crawl is due again (an ARCHIVE source would otherwise wait a week)."""
    registry = seed(db_engine, stub("outage", "NORMAL"), stub("broken", "NORMAL"))
    day_ago = T0 - timedelta(days=1)
    for slug, reason in (("outage", "database"), ("broken", "transient")):
        add_run(db_engine, slug, started_at=day_ago)
        add_run(
            db_engine, slug, status="failed", started_at=T0, finished_at=T0, failure_reason=reason
        )
    assert due_ids(db_engine, T0 + timedelta(minutes=5) - timedelta(seconds=1), registry) == set()
    assert due_ids(db_engine, T0 + timedelta(minutes=5), registry) == {"outage"}
    assert due_ids(db_engine, T0 + timedelta(hours=24), registry) == {"outage", "broken"}


def test_a_lost_database_is_the_database_failure_reason() -> None:
    from sqlalchemy.exc import OperationalError

    from rareindex.crawl import failure_reason

    lost = OperationalError("SELECT 1", {}, Exception("server closed the connection"))
    assert failure_reason(lost) == "database"
    assert failure_reason(ValueError("a bug")) == "crashed"


def test_never_run_connectors_are_due_and_backfill_runs_do_not_count(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("fresh", "ARCHIVE"), stub("backfilled", "ARCHIVE"))
    with db_engine.begin() as conn:
        conn.execute(insert(connector_backfills).values(id="bkf_1", connector_id="backfilled"))
    add_run(db_engine, "backfilled", mode="backfill", backfill_id="bkf_1", started_at=T0)
    assert due_ids(db_engine, T0, registry) == {"fresh", "backfilled"}


def test_a_tick_enqueues_due_runs_and_sends_only_ids_after_commit(
    db_engine: Engine,
) -> None:
    registry = seed(db_engine, stub("hot", "HOT"), stub("normal", "NORMAL"))
    add_run(db_engine, "normal", started_at=T0 - timedelta(hours=1))
    seen: list[tuple[str, str]] = []

    def send(run_id: str) -> None:
        # Sent after the commit: another connection already sees the queued row.
        with db_engine.connect() as conn:
            row = conn.execute(select(connector_runs).where(connector_runs.c.id == run_id)).one()
        seen.append((run_id, row.status))

    with capture_logs() as logs:
        result = scheduler(db_engine, registry, send=send).tick(T0)
    assert result.leader and result.token == 1
    queued = runs(db_engine, status="queued")
    assert [(r.connector_id, r.mode, r.queued_at) for r in queued] == [("hot", "incremental", T0)]
    assert seen == [(queued[0].id, "queued")] and result.enqueued == [queued[0].id]
    events = [e for e in logs if e["event"] == "scheduler.enqueued"]
    assert [(e["connector"], e["run"]) for e in events] == [("hot", queued[0].id)]
    assert any(e["event"] == "scheduler.tick" and e["enqueued"] == 1 for e in logs)


def test_after_tick_sees_every_tick_and_whether_it_led(db_engine: Engine) -> None:
    """The hook periodic leader-only jobs (health snapshots) hang off: the follower is told it
    did not lead, so it never runs them."""
    registry = seed(db_engine, stub("hot", "HOT"))
    stop = threading.Event()
    seen: dict[str, list[bool]] = {"a": [], "b": []}

    def after(holder: str) -> Any:
        def hook(result: Any) -> None:
            seen[holder].append(result.leader)
            if len(seen[holder]) == 2:
                stop.set()

        return hook

    leader = scheduler(db_engine, registry, "a", after_tick=after("a"))
    leader.tick(T0)
    follower = scheduler(db_engine, registry, "b", after_tick=after("b"))
    follower.run_forever(stop, interval_s=0.01)
    assert seen["b"] == [False, False]
    stop.clear()
    leader.run_forever(stop, interval_s=0.01)
    assert seen["a"] == [True, True]


def test_missed_ticks_only_delay_a_crawl(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("hot", "HOT"))
    clock = FixedClock(T0)
    sched = Scheduler(db_engine, registry, clock, "a", 600, env={})  # ticks read the clock
    (first,) = sched.tick().enqueued
    finish(db_engine, first, started_at=T0)
    clock.at = T0 + timedelta(minutes=4, seconds=59)
    assert sched.tick().enqueued == []
    # Three hours without a tick (the lease lapsed, too): one crawl is due, not 36.
    clock.at = T0 + timedelta(hours=3)
    later = sched.tick()
    assert (later.token, len(later.enqueued)) == (2, 1)
    clock.at += timedelta(seconds=30)
    assert sched.tick().enqueued == []
    assert [r.queued_at for r in runs(db_engine, connector_id="hot")] == [
        T0,
        T0 + timedelta(hours=3),
    ]


# --- skips --------------------------------------------------------------------------------------


def test_paused_disabled_and_maintenance_connectors_are_skipped(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("on"), stub("paused"), stub("disabled"), stub("maintenance"))
    with db_engine.begin() as conn:
        for slug in ("paused", "disabled", "maintenance"):
            conn.execute(update(connectors).where(connectors.c.id == slug).values(status=slug))
    result = scheduler(db_engine, registry).tick(T0)
    assert [r.connector_id for r in runs(db_engine)] == ["on"]
    assert sorted((s.connector_id, s.reason) for s in result.skipped) == [
        ("disabled", "not_active"),
        ("maintenance", "not_active"),
        ("paused", "not_active"),
    ]


def test_unmet_requires_are_skipped_with_a_reason(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("paid", requires=("PAID_API_KEY", "PAID_REGION")))
    with capture_logs() as logs:
        result = scheduler(db_engine, registry, env={"PAID_API_KEY": "k", "PAID_REGION": ""}).tick(
            T0
        )
    assert result.enqueued == [] and runs(db_engine) == []
    skipped = [e for e in logs if e["event"] == "scheduler.skipped"]
    assert [(e["connector"], e["reason"], e["missing"]) for e in skipped] == [
        ("paid", "requires_unmet", ["PAID_REGION"])
    ]
    env = {"PAID_API_KEY": "k", "PAID_REGION": "eu"}
    assert len(scheduler(db_engine, registry, env=env).tick(T0).enqueued) == 1


def test_a_connector_with_a_queued_or_running_run_is_skipped(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("hot", "HOT"))
    sched = scheduler(db_engine, registry)
    (run_id,) = sched.tick(T0).enqueued
    with capture_logs() as logs:
        again = sched.tick(T0 + timedelta(hours=1))
    assert again.enqueued == [] and [(s.connector_id, s.reason) for s in again.skipped] == [
        ("hot", "already_queued")
    ]
    assert any(e["event"] == "scheduler.skipped" and e["reason"] == "already_queued" for e in logs)
    with db_engine.begin() as conn:
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == run_id)
            .values(status="running", started_at=T0, lease_expires_at=T0 + timedelta(days=1))
        )
    assert sched.tick(T0 + timedelta(hours=2)).enqueued == []
    finish(db_engine, run_id, started_at=T0)
    assert len(sched.tick(T0 + timedelta(hours=2)).enqueued) == 1


def test_running_backfill_campaigns_continue_after_incremental_crawls(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("arch", "ARCHIVE"), stub("done", "ARCHIVE"))
    with db_engine.begin() as conn:
        conn.execute(
            insert(connector_backfills),
            [
                {"id": "bkf_live", "connector_id": "arch", "status": "running"},
                {"id": "bkf_done", "connector_id": "done", "status": "completed"},
            ],
        )
    sched = scheduler(db_engine, registry)
    first = sched.tick(T0)  # incremental crawls first: freshness beats history
    assert sorted((r.connector_id, r.mode) for r in runs(db_engine)) == [
        ("arch", "incremental"),
        ("done", "incremental"),
    ]
    for run_id in first.enqueued:
        finish(db_engine, run_id, started_at=T0)
    (slice_id,) = sched.tick(T0 + timedelta(minutes=1)).enqueued
    (row,) = runs(db_engine, id=slice_id)
    assert (row.connector_id, row.mode, row.backfill_id) == ("arch", "backfill", "bkf_live")
    # A failed slice backs off instead of hammering the source every tick …
    with db_engine.begin() as conn:
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == slice_id)
            .values(status="failed", started_at=T0, finished_at=T0 + timedelta(minutes=2))
        )
    backoff = sched.tick(T0 + timedelta(minutes=3))
    assert backoff.enqueued == [] and [s.reason for s in backoff.skipped] == ["backfill_backoff"]
    # … and the campaign goes on after it.
    (retry,) = sched.tick(T0 + timedelta(minutes=17)).enqueued
    (row,) = runs(db_engine, id=retry)
    assert (row.connector_id, row.mode, row.backfill_id) == ("arch", "backfill", "bkf_live")
    assert len(runs(db_engine, connector_id="done")) == 1  # a completed campaign is left alone


def test_each_connector_continues_its_oldest_campaign_after_its_last_slice(
    db_engine: Engine,
) -> None:
    """The campaign and its last slice are chosen per connector in one query: the oldest running
    campaign, and the newest slice by creation (not by start or finish)."""
    registry = seed(db_engine, *(stub(slug, "ARCHIVE") for slug in ("two", "retry", "wait")))
    for slug in ("two", "retry", "wait"):
        add_run(db_engine, slug, started_at=T0)  # incremental crawls done: not due for a week
    day = timedelta(days=1)
    campaigns = [
        ("bkf_new", "two", "running", T0 - day),
        ("bkf_old", "two", "running", T0 - 2 * day),  # older, though its id sorts after
        ("bkf_paused", "retry", "paused", T0 - 3 * day),  # older, but paused: left alone
        ("bkf_retry", "retry", "running", T0),
        ("bkf_wait", "wait", "running", T0),
    ]
    keys = ("id", "connector_id", "status", "created_at")
    with db_engine.begin() as conn:
        conn.execute(
            insert(connector_backfills), [dict(zip(keys, c, strict=True)) for c in campaigns]
        )

    def add_slice(slug: str, backfill_id: str, status: str, created: datetime) -> None:
        add_run(
            db_engine,
            slug,
            status=status,
            mode="backfill",
            backfill_id=backfill_id,
            started_at=created,
            finished_at=created + timedelta(minutes=1),
            created_at=created,
        )

    # "retry": a slice failed recently, but a later one (created after it) succeeded.
    add_slice("retry", "bkf_retry", "failed", T0 - timedelta(minutes=4))
    add_slice("retry", "bkf_retry", "succeeded", T0 - timedelta(minutes=30))
    with db_engine.begin() as conn:  # created last, started first: creation order decides
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.status == "succeeded", connector_runs.c.mode == "backfill")
            .values(created_at=T0 - timedelta(minutes=2))
        )
    # "wait": its last slice failed 4 minutes ago (an older one failed long ago).
    add_slice("wait", "bkf_wait", "failed", T0 - timedelta(hours=3))
    add_slice("wait", "bkf_wait", "failed", T0 - timedelta(minutes=4))
    result = scheduler(db_engine, registry).tick(T0)
    slices = {r.connector_id: r.backfill_id for r in runs(db_engine) if r.id in result.enqueued}
    assert slices == {"two": "bkf_old", "retry": "bkf_retry"}
    assert [(s.connector_id, s.reason) for s in result.skipped] == [("wait", "backfill_backoff")]


def count_statements(db: Engine, tick: Any) -> tuple[int, TickResult]:
    """The SQL statements ``tick()`` sends (``before_cursor_execute``), and its result."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        seen.append(statement)

    event.listen(db, "before_cursor_execute", record)
    try:
        result = tick()
    finally:
        event.remove(db, "before_cursor_execute", record)
    return len(seen), result


def test_a_tick_sends_as_many_statements_for_30_campaigns_as_for_3(db_engine: Engine) -> None:
    """Deciding reads every campaign's last slice in one query, and enqueueing inserts every due
    run in one statement: the statements a tick sends do not grow with the campaigns (they once
    grew by two per campaign: a query for its last slice, an INSERT for its next one)."""
    slugs = [f"c{i:02d}" for i in range(30)]
    registry = seed(db_engine, *(stub(slug, "ARCHIVE") for slug in slugs))
    for slug in slugs:
        add_run(db_engine, slug, started_at=T0)  # not due for an incremental crawl

    def campaigns_for(chosen: list[str]) -> None:
        with db_engine.begin() as conn:
            conn.execute(
                insert(connector_backfills),
                [{"id": f"bkf_{slug}", "connector_id": slug} for slug in chosen],
            )
        for slug in chosen:  # a history: a slice that failed long ago, then one that succeeded
            for status, ago in (("failed", timedelta(hours=2)), ("succeeded", timedelta(hours=1))):
                add_run(
                    db_engine,
                    slug,
                    status=status,
                    mode="backfill",
                    backfill_id=f"bkf_{slug}",
                    started_at=T0 - ago,
                    finished_at=T0 - ago,
                    created_at=T0 - ago,
                )

    def forget(enqueued: list[str]) -> None:  # every tick sees the same campaigns wanting a slice
        with db_engine.begin() as conn:
            conn.execute(delete(connector_runs).where(connector_runs.c.id.in_(enqueued)))

    sched = scheduler(db_engine, registry)
    campaigns_for(slugs[:3])
    forget(sched.tick(T0).enqueued)  # takes the lease: later ticks renew it
    few, with_3 = count_statements(db_engine, lambda: sched.tick(T0 + timedelta(minutes=1)))
    forget(with_3.enqueued)
    campaigns_for(slugs[3:])
    many, with_30 = count_statements(db_engine, lambda: sched.tick(T0 + timedelta(minutes=2)))
    assert (len(with_3.enqueued), len(with_30.enqueued)) == (3, 30)
    assert {r.mode for r in runs(db_engine, status="queued")} == {"backfill"}
    assert many == few, f"{few} statements for 3 campaigns, {many} for 30"
    assert few <= 10, few  # lease, decide (2 reads), fence, one INSERT, sweep: a bounded handful


def test_enqueue_runs_inserts_what_is_free_in_one_statement(db_engine: Engine) -> None:
    from rareindex.storage.queue import Due

    seed(db_engine, stub("free"), stub("busy"), stub("other"))
    with db_engine.begin() as conn:
        busy = enqueue_run(conn, "busy", "incremental", now=T0)
    due = [Due("free", "incremental"), Due("busy", "incremental"), Due("other", "incremental")]
    with db_engine.begin() as conn:
        statements, inserted = count_statements(db_engine, lambda: enqueue_runs(conn, due, now=T0))
    assert statements == 1 and sorted(inserted) == ["free", "other"]
    assert {r.connector_id: r.id for r in runs(db_engine, status="queued")} == {
        "busy": busy,
        **inserted,
    }
    with pytest.raises(ValueError, match="backfill_id"), db_engine.begin() as conn:
        enqueue_runs(conn, [Due("free", "backfill")], now=T0)


# --- one leader ---------------------------------------------------------------------------------


def test_renewal_keeps_the_token_and_a_takeover_increments_it(db_engine: Engine) -> None:
    with db_engine.begin() as conn:
        a = acquire(conn, "role", "a", now=T0, ttl=LEASE)
        assert a is not None and a.token == 1
        assert acquire(conn, "role", "b", now=T0 + LEASE / 2, ttl=LEASE) is None
        renewed = renew(conn, a, now=T0 + LEASE / 2, ttl=LEASE)
        assert renewed is not None and renewed.token == 1
        assert renewed.expires_at == T0 + LEASE / 2 + LEASE
        again = acquire(conn, "role", "a", now=T0 + LEASE, ttl=LEASE)  # live: a renewal
        assert again is not None and again.token == 1
        later = T0 + 3 * LEASE
        b = acquire(conn, "role", "b", now=later, ttl=LEASE)
        assert b is not None and b.token == 2
        assert renew(conn, renewed, now=later, ttl=LEASE) is None
        assert not holds(conn, "role", 1, now=later)
        assert holds(conn, "role", 2, now=later)
        assert not holds(conn, "role", 2, now=later + LEASE)  # expired: no longer held
        assert release(conn, b, now=later) and not release(conn, a, now=later)
        a2 = acquire(conn, "role", "a", now=later, ttl=LEASE)  # released: no need to wait
        assert a2 is not None and a2.token == 3
        # A lapse is a change of hands even for the same holder.
        a3 = acquire(conn, "role", "a", now=later + 2 * LEASE, ttl=LEASE)
        assert a3 is not None and a3.token == 4
        stored = current_lease(conn, "role")
        assert stored is not None and (stored.holder, stored.token) == ("a", 4)


def test_two_schedulers_have_one_leader_and_a_takeover_fences_the_old_one(
    db_engine: Engine,
) -> None:
    registry = seed(db_engine, stub("hot", "HOT"), stub("active", "ACTIVE"))
    first, second = scheduler(db_engine, registry, "a"), scheduler(db_engine, registry, "b")
    a = first.tick(T0)
    b = second.tick(T0 + timedelta(seconds=1))
    assert (a.leader, len(a.enqueued), b.leader, b.enqueued) == (True, 2, False, [])
    for run in runs(db_engine):
        finish(db_engine, run.id, started_at=T0)
    # "a" stops ticking; once its lease expires "b" takes over with the next token.
    takeover = T0 + LEASE + timedelta(seconds=1)
    b = second.tick(takeover)
    assert (b.leader, b.token, b.enqueued) == (True, 2, [])
    with capture_logs() as logs:
        a = first.tick(takeover + LEASE / 2)  # "a" comes back: it is no longer the leader
    assert (a.leader, a.enqueued) == (False, [])
    assert [e["event"] for e in logs if e["event"].startswith("scheduler.lease")] == [
        "scheduler.lease_lost"
    ]
    assert len(runs(db_engine)) == 2


def test_a_leader_taken_over_between_decide_and_commit_enqueues_nothing(
    db_engine: Engine,
) -> None:
    registry = seed(db_engine, stub("hot", "HOT"), stub("normal", "NORMAL"))

    def take_over(plan: DuePlan) -> None:
        assert len(plan.due) == 2  # "a" decided to enqueue both …
        with db_engine.begin() as conn:  # … and stalled until its lease was taken over
            assert acquire(conn, LEASE_NAME, "b", now=T0 + 2 * LEASE, ttl=LEASE) is not None

    stale = scheduler(db_engine, registry, "a", before_commit=take_over)
    sent: list[str] = []
    stale.send = sent.append
    with capture_logs() as logs:
        result = stale.tick(T0)
    assert (result.leader, result.lease_lost, result.enqueued, sent) == (False, True, [], [])
    assert runs(db_engine) == []
    assert [e["fencing_token"] for e in logs if e["event"] == "scheduler.lease_lost"] == [1]
    # The stale instance's commit path is fenced the same way when called directly.
    with pytest.raises(LeaseLost):
        stale.commit(stale.decide(T0), Lease(LEASE_NAME, "a", 1, T0, T0 + LEASE), T0)
    assert runs(db_engine) == []


def test_a_leader_whose_lease_lapsed_mid_tick_enqueues_nothing(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("hot", "HOT"))
    stale = scheduler(db_engine, registry, "a")
    stale.lease_ttl = timedelta(seconds=0.1)
    stale.before_commit = lambda plan: time.sleep(0.2)  # a GC pause, a slow disk …
    result = stale.tick(T0)
    assert (result.lease_lost, result.enqueued) == (True, [])
    assert runs(db_engine) == []


def test_a_takeover_waits_for_the_holders_commit(db_engine: Engine) -> None:
    """holds() keeps a takeover out until the holder's transaction ends (PostgreSQL: FOR UPDATE
    on the lease row; SQLite: the write lock), so a commit cannot race a takeover."""
    seed(db_engine, stub("hot", "HOT"))
    with db_engine.begin() as conn:
        lease = acquire(conn, LEASE_NAME, "a", now=T0, ttl=LEASE)
    assert lease is not None
    took: list[int | None] = []

    def take_over() -> None:
        with db_engine.begin() as conn:
            new = acquire(conn, LEASE_NAME, "b", now=T0 + 2 * LEASE, ttl=LEASE)
            took.append(new.token if new else None)

    taker = threading.Thread(target=take_over)
    with db_engine.begin() as conn:
        assert holds(conn, LEASE_NAME, lease.token, now=T0 + LEASE / 2)
        taker.start()
        taker.join(0.3)
        assert taker.is_alive() and took == []  # blocked behind our transaction
        assert enqueue_run(conn, "hot", "incremental", now=T0) is not None
    taker.join(10)
    assert took == [2]
    assert [r.connector_id for r in runs(db_engine)] == ["hot"]


def test_two_scheduler_threads_enqueue_each_due_crawl_once(db_engine: Engine) -> None:
    registry = seed(db_engine, *(stub(f"c{i}", ("HOT", "ACTIVE")[i % 2]) for i in range(8)))
    stop = time.monotonic() + 0.6
    leader_ticks: dict[str, int] = {"a": 0, "b": 0}
    sent: dict[str, list[str]] = {"a": [], "b": []}

    def crawl_at_once(holder: str) -> Any:
        def send(run_id: str) -> None:
            sent[holder].append(run_id)
            finish(db_engine, run_id, started_at=datetime.now(UTC))

        return send

    def loop(holder: str) -> None:
        sched = Scheduler(db_engine, registry, None, holder, 30, send=crawl_at_once(holder), env={})
        while time.monotonic() < stop:
            leader_ticks[holder] += sched.tick().leader
            time.sleep(0.005)

    threads = [threading.Thread(target=loop, args=(h,)) for h in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert sorted(leader_ticks.values())[0] == 0 and sorted(leader_ticks.values())[1] > 2
    assert sorted(len(v) for v in sent.values()) == [0, 8]
    per_connector = [r.connector_id for r in runs(db_engine)]
    assert sorted(per_connector) == sorted(f"c{i}" for i in range(8))


def test_two_scheduler_processes_enqueue_each_due_crawl_once(pg_db: Engine) -> None:
    classes = ("HOT", "ACTIVE", "NORMAL", "ARCHIVE")
    slugs = [f"proc-{i}" for i in range(12)]
    seed(pg_db, *(stub(slug, classes[i % 4]) for i, slug in enumerate(slugs)))
    url = pg_db.url.render_as_string(hide_password=False)
    workers = [
        start_module("tests.integration.scheduler_worker", url, holder, "2.0", stdin=True)
        for holder in ("proc-a", "proc-b")
    ]
    for worker in workers:  # both imported and connected, however loaded the machine is
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "ready", worker.communicate(timeout=15)[1]
    start_at = time.time() + 0.2
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write(f"{start_at}\n")
        worker.stdin.flush()  # communicate() below closes it
    summaries = []
    for worker in workers:
        out, err = worker.communicate(timeout=15)
        assert worker.returncode == 0, err
        summaries.append(json.loads(out.strip().splitlines()[-1]))
    leaders = [s for s in summaries if s["leading"]]
    assert len(leaders) == 1, summaries
    follower = next(s for s in summaries if not s["leading"])
    assert follower["following"] > 10 and follower["sent"] == []  # it really was ticking
    assert len(leaders[0]["sent"]) == len(slugs)
    rows = runs(pg_db)
    assert sorted(r.connector_id for r in rows) == sorted(slugs)
    assert {r.status for r in rows} == {"succeeded"}


# --- the queue ----------------------------------------------------------------------------------


def test_a_duplicate_enqueue_is_a_no_op_by_constraint(db_engine: Engine) -> None:
    seed(db_engine, stub("hot"), stub("other"))
    with db_engine.begin() as conn:
        first = enqueue_run(conn, "hot", "incremental")
        assert first is not None
        for _ in range(12):  # past psycopg's prepare threshold: PostgreSQL plans it generically
            assert enqueue_run(conn, "hot", "incremental") is None
        assert enqueue_run(conn, "other", "incremental") is not None
    # The database refuses a second active run however it is written …
    with pytest.raises(IntegrityError), db_engine.begin() as conn:
        conn.execute(
            insert(connector_runs).values(
                id="run_sneaky", connector_id="hot", mode="incremental", status="running"
            )
        )
    # … but finished runs do not occupy the connector.
    finish(db_engine, first, started_at=T0)
    with db_engine.begin() as conn:
        assert enqueue_run(conn, "hot", "incremental") is not None
    with db_engine.connect() as conn:
        counts: dict[str, int] = dict(
            conn.execute(
                select(connector_runs.c.status, func.count()).group_by(connector_runs.c.status)
            ).all()
        )
    assert counts == {"queued": 2, "succeeded": 1}
    with pytest.raises(ValueError, match="backfill_id"), db_engine.begin() as conn:
        enqueue_run(conn, "hot", "backfill")


def test_racing_enqueues_on_two_connections_write_one_run(db_engine: Engine) -> None:
    seed(db_engine, stub("hot"))
    first_inserted = threading.Event()
    results: dict[str, Any] = {}

    def first() -> None:
        with db_engine.begin() as conn:
            results["first"] = enqueue_run(conn, "hot", "incremental")
            first_inserted.set()
            time.sleep(0.3)  # hold the uncommitted row while the second one tries

    def second() -> None:
        first_inserted.wait(5)
        started = time.monotonic()
        with db_engine.begin() as conn:
            results["second"] = enqueue_run(conn, "hot", "incremental")
        results["waited_s"] = time.monotonic() - started

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(15)
    assert results["first"] is not None and results["second"] is None
    assert results["waited_s"] >= 0.15  # it waited on the constraint, then did nothing
    assert [r.id for r in runs(db_engine)] == [results["first"]]


def test_lost_messages_are_resent_and_dead_runs_closed(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("lost", "ARCHIVE"), stub("dead", "ARCHIVE"), stub("zombie"))
    long_ago, expired = T0 - timedelta(hours=2), T0 - timedelta(minutes=1)
    lost = add_run(db_engine, "lost", status="queued", started_at=None, queued_at=long_ago)
    dead, zombie = (
        add_run(
            db_engine,
            slug,
            status="running",
            started_at=long_ago,
            lease_token=claims,
            lease_expires_at=expired,
        )
        for slug, claims in (("dead", 1), ("zombie", 3))
    )
    sent: list[str] = []
    sched = scheduler(db_engine, registry, send=sent.append)
    with capture_logs() as logs:
        result = sched.tick(T0)
    assert sorted(result.resent) == sorted([lost, dead]) and result.crashed == [zombie]
    assert sorted(sent) == sorted([lost, dead])  # zombie's connector was not yet free at decide
    (closed,) = runs(db_engine, id=zombie)
    assert (closed.status, closed.failure_reason, closed.lease_token) == ("failed", "crashed", 4)
    assert runs(db_engine, id=lost)[0].queued_at == T0  # re-sent now: not again next tick
    assert any(e["event"] == "scheduler.run_crashed" for e in logs)
    later = sched.tick(T0 + timedelta(minutes=1))
    assert later.resent == []
    # The freed HOT connector gets a fresh run.
    assert [runs(db_engine, id=r)[0].connector_id for r in later.enqueued] == ["zombie"]


def test_a_run_whose_lease_lapsed_is_resent_at_once_and_once_per_lapse(db_engine: Engine) -> None:
    """A worker that lost the database cannot finish its run, and its actor's retry (seconds
    later) meets the lease still live and gives up: the run is re-sent at the first tick after
    its lease lapsed — not ``resend_after`` (30 min) after it was last handed out — and once per
    lapse, so a live holder is never given a rival and a re-sent message is not sent every
    tick. The taker's claim bumps the fencing token (``start_run``), fencing the old holder."""
    registry = seed(db_engine, stub("cut", "ARCHIVE"))
    lease = timedelta(minutes=5)
    run_id = add_run(
        db_engine,
        "cut",
        status="running",
        started_at=T0 - timedelta(minutes=10),
        queued_at=T0 - timedelta(minutes=10),
        lease_token=1,
        lease_expires_at=T0 + lease,
    )
    sent: list[str] = []
    sched = scheduler(db_engine, registry, send=sent.append)
    assert sched.tick(T0).resent == []  # live lease: its holder is at work
    assert sched.tick(T0 + lease).resent == [run_id]  # lapsed: re-sent at once
    assert sched.tick(T0 + lease + timedelta(minutes=1)).resent == []  # once per lapse
    # Taken over (claim: token 2, a new lease) and lost again: re-sent again once it lapses.
    retaken = T0 + lease + timedelta(minutes=2)
    with db_engine.begin() as conn:
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == run_id)
            .values(lease_token=2, lease_expires_at=retaken + lease)
        )
    assert sched.tick(retaken + lease - timedelta(seconds=1)).resent == []
    assert sched.tick(retaken + lease).resent == [run_id]
    # Nobody claims it (the message was lost too): re-sent again every resend_after.
    assert sched.tick(retaken + lease + timedelta(minutes=29)).resent == []
    assert sched.tick(retaken + lease + timedelta(minutes=30)).resent == [run_id]
    assert sent == [run_id, run_id, run_id]
    (row,) = runs(db_engine, id=run_id)
    assert (row.status, row.lease_token) == ("running", 2)  # the sweep never claims it itself


def test_the_fencing_token_is_logged_and_secrets_are_still_redacted(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("hot"))
    with capture_logs() as logs:
        scheduler(db_engine, registry).tick(T0)
    redact = redact_processor(["s3cr3t-value"])
    rendered = [redact(None, "info", dict(e)) for e in logs]
    acquired = [e for e in rendered if e["event"] == "scheduler.lease_acquired"]
    ticks = [e for e in rendered if e["event"] == "scheduler.tick"]
    assert [e["fencing_token"] for e in acquired + ticks] == [1, 1]
    assert not any("token" in e for e in rendered)  # renamed everywhere
    assert redact(None, "info", {"token": "t", "api_token": "t", "x": "s3cr3t-value"}) == {
        "token": "[redacted]",
        "api_token": "[redacted]",
        "x": "[redacted]",
    }


def test_a_failing_send_leaves_the_run_queued_for_the_sweep(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("first"), stub("second"))

    def send(run_id: str) -> None:
        raise ConnectionError("broker down")

    with capture_logs() as logs:
        result = scheduler(db_engine, registry, send=send).tick(T0)
    assert len(result.enqueued) == 2
    assert [r.status for r in runs(db_engine)] == ["queued", "queued"]
    assert [e["error"] for e in logs if e["event"] == "scheduler.send_failed"] == [
        "ConnectionError",
        "ConnectionError",
    ]


def test_run_forever_ticks_until_stopped_and_releases_the_lease(db_engine: Engine) -> None:
    registry = seed(db_engine, stub("hot"))
    sent = threading.Event()
    sched = Scheduler(db_engine, registry, None, "a", 60, send=lambda _: sent.set(), env={})
    stop = threading.Event()
    thread = threading.Thread(target=sched.run_forever, args=(stop, 0.05))
    thread.start()
    assert sent.wait(5)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    with db_engine.connect() as conn:
        lease = current_lease(conn, LEASE_NAME)
    assert lease is not None and lease.expires_at <= datetime.now(UTC)
    with db_engine.begin() as conn:  # released: another takes over at once, next token
        taken = acquire(conn, LEASE_NAME, "b", now=datetime.now(UTC), ttl=LEASE)
    assert taken is not None and taken.token == 2


def test_migration_closes_older_duplicate_active_runs(db_engine: Engine) -> None:
    downgrade(db_engine, "0001")
    with db_engine.begin() as conn:
        sync_connectors(conn, cast(Any, [stub("hot")]))
    older = add_run(db_engine, "hot", status="running", started_at=T0)
    time.sleep(0.01)
    newer = add_run(db_engine, "hot", status="queued", started_at=None)
    upgrade(db_engine)
    statuses = {r.id: (r.status, r.failure_reason) for r in runs(db_engine)}
    assert statuses == {older: ("failed", "crashed"), newer: ("queued", None)}
