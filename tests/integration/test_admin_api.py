"""The admin API for real: the ``rareindex api`` process on PostgreSQL over a socket on
127.0.0.1, tokens made and revoked with the CLI, readiness against real Redis, host gates shared
through Redis, and the storage queries (engine stats in JSON, coverage) on both dialects."""

from __future__ import annotations

import asyncio
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine, select, update

from rareindex.api import create_app
from rareindex.cli.api_cmd import bind
from rareindex.errors import ConfigError
from rareindex.storage.admin_queries import coverage
from rareindex.storage.metrics_queries import metrics_snapshot
from rareindex.storage.schema import connectors
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.runtime import DomainPolicy, HostGates, RedisGateBackend
from tests.cli_helpers import REPO
from tests.subprocess_env import subprocess_env
from tests.unit.rareindex.api.api_helpers import (
    MARKET_PATTERN,
    bearer,
    make_app,
    seed,
    settings_for,
)

# The full `rareindex` command (workers.cli): the index's commands and the fleet's `api`.
LAUNCH = """
import workers.cli as full
full.main()
"""


def rareindex(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCH, *args],
        capture_output=True,
        text=True,
        env=subprocess_env(env),
        cwd=REPO,
        timeout=120,
        check=False,
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def api_process(port: int, env: dict[str, str], logs: Path) -> Iterator[subprocess.Popen[str]]:
    """``rareindex api`` in the background; its output goes to ``logs/api.out`` (a file, not a
    pipe nobody drains)."""
    out = (logs / "api.out").open("w")
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, "api", "--host", "127.0.0.1", "--port", str(port)],
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        env=subprocess_env(env),
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                output = (logs / "api.out").read_text()
                pytest.fail(f"rareindex api exited {process.returncode}: {output}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("rareindex api did not start within 60 s")
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        out.close()


def test_rareindex_api_serves_postgres_over_a_socket(
    pg_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    seed(pg_engine)
    env = {"RI_DATABASE_URL": pg_url, "RI_DATA_DIR": str(tmp_path)}
    created = rareindex("tokens", "create", "monitor", env=env)
    assert created.returncode == 0, created.stderr
    token = next(line for line in created.stdout.splitlines() if line.startswith("rit_"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with api_process(port, env, tmp_path) as process:
        ready = httpx.get(f"{base}/health/ready", timeout=10)
        assert ready.status_code == 200, ready.text
        assert set(ready.json()["checks"]) == {"database", "schema"}

        assert httpx.get(f"{base}/api/admin/connectors", timeout=10).status_code == 401
        listed = httpx.get(f"{base}/api/admin/connectors", headers=bearer(token), timeout=10)
        assert listed.status_code == 200
        assert {c["id"] for c in listed.json()["connectors"]} >= {"card-market", "cards-shop"}

        for url in ("http://10.20.30.40/itm/123456", "http://169.254.169.254/latest/meta-data/"):
            refused = httpx.post(
                f"{base}/api/lookup", json={"url": url}, headers=bearer(token), timeout=30
            )
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"] == "unsafe_url"
            assert refused.json()["detail"]

        metrics = httpx.get(f"{base}/metrics", timeout=10).text
        samples = {
            (s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(metrics)
            for s in family.samples
        }
        api_200 = {"connector": "card-market", "engine": "api", "status": "200"}
        assert samples["rareindex_engine_attempts_total", frozenset(api_200.items())] == 4
        assert samples["rareindex_database_up", frozenset()] == 1

        # the port is taken: a second server says so in one line and exits 2
        second = rareindex("api", "--port", str(port), env=env)
        assert second.returncode == 2
        assert second.stderr.strip().splitlines() == [
            f"error: port {port} on 127.0.0.1 is already in use; pick another with --port, "
            "or stop the process listening there"
        ]

        revoked = rareindex("tokens", "revoke", "monitor", env=env)
        assert revoked.returncode == 0, revoked.stderr
        after = httpx.get(f"{base}/api/admin/connectors", headers=bearer(token), timeout=10)
        assert after.status_code == 401 and after.json()["error"] == "invalid_token"

        process.send_signal(signal.SIGTERM)  # a graceful stop
        assert process.wait(timeout=15) == 0
    output = (tmp_path / "api.out").read_text()
    assert f"admin API on http://127.0.0.1:{port}" in output
    assert output.rstrip().endswith("admin API: stopped")
    assert token not in output  # the token never reaches a log line


def test_bind_refuses_a_port_in_use() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1 is already in use"):
            bind("127.0.0.1", port)
    sock = bind("127.0.0.1", 0)
    assert sock.getsockname()[1] > 0
    sock.close()


def test_accepted_connections_send_without_delay() -> None:
    """The listening socket says it is TCP, so asyncio (uvicorn's loop) sets TCP_NODELAY on every
    accepted connection: a kept-alive client is not held ~40 ms by Nagle's algorithm."""
    import asyncio

    async def accept_one() -> int:
        sock = bind("127.0.0.1", 0)
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_client(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_client, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            nodelay = await asyncio.wait_for(seen, timeout=5)
            writer.close()
        return nodelay

    assert asyncio.run(accept_one()) != 0


def test_readiness_pings_the_real_broker(
    pg_url: str, pg_engine: Engine, redis_url: str, tmp_path: Path
) -> None:
    seed(pg_engine)
    fleet: dict[str, Any] = {"database_url": pg_url, "broker_url": redis_url}
    with TestClient(make_app(pg_engine, tmp_path, **fleet)) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["broker"]["ok"] is True
    down: dict[str, Any] = {
        "database_url": pg_url,
        "broker_url": f"redis://127.0.0.1:{free_port()}/0",
    }
    with TestClient(make_app(pg_engine, tmp_path, **down)) as client:
        ready = client.get("/health/ready")
        assert ready.status_code == 503
        assert ready.json()["checks"]["broker"]["ok"] is False
        assert ready.json()["checks"]["database"]["ok"] is True


async def _trip(redis_url: str, host: str) -> None:
    backend = RedisGateBackend.from_url(redis_url)
    gates = HostGates(backend)  # as a worker in another process would
    policy = DomainPolicy(circuit_failures=1, circuit_cooldown_ms=600_000, budget_per_minute=60)
    try:
        with pytest.raises(TransientFetchError):
            async with gates.slot(host, policy):
                raise TransientFetchError("503", url=f"https://{host}/", host=host)
    finally:
        await backend.aclose()


def test_breakers_opened_by_another_process_show_up(
    pg_url: str, pg_engine: Engine, redis_url: str, tmp_path: Path
) -> None:
    data = seed(pg_engine)
    letters = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10))
    host = f"api-{letters}.fake.test"  # letters: a long digit run is never a label value
    pattern = MARKET_PATTERN.replace(r"market\.fake\.test", host.replace(".", r"\."))
    with pg_engine.begin() as conn:
        meta = conn.execute(
            select(connectors.c.meta).where(connectors.c.id == "card-market")
        ).scalar_one()
        conn.execute(
            update(connectors)
            .where(connectors.c.id == "card-market")
            .values(meta={**meta, "url_patterns": [pattern]})
        )
    asyncio.run(_trip(redis_url, host))
    # no gates injected: the app shares the broker's Redis, as `rareindex api` in a fleet does
    app = create_app(
        settings_for(tmp_path, database_url=pg_url, broker_url=redis_url), engine=pg_engine
    )
    with TestClient(app) as client:
        body = client.get("/api/admin/connectors", headers=bearer(data.read_token)).json()
        assert body["gates"] == "shared"
        [market] = [c for c in body["connectors"] if c["id"] == "card-market"]
        breakers = {h["host"]: h["breaker"] for h in market["hosts"]}
        assert set(breakers) == {host, "market.fake.test"}  # from the pattern and a raw record
        assert breakers[host] == "open"  # (market.fake.test's is whatever other tests left)
        metrics = client.get("/metrics").text
        assert f'rareindex_breaker_state{{host="{host}"}} 2.0' in metrics


def test_storage_queries_agree_on_both_dialects(any_engine: Engine) -> None:
    now = datetime.now(UTC)
    seed(any_engine, now=now)
    snap = metrics_snapshot(any_engine, now=now, recent=timedelta(minutes=5))
    api = snap.engines["card-market", "api"]
    assert (api.attempts, api.blocked, api.circuit_open) == (10, 3, 1)
    assert api.statuses == {"200": 4, "404": 1}
    assert snap.engines["card-market", "scrapfly"].statuses == {"200": 2}
    assert snap.runs_by_outcome == {("card-market", "complete"): 1, ("card-market", "failed"): 1}
    assert snap.normalized_pending == 2
    assert snap.resolved_recent == {"card-market": 1}
    cells = {
        (c.category, c.source_id): c for c in coverage(any_engine, since=now - timedelta(days=30))
    }
    assert (cells["tcg_card", "cards-shop"].assets, cells["tcg_card", "cards-shop"].variants) == (
        2,
        3,
    )
    assert cells["tcg_card", "market"].sales_recent == 2
    assert cells[None, "cards-shop"].sales_recent == 1
    assert (
        cells["tcg_card", "market"].connectors_up,
        cells["tcg_card", "market"].connectors_down,
    ) == (1, 1)
