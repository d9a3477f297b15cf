"""Fault: a crawler freezes past its lease (SIGSTOP: a GC pause, a swapped-out VM), another worker
takes its run over, and then the frozen one wakes up and tries to commit.

A worker process crawls cards-shop (14 pages of 50, each page slowed to 100 ms) under a 2 s run
lease. After its first commit, and while it holds no open transaction, it is frozen with SIGSTOP.
Once its lease has lapsed, the run's message is sent again (as the scheduler's sweep does) and a
second worker takes the run over from the committed cursor and finishes it. Then the first worker
is resumed with SIGCONT, a batch in its hands.

What must hold: the stale worker commits nothing — its next commit meets the bumped fencing token
(``lease_lost``) and it stops crawling, without crashing its process. The run is the second
worker's: succeeded, lease token 2, pages and records exactly the store's, no dupes counted; the
store's 656 products are stored once each; the connector's cursor is the end of the sweep.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import Engine, func, select, text

from rareindex.registry import load_registry
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import enqueue_run
from rareindex.storage.runs import connector_cursor
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_fakeweb.sites.shopify_data import shop_data

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until

HOST = "cards-shop.fake.test"
APP = f"ri-faults-stale-{os.getpid()}"  # unique: other sessions share the server


def send_crawl(broker_url: str, run_id: str) -> None:
    """What the scheduler's sweep sends for a run whose lease lapsed: its id, nothing else."""
    broker = RedisBroker(url=broker_url)  # type: ignore[no-untyped-call]
    try:
        broker.declare_queue("crawl")
        broker.enqueue(
            dramatiq.Message(
                queue_name="crawl", actor_name="crawl_run", args=(run_id,), kwargs={}, options={}
            )
        )
    finally:
        broker.close()


def holds_transaction(db: Engine, app: str) -> bool:
    with db.connect() as conn:
        return bool(
            conn.execute(
                text(
                    "select count(*) from pg_stat_activity "
                    "where application_name = :app and xact_start is not null"
                ),
                {"app": app},
            ).scalar_one()
        )


def stored_ids(db: Engine) -> list[str]:
    with db.connect() as conn:
        return list(conn.execute(select(raw_records.c.external_id)).scalars())


def test_a_frozen_worker_whose_run_was_taken_over_cannot_commit(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    root = connectors_dir(tmp_path, {"cards-shop": {"page_size": 50}})
    upgrade(pg_engine)
    with pg_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        run_id = enqueue_run(conn, "cards-shop", "incremental")
    assert run_id is not None
    faulty_web.delay_s[HOST] = 0.1
    env = fleet_env(
        database_url=pg_url,
        broker_url=own_redis.url,
        connectors_dir=root,
        data_dir=tmp_path / "fleet",
        web_port=faulty_web.port,
        RI_RUN_LEASE_SECONDS="2",
    )
    fleet = Processes(tmp_path, env)
    products = sorted(str(p["id"]) for p in shop_data(7).products)
    try:
        stale = fleet.start(
            "stale", "worker", "--threads", "1",
            env={"RI_DATABASE_URL": f"{pg_url}?application_name={APP}"},
        )  # fmt: skip
        send_crawl(own_redis.url, run_id)
        # Freeze it after its first commit, between transactions (a frozen open transaction
        # would hold the run's row lock: the takeover would wait, not race).
        deadline = time.monotonic() + 60
        while True:
            assert time.monotonic() < deadline, "no commit within 60 s"
            assert stale.poll() is None, fleet.log("stale")
            if stored_ids(pg_engine) and not holds_transaction(pg_engine, APP):
                os.kill(stale.pid, signal.SIGSTOP)
                if not holds_transaction(pg_engine, APP):
                    break
                os.kill(stale.pid, signal.SIGCONT)
            time.sleep(0.01)
        frozen_at = time.monotonic()
        committed_by_stale = len(stored_ids(pg_engine))
        assert 0 < committed_by_stale < len(products)

        fleet.start("taker", "worker", "--threads", "1")  # it starts up while the lease lapses
        time.sleep(max(0.0, frozen_at + 2.5 - time.monotonic()))  # 2 s since its last commit
        send_crawl(own_redis.url, run_id)  # what the sweep sends for a lapsed lease

        def taken_run() -> Any:
            with pg_engine.connect() as conn:
                query = select(connector_runs).where(connector_runs.c.id == run_id)
                return conn.execute(query).one()

        # Every record stored is not yet the run finished: the crawler's writer commits the last
        # batch while the loop fetches on, and the run ends in a transaction of its own after it.
        wait_until(
            lambda: sorted(stored_ids(pg_engine)) == products and taken_run().status != "running",
            timeout=60,
            what="the second worker to finish the run",
        )
        taken = taken_run()
        assert (taken.status, taken.lease_token) == ("succeeded", 2)
        requests_before_wake = len(faulty_web.of(HOST))

        os.kill(stale.pid, signal.SIGCONT)
        wait_until(
            lambda: '"failure_reason": "lease_lost"' in fleet.log("stale"),
            timeout=30,
            what="the stale worker to meet the fencing token",
        )
        time.sleep(1.0)  # anything it might still do, it would do now
        assert fleet.alive(), fleet.logs()
    finally:
        with_cont = fleet.running.get("stale")
        if with_cont is not None and with_cont.poll() is None:
            os.kill(with_cont.pid, signal.SIGCONT)
        fleet.stop_all()
    assert [p.returncode for p in fleet.running.values()] == [0, 0], fleet.logs()

    finished = [
        json.loads(line)
        for line in fleet.log("stale").splitlines()
        if line.startswith("{") and '"connector_run_finished"' in line
    ]
    assert [(e["run"], e["failure_reason"]) for e in finished] == [(run_id, "lease_lost")]
    # It stopped at its first commit: at most the page in its hands when it froze, and one more.
    assert len(faulty_web.of(HOST)) - requests_before_wake <= 2
    ids = stored_ids(pg_engine)
    assert sorted(ids) == products and len(ids) == len(set(ids))
    with pg_engine.connect() as conn:
        run = conn.execute(select(connector_runs).where(connector_runs.c.id == run_id)).one()
        runs = conn.execute(select(func.count()).select_from(connector_runs)).scalar_one()
    assert runs == 1
    assert (run.status, run.outcome, run.lease_token, run.failure_reason) == (
        "succeeded",
        "complete",
        2,
        None,
    )
    assert (run.records, run.dupes) == (len(products), 0)  # the stale batch was never counted
    assert connector_cursor(pg_engine, "cards-shop") == {"collection": 0, "page": 1, "sweeps": 1}
