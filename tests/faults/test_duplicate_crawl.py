"""Fault: the same crawl is enqueued twice — its message delivered twice at once (at-least-once
delivery, a sweep re-sending a message that was only slow) to a worker process whose two threads
take both copies together — and enqueued twice in the database.

What must hold: the second enqueue writes nothing (one active run per connector, by constraint);
exactly one delivery crawls, the other finds the run claimed under a live lease while it is still
running and does nothing (``crawl.skipped``, ``not_claimable``). Each page of the store is fetched
once, its 656 products are stored once, there is one run (lease token 1, succeeded). (Two enqueues
racing on two connections: tests/integration/test_scheduler.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import Engine, select

from rareindex.registry import load_registry
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import enqueue_run
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_fakeweb.sites.shopify_data import shop_data

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until

HOST = "cards-shop.fake.test"


def worker_events(log: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.splitlines() if line.startswith("{")]


def test_a_crawl_enqueued_and_delivered_twice_runs_once(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    root = connectors_dir(tmp_path, {"cards-shop": {"page_size": 100}})
    upgrade(pg_engine)
    with pg_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        run_id = enqueue_run(conn, "cards-shop", "incremental")
        assert enqueue_run(conn, "cards-shop", "incremental") is None  # the second: a no-op
    assert run_id is not None
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
    products = sorted(str(p["id"]) for p in shop_data(7).products)
    faulty_web.delay_s[HOST] = 0.1
    broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]
    try:
        fleet.start("worker", "worker", "--threads", "2")
        wait_until(lambda: "worker: 2 threads" in fleet.log("worker"), timeout=30, what="a worker")
        broker.declare_queue("crawl")
        for _ in range(2):
            broker.enqueue(
                dramatiq.Message(
                    queue_name="crawl", actor_name="crawl_run", args=(run_id,), kwargs={},
                    options={},
                )
            )  # fmt: skip

        def both_handled() -> bool:
            handled = [
                e
                for e in worker_events(fleet.log("worker"))
                if e.get("event") in ("connector_run_finished", "crawl.skipped")
            ]
            return len(handled) >= 2

        wait_until(both_handled, timeout=60, what="both deliveries to be handled")
        assert fleet.alive(), fleet.logs()
    finally:
        broker.close()
        fleet.stop_all()
    assert fleet.running["worker"].returncode == 0, fleet.logs()

    events = worker_events(fleet.log("worker"))
    finished = [e for e in events if e.get("event") == "connector_run_finished"]
    skipped = [e for e in events if e.get("event") == "crawl.skipped"]
    assert [(e["run"], e["status"]) for e in finished] == [(run_id, "succeeded")]
    assert [e["run"] for e in skipped] == [run_id]
    # Skipped while the other copy was crawling: a race on the claim, not a late duplicate.
    assert skipped[0].get("status", "running") == "running", skipped
    assert str(skipped[0]["timestamp"]) < str(finished[0]["timestamp"])
    pages = [h.query for h in faulty_web.of(HOST) if "limit=100" in h.query]
    assert len(pages) == len(set(pages)) == 8  # every page fetched once
    with pg_engine.connect() as conn:
        ids = list(conn.execute(select(raw_records.c.external_id)).scalars())
        runs = conn.execute(select(connector_runs)).all()
    assert sorted(ids) == products
    assert [(r.id, r.status, r.lease_token) for r in runs] == [(run_id, "succeeded", 1)]
