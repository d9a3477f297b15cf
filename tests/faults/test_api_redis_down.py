"""Fault: the broker's Redis stops under a running ``rareindex api`` (issue 22 item 3).

The API is started as in a fleet: on PostgreSQL, ``RI_BROKER_URL`` on a Redis of the test's own,
so the host gates are shared through that Redis too. Redis is killed (SIGKILL: connections
refused, as after a crash) and later started again on the same port.

What must hold: monitoring does not go blind. While Redis is down, ``/metrics`` still answers 200
within a few seconds, with ``rareindex_broker_up 0`` and ``rareindex_gates_up 0`` and the database
gauges as before; ``GET /api/admin/connectors`` still answers 200 and says the gates are
``unavailable``; ``/health`` answers. Once Redis is back, the gauges return to 1 without a restart
of the API. Before issue 22 both reads answered 500 (``redis.exceptions.ConnectionError``).
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from .api_process import start_api
from .conftest import OwnRedis, wait_until


def gauges(base: str) -> dict[str, float]:
    """The unlabelled samples of one scrape of ``/metrics`` (which must answer 200)."""
    scrape = httpx.get(f"{base}/metrics", timeout=15)
    assert scrape.status_code == 200, scrape.text[:500]
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(scrape.text)
        for sample in family.samples
        if not sample.labels
    }


def test_metrics_and_admin_reads_answer_while_redis_is_down(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    fleet, api = start_api(tmp_path, database_url=pg_url, broker_url=own_redis.url)
    token = {"Authorization": f"Bearer {api.admin_token}"}
    try:
        up = gauges(api.base)
        assert (up["rareindex_broker_up"], up["rareindex_gates_up"]) == (1, 1)
        assert up["rareindex_database_up"] == 1

        own_redis.kill()
        began = time.monotonic()
        down = gauges(api.base)
        scrape_s = time.monotonic() - began
        assert (down["rareindex_broker_up"], down["rareindex_gates_up"]) == (0, 0)
        assert down["rareindex_database_up"] == 1
        assert scrape_s < 10, f"a scrape during the outage took {scrape_s:.1f} s"
        listed = httpx.get(f"{api.base}/api/admin/connectors", headers=token, timeout=15)
        assert listed.status_code == 200, listed.text[:500]
        assert listed.json()["gates"] == "unavailable"
        assert {c["id"] for c in listed.json()["connectors"]} >= {"cards-shop", "card-market"}
        assert httpx.get(f"{api.base}/health", timeout=5).status_code == 200

        own_redis.start()  # the same port, empty
        back = wait_until(
            lambda: (
                (g := gauges(api.base))["rareindex_broker_up"] == 1 and g["rareindex_gates_up"] == 1
            ),
            timeout=30,
            what="the gauges to return to 1 with Redis back",
        )
        assert back
        assert fleet.alive(), fleet.logs()
    finally:
        fleet.stop_all()
    log = fleet.log("api")
    assert "api.failed" not in log, log[-3000:]  # no 500 at any point
