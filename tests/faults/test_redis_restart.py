"""Fault: Redis (the broker) restarts without persistence while work is queued in it.

Two exercises, each on a Redis of the test's own that is killed and started empty on the same
port, so the messages it held are gone; durable state is in the database, and sweeps find it.

1. **Before the workers start.** Two kinds of queued work sit in Redis: normalize messages for a
   store the test crawled (what a crawl actor sends after its run), and the crawl message a real
   scheduler process sent for a due store. A worker started afterwards re-sends normalize work
   for every raw record that has no normalized row (``workers.actors.sweep_pipeline`` at
   start-up); the scheduler process, which kept running through the restart, re-sends the
   still-``queued`` crawl run once its message is overdue (``sweep_stale_runs``; the test moves
   the run's ``queued_at`` back past the 30-minute ``resend_after`` instead of waiting). In the
   end the store is crawled exactly once and every raw record of both stores is normalized
   exactly once.
2. **While the fleet runs.** A worker and a scheduler run (and have swept at start); the worker is
   frozen (SIGSTOP, as a busy or stalled worker) while normalize messages wait for it, Redis
   restarts, the worker goes on. No process starts again, so only the scheduler leader's
   periodic sweep (``workers.actors.PipelineSweep``, every ``--sweep-every`` seconds from its
   ``after_tick``) can find the lost work; it does, and every raw record is normalized once.
"""

from __future__ import annotations

import asyncio
import json
import signal
from datetime import timedelta
from pathlib import Path

import redis
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker
from sqlalchemy import Engine, func, select, update

from rareindex.cli.crawl_cmd import crawl_connectors
from rareindex.settings import Settings
from rareindex.storage import upgrade
from rareindex.storage.normalized_store import unnormalized_raw_ids
from rareindex.storage.schema import connector_runs, normalized_records, raw_records
from rareindex_fakeweb import FAKE_HOSTS
from workers.actors import RAW_BATCH, PipelineSweep, declare_actors

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until


def queued(broker_url: str, queue: str) -> int:
    client = redis.Redis.from_url(broker_url)
    try:
        return int(client.hlen(f"dramatiq:{queue}.msgs"))
    finally:
        client.close()


def raw_count(db: Engine, connector_id: str) -> int:
    with db.connect() as conn:
        query = select(func.count()).where(raw_records.c.connector_id == connector_id)
        return int(conn.execute(query).scalar_one())


def normalized_once(db: Engine) -> tuple[int, int, int]:
    """(raw records, raw records with normalized rows, normalized rows)."""
    with db.connect() as conn:
        raw = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
        covered = conn.execute(
            select(func.count(func.distinct(normalized_records.c.raw_id)))
        ).scalar_one()
        rows = conn.execute(select(func.count()).select_from(normalized_records)).scalar_one()
    return int(raw), int(covered), int(rows)


def events(log: str, name: str) -> list[dict[str, object]]:
    found = []
    for line in log.splitlines():
        if line.startswith("{") and f'"{name}"' in line:
            found.append(json.loads(line))
    return [e for e in found if e.get("event") == name]


