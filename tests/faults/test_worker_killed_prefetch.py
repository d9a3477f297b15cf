"""Fault: a worker is SIGKILLed holding two crawl messages, one started, one only prefetched.

Two stores each have a queued run and its crawl message on a Redis of the test's own. One worker
(one thread, so dramatiq prefetches two messages) takes both: one run starts, the other message
waits in its hands, acknowledged to nobody. It is SIGKILLed as soon as that run is running. A
second worker and a scheduler start at once, under a 5 s run lease and a 2 s broker heartbeat
(``RI_BROKER_HEARTBEAT_SECONDS``).

What must hold: every run is claimed again within two leases of the kill and succeeds — the
prefetched message goes back to the queue once the dead worker's heartbeat is stale (the broker's
maintenance, ``workers.broker``), and the started run is re-sent when its lease lapses (the
scheduler's ``sweep_stale_runs``). Before issue 22 the prefetched run stayed ``queued`` for the
30-minute resend interval.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import Engine, select

from rareindex.registry import load_registry
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import enqueue_run
from rareindex.storage.schema import connector_runs

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until

pytestmark = pytest.mark.serial  # a time bound (two leases) measured across processes: run alone

LEASE_S = 5
STORES = {"cards-shop": {"page_size": 50}, "coins-woo": {}}
DELAY_S = {"cards-shop.fake.test": 0.1, "coins-woo.fake.test": 0.3}  # runs of 1-3 s


def send_crawls(broker_url: str, run_ids: list[str]) -> None:
    """What the scheduler sends for each queued run: its id."""
    broker = RedisBroker(url=broker_url)  # type: ignore[no-untyped-call]
    try:
        broker.declare_queue("crawl")
        for run_id in run_ids:
            broker.enqueue(
                dramatiq.Message(
                    queue_name="crawl",
                    actor_name="crawl_run",
                    args=(run_id,),
                    kwargs={},
                    options={},
                )
            )
    finally:
        broker.close()


def waiting_in_queue(broker_url: str) -> int:
    """Crawl messages no worker has fetched yet."""
    client = redis.Redis.from_url(broker_url)
    try:
        return int(client.llen("dramatiq:crawl"))
    finally:
        client.close()


def runs(db: Engine) -> dict[str, tuple[str, int]]:
    """Each run's status and fencing token (bumped by every claim)."""
    with db.connect() as conn:
        rows = conn.execute(
            select(connector_runs.c.id, connector_runs.c.status, connector_runs.c.lease_token)
        )
        return {row.id: (row.status, int(row.lease_token)) for row in rows}


def test_a_killed_workers_prefetched_and_started_runs_all_run_within_two_leases(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    root = connectors_dir(tmp_path, STORES)
    upgrade(pg_engine)
    with pg_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        run_ids = [enqueue_run(conn, slug, "incremental") for slug in STORES]
    assert all(run_ids)
    ids = [r for r in run_ids if r is not None]
    faulty_web.delay_s.update(DELAY_S)
    env = fleet_env(
        database_url=pg_url,
        broker_url=own_redis.url,
        connectors_dir=root,
        data_dir=tmp_path / "fleet",
        web_port=faulty_web.port,
        RI_RUN_LEASE_SECONDS=str(LEASE_S),
        RI_BROKER_HEARTBEAT_SECONDS="2",
    )
    fleet = Processes(tmp_path, env)
    try:
        dying = fleet.start("dying", "worker", "--threads", "1")  # prefetches 2 messages
        wait_until(lambda: "worker: 1 threads" in fleet.log("dying"), timeout=30, what="worker")
        send_crawls(own_redis.url, ids)
        wait_until(
            lambda: (
                waiting_in_queue(own_redis.url) == 0
                and any(status == "running" for status, _ in runs(pg_engine).values())
            ),
            timeout=30,
            what="the worker to hold every message and start a run",
        )
        os.kill(dying.pid, signal.SIGKILL)
        killed = time.monotonic()
        dying.wait(timeout=10)
        before = runs(pg_engine)
        assert sorted(status for status, _ in before.values()) == ["queued", "running"]

        fleet.start("survivor", "worker", "--threads", "2")
        fleet.start("scheduler", "scheduler", "--interval", "1")
        claimed: dict[str, float] = {}  # run -> seconds after the kill it was claimed again

        def all_succeeded() -> bool:
            now = runs(pg_engine)
            for run_id, (_, token) in now.items():
                if token > before[run_id][1]:
                    claimed.setdefault(run_id, time.monotonic() - killed)
            return all(status == "succeeded" for status, _ in now.values())

        try:
            wait_until(all_succeeded, timeout=35, what="every run to succeed after the kill")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {before} -> {runs(pg_engine)}\n{fleet.logs()}") from None
        assert fleet.running["survivor"].poll() is None, fleet.logs()
    finally:
        fleet.running.pop("dying", None)
        fleet.stop_all()

    assert set(claimed) == set(ids)  # the dead worker finished none of them
    late = {run_id: round(s, 1) for run_id, s in claimed.items() if s > 2 * LEASE_S}
    assert late == {}, f"claimed again later than two leases ({2 * LEASE_S} s): {late}"
