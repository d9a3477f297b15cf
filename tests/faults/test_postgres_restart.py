"""Fault: PostgreSQL crashes and comes back while a fleet is crawling.

A scheduler and a worker process crawl the fake web's three stores (list pages slowed to 150 ms,
so runs are mid-way) on a PostgreSQL of the test's own. Once some batches are committed, the server
is stopped in immediate mode (every connection cut, no checkpoint, crash recovery on start) and
started again two seconds later.

The runs' lease (20 s here, 300 s by default) is longer than the crawl actor's first retry
(5-10 s after the failure), as in production: the retry meets its own dead holder's lease still
live and gives up, so only the scheduler can resume the run — by re-sending it at the first tick
after the lease lapsed (``sweep_stale_runs``), not half an hour later.

What must hold: the worker and the scheduler survive the outage (they are still running and stop
cleanly on SIGTERM); every run the outage interrupted is taken over — after its lease lapsed,
with the next fencing token — and resumed from its committed cursor within about one lease of
the restart; each store ends with a succeeded run and exactly its products, none missing and
none twice; no run is left ``running``, and no run succeeded twice.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, func, select

from rareindex.storage import make_engine, upgrade
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_fakeweb.sites import woo_data, world
from rareindex_fakeweb.sites.shopify_data import shop_data

from .conftest import (
    FaultyWeb,
    OwnPostgres,
    OwnRedis,
    Processes,
    connectors_dir,
    fleet_env,
    wait_until,
)

PAGE_SIZES = {"cards-shop": 50, "comics-woo": 25, "coins-woo": 10}
LEASE_S = 20
"""The runs' lease: longer than the crawl actor's first retry (5-10 s), like the default 300 s."""
HOSTS = {slug: f"{slug}.fake.test" for slug in PAGE_SIZES}


def expected_ids() -> dict[str, set[str]]:
    w = world.build_world(7)
    return {
        "cards-shop": {str(p["id"]) for p in shop_data(7).products},
        "comics-woo": woo_data.build_woo(7, woo_data.COMICS_HOST, w).external_ids,
        "coins-woo": woo_data.build_woo(7, woo_data.COINS_HOST, w).external_ids,
    }


def stored(db: Engine) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {slug: [] for slug in PAGE_SIZES}
    with db.connect() as conn:
        for connector_id, external_id in conn.execute(
            select(raw_records.c.connector_id, raw_records.c.external_id)
        ):
            found[connector_id].append(external_id)
    return found


def count(db: Engine) -> int:
    try:
        with db.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(raw_records)).scalar_one())
    except Exception:
        return -1


def runs(db: Engine) -> list[tuple[str, str, int, str | None]]:
    with db.connect() as conn:
        return [
            (r.connector_id, r.status, r.lease_token, r.failure_reason)
            for r in conn.execute(select(connector_runs).order_by(connector_runs.c.created_at))
        ]


def test_fleet_survives_a_postgres_crash_and_resumes_its_runs(
    own_postgres: OwnPostgres, own_redis: OwnRedis, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    db = make_engine(own_postgres.url)
    upgrade(db)
    for host in HOSTS.values():
        faulty_web.delay_s[host] = 0.15
    faulty_web.delay_paged_only = True  # comics-woo's 204 variations come at full speed
    env = fleet_env(
        database_url=own_postgres.url,
        broker_url=own_redis.url,
        connectors_dir=connectors_dir(
            tmp_path, {slug: {"page_size": size} for slug, size in PAGE_SIZES.items()}
        ),
        data_dir=tmp_path / "fleet",
        web_port=faulty_web.port,
        RI_RUN_LEASE_SECONDS=str(LEASE_S),
    )
    fleet = Processes(tmp_path, env)
    expected = expected_ids()
    total = sum(len(ids) for ids in expected.values())
    try:
        fleet.start("worker", "worker", "--threads", "3")
        fleet.start("scheduler", "scheduler", "--interval", "1")
        wait_until(lambda: 100 <= count(db) < total // 2, timeout=60, what="the first commits")
        db.dispose()  # our own pooled connection would die with the server
        own_postgres.crash()
        time.sleep(2.0)
        own_postgres.start()
        back = datetime.now(UTC)
        wait_until(  # the take-over is timed below; this bounds the rest of the crawls too
            lambda: {s for s, status, *_ in runs(db) if status == "succeeded"} == set(PAGE_SIZES),
            timeout=LEASE_S + 90,
            what="every store to have a succeeded run after the restart",
        )
        assert fleet.alive(), fleet.logs()
        found = stored(db)
        after = runs(db)
    finally:
        fleet.stop_all()
        db.dispose()
    assert [fleet.running[n].returncode for n in ("worker", "scheduler")] == [0, 0], fleet.logs()
    for slug, ids in expected.items():
        assert len(found[slug]) == len(set(found[slug])), f"{slug}: a product stored twice"
        assert set(found[slug]) == ids, f"{slug}: {len(ids - set(found[slug]))} products missing"
    assert not [r for r in after if r[1] in ("queued", "running")], after
    # The outage did interrupt runs, and they were taken over (token 2), not started afresh.
    assert any(token >= 2 for _, status, token, _ in after if status == "succeeded"), after
    assert "scheduler.tick_failed" in fleet.log("scheduler")  # it saw the outage, and lived
    # The scheduler's sweep re-sent them once their lease lapsed (their actor's retry came while
    # it was still live), well before the 30-minute resend_after.
    resent = events(fleet.log("scheduler"), "scheduler.resent")
    assert resent, fleet.log("scheduler")[-3000:]
    # ... within about a lease of the restart (the rest of each crawl then takes what it takes:
    # comics-woo alone fetches 200 variations one by one).
    first_resent = min(datetime.fromisoformat(str(e["timestamp"])) for e in resent)
    assert (first_resent - back).total_seconds() < LEASE_S + 30, (first_resent, back)
    # One holder at a time: no run succeeded twice (a fenced-out holder commits nothing).
    finished = Counter(
        e["run"]
        for e in events(fleet.log("worker"), "connector_run_finished")
        if e["status"] == "succeeded"
    )
    assert [run for run, n in finished.items() if n > 1] == [], finished


def events(log: str, name: str) -> list[dict[str, object]]:
    """The JSON log lines of event ``name``."""
    found = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    return [e for e in found if e.get("event") == name]