def test_work_queued_in_a_restarted_redis_is_found_again_by_the_sweeps(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    upgrade(pg_engine)
    root = connectors_dir(tmp_path, {"coins-woo": {}, "cards-shop": {"page_size": 100}})
    settings = Settings(
        _env_file=None,
        database_url=pg_url,
        broker_url=own_redis.url,
        connectors_dir=root,
        data_dir=tmp_path / "fleet",
        connect_to={h: f"127.0.0.1:{faulty_web.port}" for h in FAKE_HOSTS},
    )
    # Queued work 1: coins-woo crawled, its normalize messages sent (as the crawl actor does).
    (summary,) = asyncio.run(
        crawl_connectors(settings, pg_engine, ["coins-woo"], show_progress=False)
    )
    assert summary.status == "succeeded" and summary.records == 80
    broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]
    actors = declare_actors(broker, settings, db=pg_engine)
    for start in range(0, len(summary.raw_ids), RAW_BATCH):
        actors.normalize.send(summary.raw_ids[start : start + RAW_BATCH])
    broker.close()
    assert queued(own_redis.url, "normalize") == 1

    fleet = Processes(
        tmp_path,
        fleet_env(
            database_url=pg_url,
            broker_url=own_redis.url,
            connectors_dir=root,
            data_dir=tmp_path / "fleet",
            web_port=faulty_web.port,
        ),
    )
    try:
        # Queued work 2: the scheduler enqueues cards-shop (coins-woo ran just now) and sends it.
        fleet.start("scheduler", "scheduler", "--interval", "1")
        wait_until(lambda: queued(own_redis.url, "crawl") == 1, timeout=30, what="a crawl message")
        with pg_engine.connect() as conn:
            (run,) = conn.execute(select(connector_runs).where(connector_runs.c.status == "queued"))
        assert run.connector_id == "cards-shop"

        own_redis.kill()
        own_redis.start()  # empty: no persistence
        assert queued(own_redis.url, "crawl") == queued(own_redis.url, "normalize") == 0

        # "Half an hour later": the crawl message is overdue for the scheduler's sweep.
        with pg_engine.begin() as conn:
            conn.execute(
                update(connector_runs)
                .where(connector_runs.c.id == run.id)
                .values(queued_at=run.queued_at - timedelta(minutes=31))
            )
        fleet.start("worker", "worker", "--threads", "2")
        wait_until(
            lambda: (
                raw_count(pg_engine, "cards-shop") == 656
                and (lambda n: n[0] == n[1])(normalized_once(pg_engine))
            ),
            timeout=60,
            what="the lost crawl to run and every raw record to be normalized",
        )
        assert fleet.alive(), fleet.logs()
    finally:
        fleet.stop_all()
    assert [fleet.running[n].returncode for n in ("scheduler", "worker")] == [0, 0], fleet.logs()

    assert "re-sent 80 raw records that were never normalized" in fleet.log("worker")
    resent = [e["run"] for e in events(fleet.log("scheduler"), "scheduler.resent")]
    assert resent == [run.id]
    with pg_engine.connect() as conn:
        assert unnormalized_raw_ids(conn, limit=10) == []
        statuses = conn.execute(select(connector_runs.c.connector_id, connector_runs.c.status))
        assert sorted(statuses) == [("cards-shop", "succeeded"), ("coins-woo", "succeeded")]
        # Exactly once: each raw record normalized with one parser version, no row twice.
        per_raw = conn.execute(
            select(normalized_records.c.raw_id, normalized_records.c.ordinal, func.count())
            .group_by(normalized_records.c.raw_id, normalized_records.c.ordinal)
            .having(func.count() > 1)
        ).all()
        assert per_raw == []
    pages = [h.query for h in faulty_web.of("cards-shop.fake.test") if "limit=100" in h.query]
    assert len(pages) == len(set(pages)) == 8  # 7 pages and the empty one, each fetched once


def all_normalized(db: Engine) -> bool:
    raw, covered, _ = normalized_once(db)
    return raw == covered


