"""Faults on single hosts while a worker crawls three of them at once (three threads, host gates
shared in Redis as in any fleet):

* ``comics-woo.fake.test`` answers every request ``429 Too Many Requests`` with
  ``Retry-After: 5`` — a 429 storm;
* ``coins-woo.fake.test`` answers every request with a Cloudflare challenge page — a wall — and
  its policy lets the router escalate to (fake) Firecrawl, which is billed per page;
* ``cards-shop.fake.test`` is healthy (pages take 100 ms).

coins-woo is crawled three times in a row (the runs a scheduler would keep enqueuing).

What must hold, for the storm: the stormy host is not contacted again before its ``Retry-After``
has passed, its run ends ``rate_limited`` without hammering it; meanwhile the healthy host is
crawled at full speed — never stalled behind the other host's deferral (no gap of a second
between its requests), most of its pages fetched inside the storm's first Retry-After.

For the wall: a challenge page is never stored; the host's breaker opens after its
``circuit_failures`` (3) and from then on runs fail fast (``circuit_open``) without sending
anything — to the host or to the paid engine — so the host's request budget and the paid credits
stop at what the first failures cost; the other hosts' breakers stay closed.

Both: the worker survives and every run is closed with a reason from the closed vocabulary.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dramatiq
import pytest
import redis
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import select

from rareindex.registry import load_registry
from rareindex.storage import make_engine, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import enqueue_run
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FakeWeb
from rareindex_fakeweb.fake_web import CLOUDFLARE_CHALLENGE

from .conftest import (
    FaultyWeb,
    OwnRedis,
    Processes,
    ToFaultyWeb,
    connectors_dir,
    fleet_env,
    wait_until,
)

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files

HEALTHY, STORM, WALL = "cards-shop.fake.test", "comics-woo.fake.test", "coins-woo.fake.test"
RETRY_AFTER_S = 5
TOLERANCE_S = 0.05


async def storm(path: str, query: str) -> tuple[int, dict[str, str], bytes]:
    return 429, {"retry-after": str(RETRY_AFTER_S), "content-type": "text/plain"}, b"slow down\n"


async def wall(path: str, query: str) -> tuple[int, dict[str, str], bytes]:
    headers = {"cf-mitigated": "challenge", "server": "cloudflare", "content-type": "text/html"}
    return 403, headers, CLOUDFLARE_CHALLENGE


@dataclass
class Outcome:
    web: FaultyWeb
    runs: list[Any]
    events: list[dict[str, Any]]
    gates: dict[str, dict[str, Any]]
    credits_used: int
    firecrawl_calls: int
    stored: set[str]
    worker_alive: bool
    worker_exit: int | None


@pytest.fixture(scope="module")
def outcome(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    from rareindex_fakeweb.fake_firecrawl import create_fake_firecrawl_app

    tmp = tmp_path_factory.mktemp("host-faults")
    web = FaultyWeb(delay_s={HEALTHY: 0.1}, faults={STORM: storm, WALL: wall})
    db = make_engine(pg_url)
    own_redis = OwnRedis(tmp / "redis.log")
    own_redis.start()
    upgrade(db)
    try:
        with serve_asgi(web.wrap(FakeWeb().app)) as base:
            web.port = int(base.rsplit(":", 1)[1])
            fake = create_fake_firecrawl_app(upstream_transport=ToFaultyWeb(web.port))
            with serve_asgi(fake) as firecrawl_url:
                yield _scenario(db, own_redis, web, fake, firecrawl_url, tmp)
    finally:
        own_redis.kill()
        from rareindex.storage import downgrade

        downgrade(db, "base")
        db.dispose()


def _scenario(
    db: Any, own_redis: OwnRedis, web: FaultyWeb, fake: Any, firecrawl_url: str, tmp: Path
) -> Outcome:
    policy = {"domains": {WALL: {"engines": ["api", "firecrawl"], "circuit_cooldown_ms": 60000}}}
    root = connectors_dir(
        tmp,
        {
            "cards-shop": {"page_size": 50},
            "comics-woo": {},
            "coins-woo": {"engines": ["api", "firecrawl"]},
        },
        extra=json.dumps(policy),
    )
    with db.begin() as conn:
        sync_connectors(conn, load_registry(root))
    fleet = Processes(
        tmp,
        fleet_env(
            database_url=str(db.url.render_as_string(hide_password=False)),
            broker_url=own_redis.url,
            connectors_dir=root,
            data_dir=tmp / "fleet",
            web_port=web.port,
            RI_FIRECRAWL_API_KEY="fc-test",
            RI_FIRECRAWL_API_URL=firecrawl_url,
        ),
    )
    broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]
    broker.declare_queue("crawl")

    def crawl(connector_id: str) -> str:
        with db.begin() as conn:
            run_id = enqueue_run(conn, connector_id, "incremental")
        assert run_id is not None
        message: dramatiq.Message[Any] = dramatiq.Message(
            queue_name="crawl", actor_name="crawl_run", args=(run_id,), kwargs={}, options={}
        )
        broker.enqueue(message)
        return run_id

    def finished(run_id: str) -> bool:
        with db.connect() as conn:
            status = conn.execute(
                select(connector_runs.c.status).where(connector_runs.c.id == run_id)
            ).scalar_one()
        return status in ("succeeded", "failed")

    try:
        fleet.start("worker", "worker", "--threads", "3")
        wait_until(lambda: "worker: 3 threads" in fleet.log("worker"), timeout=30, what="worker")
        started = [crawl("cards-shop"), crawl("comics-woo")]
        for _ in range(3):  # the wall, again and again
            run_id = crawl("coins-woo")
            wait_until(functools.partial(finished, run_id), timeout=30, what="a coins-woo run")
        for run_id in started:
            wait_until(functools.partial(finished, run_id), timeout=60, what="the other runs")
        alive = fleet.alive()
    finally:
        broker.close()
        fleet.stop_all()
    client = redis.Redis.from_url(own_redis.url)
    gates = {
        host: json.loads(client.get(f"ri:gate:{host}") or "{}") for host in (HEALTHY, STORM, WALL)
    }
    client.close()
    log = fleet.log("worker")
    with db.connect() as conn:
        runs = conn.execute(select(connector_runs).order_by(connector_runs.c.created_at)).all()
        stored = set(conn.execute(select(raw_records.c.connector_id).distinct()).scalars())
    return Outcome(
        web=web,
        runs=runs,
        events=[json.loads(line) for line in log.splitlines() if line.startswith("{")],
        gates=gates,
        credits_used=fake.credits_used,
        firecrawl_calls=len(fake.calls),
        stored=stored,
        worker_alive=alive,
        worker_exit=fleet.running["worker"].returncode,
    )


def _runs(outcome: Outcome, connector_id: str) -> list[tuple[str, str | None]]:
    return [(r.status, r.failure_reason) for r in outcome.runs if r.connector_id == connector_id]


def test_a_429_storm_on_one_host_leaves_the_others_at_full_speed(outcome: Outcome) -> None:
    assert outcome.worker_alive and outcome.worker_exit == 0
    stormy = outcome.web.of(STORM)  # its robots.txt, read first, meets the storm too
    assert [h.status for h in stormy] == [429, 429]  # max_retries 1: asked twice, then gave up
    assert stormy[1].started - stormy[0].finished >= RETRY_AFTER_S - TOLERANCE_S
    assert _runs(outcome, "comics-woo") == [("failed", "rate_limited")]

    healthy = [h for h in outcome.web.of(HEALTHY) if h.path != "/robots.txt"]
    assert [h.status for h in healthy] == [200] * 15  # 14 pages of 50 and the empty one
    gaps = [b.started - a.finished for a, b in itertools.pairwise(healthy)]
    assert max(gaps) < 1.0, gaps  # never held behind the storm's 5 s deferral
    # Most of the healthy crawl happened while the stormy host was deferred.
    deferred = [h for h in healthy if stormy[0].finished < h.started < stormy[1].started]
    assert len(deferred) >= 10, (len(deferred), healthy[0].started - stormy[0].finished)
    assert _runs(outcome, "cards-shop") == [("succeeded", None)]
    assert outcome.gates[HEALTHY].get("breaker", "closed") == "closed"


def test_a_challenge_wall_opens_the_breaker_and_burns_no_budget(outcome: Outcome) -> None:
    assert outcome.worker_alive and outcome.worker_exit == 0
    walled = outcome.web.of(WALL)
    # api (run 1), Firecrawl fetching it for us (run 1), api (run 2): the third failure opens
    # the breaker; run 2's Firecrawl attempt and all of run 3 fail fast, sending nothing.
    assert [h.status for h in walled] == [403, 403, 403]
    assert _runs(outcome, "coins-woo") == [
        ("failed", "blocked"),
        ("failed", "circuit_open"),
        ("failed", "circuit_open"),
    ]
    assert (outcome.firecrawl_calls, outcome.credits_used) == (1, 1)
    gate = outcome.gates[WALL]
    assert gate["breaker"] == "open" and gate["failures"] >= 3
    assert gate["day_count"] == 3  # the host's budget counts what was sent, nothing more
    assert "coins-woo" not in outcome.stored  # a challenge page is never a record
    assert any(e.get("event") == "fetch.blocked" and e.get("host") == WALL for e in outcome.events)
    for host in (HEALTHY, STORM):
        assert outcome.gates[host].get("breaker", "closed") == "closed"
    assert _runs(outcome, "cards-shop") == [("succeeded", None)]
