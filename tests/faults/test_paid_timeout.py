"""Fault: a paid engine times out after the request was sent — the vendor did the work and billed
it, then answered later than our client would wait.

A worker process crawls coins-woo through (fake) Firecrawl only; the fake scrapes the page,
charges its credit, then holds the answer back 8 s, past our client's deadline (the policy gives
Firecrawl 1 s for the target and the client 5 s more).

What must hold: the outcome is unknown, and it is recorded so — the attempt counts as
``indeterminate`` in the run's engine stats and the run fails with ``failure_reason =
"indeterminate"`` — and it is not silently retried into a double charge: Firecrawl received
exactly one request, neither the engine, the router nor the worker sent it again, and the credit
the vendor billed is in the cost ledger (``costs``) and on the run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import Engine, func, select

from rareindex.registry import load_registry
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import enqueue_run
from rareindex.storage.schema import connector_runs, costs, raw_records
from rareindex_fakeweb.servers import Delay

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until

HOST = "coins-woo.fake.test"
POLICY = {
    "domains": {
        HOST: {"engines": ["firecrawl"], "engine_options": {"firecrawl": {"timeout_ms": 1000}}}
    }
}


def test_a_paid_fetch_that_timed_out_after_sending_is_indeterminate_and_sent_once(
    own_redis: OwnRedis,
    pg_url: str,
    pg_engine: Engine,
    faulty_web: FaultyWeb,
    fake_firecrawl: Callable[..., tuple[Any, str]],
    tmp_path: Path,
) -> None:
    # the store's pages answer late; its robots.txt, read first, answers at once
    fake, firecrawl_url = fake_firecrawl(delays=[Delay(8.0, match=r"^(?!.*/robots\.txt)")])
    root = connectors_dir(
        tmp_path, {"coins-woo": {"engines": ["firecrawl"]}}, extra=json.dumps(POLICY)
    )
    upgrade(pg_engine)
    with pg_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        run_id = enqueue_run(conn, "coins-woo", "incremental")
    assert run_id is not None
    fleet = Processes(
        tmp_path,
        fleet_env(
            database_url=pg_url,
            broker_url=own_redis.url,
            connectors_dir=root,
            data_dir=tmp_path / "fleet",
            web_port=faulty_web.port,
            RI_FIRECRAWL_API_KEY="fc-test",
            RI_FIRECRAWL_API_URL=firecrawl_url,
        ),
    )
    broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]
    try:
        broker.declare_queue("crawl")
        broker.enqueue(
            dramatiq.Message(
                queue_name="crawl", actor_name="crawl_run", args=(run_id,), kwargs={}, options={}
            )
        )
        fleet.start("worker", "worker", "--threads", "1")

        def finished() -> bool:
            with pg_engine.connect() as conn:
                query = select(connector_runs.c.status).where(connector_runs.c.id == run_id)
                return conn.execute(query).scalar_one() in ("succeeded", "failed")

        wait_until(finished, timeout=60, what="the run to end")
        time.sleep(2.0)  # room for any resend (an SDK retry, the router, the actor's Retries)
        assert fleet.alive(), fleet.logs()
    finally:
        broker.close()
        fleet.stop_all()
    assert fleet.running["worker"].returncode == 0, fleet.logs()

    robots, pages = [
        [c for c in fake.calls if (c.target or "").endswith("/robots.txt") is robots_txt]
        for robots_txt in (True, False)
    ]
    assert len(robots) == 1 and len(pages) == 1, fake.calls  # one send of the page, never two
    assert fake.credits_used == 2  # the vendor did the work and billed it (and the robots.txt)
    with pg_engine.connect() as conn:
        run = conn.execute(select(connector_runs).where(connector_runs.c.id == run_id)).one()
        ledger = conn.execute(
            select(costs.c.engine, costs.c.credits, costs.c.requests).where(
                costs.c.connector_id == "coins-woo"
            )
        ).all()
        stored = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
    assert (run.status, run.failure_reason) == ("failed", "indeterminate"), run.error
    stats = run.engine_stats["firecrawl"]
    assert (stats["attempts"], stats["success"], stats["indeterminate"]) == (1, 0, 1), stats
    assert run.cost_credits == Decimal(2)
    assert [(e, Decimal(c), n) for e, c, n in ledger] == [("firecrawl", Decimal(2), 2)]
    assert stored == 0
    events = [json.loads(line) for line in fleet.log("worker").splitlines() if line[:1] == "{"]
    assert [e["engine"] for e in events if e.get("event") == "fetch.indeterminate"] == ["firecrawl"]
    assert "Retrying" not in fleet.log("worker")  # the actor did not retry the message