def test_work_lost_while_the_fleet_runs_is_found_by_the_periodic_sweep(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    upgrade(pg_engine)
    root = connectors_dir(tmp_path, {"coins-woo": {}, "cards-shop": {"page_size": 100}})
    # The scheduler knows only cards-shop, so it never enqueues coins-woo: the test crawls that
    # one itself, mid-way, as a crawl actor would.
    scheduled = connectors_dir(tmp_path / "scheduler", {"cards-shop": {"page_size": 100}})
    settings = Settings(
        _env_file=None,
        database_url=pg_url,
        broker_url=own_redis.url,
        connectors_dir=root,
        data_dir=tmp_path / "fleet",
        connect_to={h: f"127.0.0.1:{faulty_web.port}" for h in FAKE_HOSTS},
    )
    fleet = Processes(
        tmp_path,
        fleet_env(
            database_url=pg_url,
            broker_url=own_redis.url,
            connectors_dir=root,
            data_dir=tmp_path / "fleet",
            web_port=faulty_web.port,
        ),
    )
    queues = ("crawl", "normalize", "resolve", "certs", "health")
    try:
        worker = fleet.start("worker", "worker", "--threads", "2")
        wait_until(lambda: "worker: 2 threads" in fleet.log("worker"), timeout=30, what="worker")
        fleet.start(
            "scheduler",
            "scheduler",
            "--interval",
            "1",
            "--sweep-every",
            "3",
            env={"RI_CONNECTORS_DIR": str(scheduled)},
        )
        # The fleet at work: cards-shop crawled and normalized, the broker idle. The scheduler
        # swept at its first tick, before enqueuing cards-shop: what is lost next is lost after
        # every start-up sweep.
        wait_until(
            lambda: raw_count(pg_engine, "cards-shop") == 656 and all_normalized(pg_engine),
            timeout=60,
            what="cards-shop crawled and normalized by the fleet",
        )
        wait_until(
            lambda: all(queued(own_redis.url, q) == 0 for q in queues),
            timeout=60,
            what="the broker to be idle",
        )

        worker.send_signal(signal.SIGSTOP)  # normalize messages will wait for it in Redis
        try:
            (summary,) = asyncio.run(
                crawl_connectors(settings, pg_engine, ["coins-woo"], show_progress=False)
            )
            assert summary.status == "succeeded" and summary.records == 80
            broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]
            actors = declare_actors(broker, settings, db=pg_engine)
            actors.normalize.send(summary.raw_ids)
            broker.close()
            assert queued(own_redis.url, "normalize") == 1
            own_redis.kill()
            own_redis.start()  # empty: the message is gone
            assert queued(own_redis.url, "normalize") == 0
        finally:
            worker.send_signal(signal.SIGCONT)
        wait_until(
            lambda: all_normalized(pg_engine),
            timeout=60,
            what="coins-woo's raw records, whose message was lost, to be normalized",
        )
        assert fleet.alive(), fleet.logs()
    finally:
        fleet.stop_all()
    assert [fleet.running[n].returncode for n in ("worker", "scheduler")] == [0, 0], fleet.logs()
    assert "re-sent" not in fleet.log("worker")  # its start-up sweep had nothing to find
    swept = [e["raw_resent"] for e in events(fleet.log("scheduler"), "pipeline.swept")]
    assert 80 in swept, swept  # the scheduler leader's periodic sweep found coins-woo's records
    with pg_engine.connect() as conn:
        assert unnormalized_raw_ids(conn, limit=10) == []
        per_raw = conn.execute(
            select(normalized_records.c.raw_id, normalized_records.c.ordinal, func.count())
            .group_by(normalized_records.c.raw_id, normalized_records.c.ordinal)
            .having(func.count() > 1)
        ).all()
        assert per_raw == []  # normalized once


def test_the_periodic_sweep_waits_for_an_idle_queue_but_not_forever(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """Every ``every_s`` at most; while the broker still holds normalize messages (a lost one
    cannot be told from a waiting one) a due sweep waits, up to ``max_wait_s``."""
    upgrade(sqlite_engine)
    broker = StubBroker()
    broker.emit_after("process_boot")
    settings = Settings(_env_file=None, data_dir=tmp_path / "data")  # type: ignore[call-arg]
    actors = declare_actors(broker, settings, db=sqlite_engine)
    now = [1000.0]
    sweep = PipelineSweep(actors, sqlite_engine, every_s=300, max_wait_s=900, clock=lambda: now[0])
    assert sweep() == 0  # the first call sweeps (nothing lost here)
    now[0] += 299
    assert sweep() is None  # not due yet
    actors.normalize.send(["raw_waiting"])
    now[0] += 1
    assert sweep() is None  # due, but a normalize message waits: not re-sent on top of it
    now[0] += 899
    assert sweep() is None
    now[0] += 1
    assert sweep() == 0  # a queue that never drains does not stop the sweep for good
    broker.flush_all()
    now[0] += 299
    assert sweep() is None
    now[0] += 1
    assert sweep() == 0
    broker.close()
