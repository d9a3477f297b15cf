"""The health worker end to end, on SQLite and PostgreSQL: recorded runs of the real connectors
in ``connector_runs``, probes against the fake web over real sockets, snapshots in
``connector_health``; a probe the SSRF policy refuses; a probe that skips the host queue but
spends the host budget; a breaker a crawler tripped, seen through the shared (Redis) gates."""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import typer
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine, func, select, update
from structlog.testing import capture_logs
from typer.testing import CliRunner

from rareindex.api import create_app
from rareindex.cli.health_cmd import health
from rareindex.fetching import FetchStack, build_fetch_stack, load_policies
from rareindex.health import HealthSnapshot
from rareindex.health_check import health_due, health_snapshot, run_health
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, new_id, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.field_stats import add_field_stats
from rareindex.storage.health_store import list_health
from rareindex.storage.schema import connector_health, connector_runs, connectors, costs
from rareindex.storage.tokens import create_token
from rareindex_connectors import Connector
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import (
    ApiEngine,
    HostGates,
    MemoryGateBackend,
    RedisGateBackend,
    Router,
    SafeResolver,
)
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb, create_fake_firecrawl_app
from tests.integration.fetch_helpers import running_fake_web

REGISTRY = load_registry(REPO_ROOT / "connectors")
COINS = "coins-woo.fake.test"
WOO_PAGE = f"http://{COINS}/wp-json/wc/store/v1/products"
# As a demo crawl records them (coins-woo: one Store API page of 80 products).
API_STATS = {
    "api": {
        "attempts": 1,
        "success": 1,
        "credits": 0.0,
        "ms": 21,
        "statuses": {"200": 1},
        "blocked": 0,
        "circuit_open": 0,
        "skipped": 0,
    }
}
TRANSIENT_STATS = {
    "api": {**API_STATS["api"], "attempts": 2, "success": 1, "ms": 5012},
}


@pytest.fixture
def web() -> Iterator[tuple[FakeWeb, Settings]]:
    """The fake web on 127.0.0.1, and settings that send the connectors' host names there."""
    with running_fake_web() as (fake_web, base):
        port = base.rsplit(":", 1)[1]
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            connect_to={host: f"127.0.0.1:{port}" for host in FAKE_HOSTS},
        )
        yield fake_web, settings


@pytest.fixture
def db(any_engine: Engine) -> Engine:
    upgrade(any_engine)
    with any_engine.begin() as conn:
        sync_connectors(conn, REGISTRY)
    return any_engine


def record_runs(db: Engine, connector_id: str, runs: list[dict[str, Any]]) -> None:
    """Insert finished runs shaped like the crawler's (``hours_ago`` is when each finished)."""
    now = datetime.now(UTC)
    rows = []
    for spec in runs:
        finished = now - timedelta(hours=spec.pop("hours_ago"))
        failed = spec.get("status") == "failed"
        rows.append(
            {
                "id": new_id("run"),
                "connector_id": connector_id,
                "mode": "incremental",
                "status": "succeeded",
                "outcome": "failed" if failed else "complete",
                "failure_reason": "transient" if failed else None,
                "error": "TransientFetchError: 503 Service Unavailable" if failed else None,
                "queued_at": finished - timedelta(seconds=2),
                "started_at": finished - timedelta(seconds=1),
                "finished_at": finished,
                "pages": 1,
                "records": 0,
                "dupes": 80,
                "engine_stats": TRANSIENT_STATS if failed else API_STATS,
                **spec,
            }
        )
    with db.begin() as conn:
        conn.execute(connector_runs.insert(), rows)


def steady(count: int = 10, *, first_hours_ago: float = 1.0, every: float = 2.0) -> list[Any]:
    return [{"hours_ago": first_hours_ago + i * every} for i in range(count)]


def set_status(db: Engine, connector_id: str, status: str) -> None:
    with db.begin() as conn:
        conn.execute(
            update(connectors).where(connectors.c.id == connector_id).values(status=status)
        )


def stored(db: Engine) -> dict[str, HealthSnapshot]:
    with db.connect() as conn:
        return {snap.connector_id: snap for snap in list_health(conn)}


def override(tmp_path: Path, **hosts: dict[str, Any]) -> Path:
    path = tmp_path / "stricter.json"
    path.write_text(json.dumps({"domains": hosts}))
    return path


def coins() -> list[Connector]:
    return [REGISTRY.get("coins-woo")]


# -- every state, stored ---------------------------------------------------------------------------


def test_each_state_is_stored_from_recorded_runs_with_probes_where_fresh(
    db: Engine, web: tuple[FakeWeb, Settings]
) -> None:
    fake_web, settings = web
    record_runs(db, "coins-woo", steady())  # NORMAL, last success 1 h ago
    record_runs(db, "comics-woo", steady())
    set_status(db, "comics-woo", "disabled")
    record_runs(db, "cards-shop", steady())
    set_status(db, "cards-shop", "paused")
    failures = [{"hours_ago": 1 + i, "status": "failed"} for i in range(3)]
    record_runs(db, "auction-house", failures + steady(7, first_hours_ago=4))
    record_runs(db, "card-market", steady(first_hours_ago=0.2, every=0.5))  # ACTIVE
    today = datetime.now(UTC).date()
    with db.begin() as conn:  # a field card-market filled all week is gone today
        for back in range(1, 8):
            day: date = today - timedelta(days=back)
            add_field_stats(conn, "card-market", day, {("sale", "grading.grade"): (95, 100)})
        add_field_stats(conn, "card-market", today, {("sale", "grading.grade"): (10, 100)})
    record_runs(db, "hobby-news", steady(first_hours_ago=5))  # ACTIVE: 5 h > 2 x 60 min
    # grading-registry: no runs at all

    snapshots = asyncio.run(run_health(db, settings, REGISTRY))

    health = stored(db)
    assert [s.connector_id for s in snapshots] == sorted(health) == sorted(REGISTRY.connectors)
    assert {cid: (s.status, s.reasons) for cid, s in health.items()} == {
        "auction-house": ("BROKEN", ["consecutive_failures", "success_rate_low"]),
        "card-market": ("DEGRADED", ["schema_drift"]),
        "cards-shop": ("MAINTENANCE", ["paused"]),
        "coins-woo": ("UP", []),
        "comics-woo": ("DISABLED", ["disabled"]),
        "grading-registry": ("DEGRADED", ["no_runs"]),
        "hobby-news": ("DEGRADED", ["stale"]),
    }
    up = health["coins-woo"]
    assert (up.success_rate, up.records_per_run, up.blocked_rate) == (1.0, 80.0, 0.0)
    assert (up.breaker_state, up.schema_drift) == ("closed", False)
    assert 3500 <= (up.freshness_seconds or 0) <= 3700
    assert up.details["probe"]["status"] == "UP"
    assert up.details["hosts"] == {COINS: "closed"}
    assert health["card-market"].schema_drift
    assert health["card-market"].details["drift"][0]["field"] == "grading.grade"
    assert health["auction-house"].success_rate == 0.7
    # Fresh and active connectors were probed; stale, paused, disabled and never-run ones not.
    probed = {cid for cid, s in health.items() if s.details["probe"] is not None}
    assert probed == {"auction-house", "card-market", "coins-woo"}
    assert health["hobby-news"].details["probe_skipped"] == "not_fresh"
    assert health["cards-shop"].details["probe_skipped"] == "not_active"
    assert fake_web.log(COINS).requests >= 1
    assert fake_web.log("market.fake.test").requests >= 1
    for host in ("news.fake.test", "comics-woo.fake.test", "cards-shop.fake.test"):
        assert fake_web.log(host).requests == 0, host

    # ... and the admin JSON a monitor polls shows each state and its reasons.
    token = create_token(db, "monitor").token
    app = create_app(settings, engine=db, gates=HostGates(MemoryGateBackend()))
    with TestClient(app) as client:
        answer = client.get("/api/admin/connectors", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    shown = {c["id"]: c["health"] for c in answer.json()["connectors"]}
    assert {cid: h["status"] for cid, h in shown.items()} == {
        cid: s.status for cid, s in health.items()
    }
    assert shown["auction-house"]["details"]["reasons"] == [
        "consecutive_failures",
        "success_rate_low",
    ]

    # The next check replaces each row: one per connector, the new state.
    set_status(db, "comics-woo", "active")
    asyncio.run(run_health(db, settings, REGISTRY, probe=False))
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(connector_health)).scalar() == 7
    again = stored(db)
    assert (again["comics-woo"].status, again["comics-woo"].reasons) == ("UP", [])
    assert again["comics-woo"].details["probe_skipped"] == "probe_off"
    assert again["comics-woo"].checked_at > health["comics-woo"].checked_at


def test_the_actor_entry_point_checks_the_registry_and_is_due_again_after_30_minutes(
    db: Engine, web: tuple[FakeWeb, Settings]
) -> None:
    _, settings = web
    assert health_due(db)  # never checked
    record_runs(db, "coins-woo", steady())

    snapshots = health_snapshot(db, settings)  # what the ``health_snapshot`` actor calls

    assert sorted(s.connector_id for s in snapshots) == sorted(REGISTRY.connectors)
    assert stored(db)["coins-woo"].status == "UP"
    now = datetime.now(UTC)
    assert not health_due(db, now=now)
    assert not health_due(db, now=now + timedelta(minutes=29))
    assert health_due(db, now=now + timedelta(minutes=31))


# -- the probe: SSRF policy, budgets, the queue ----------------------------------------------------


def test_a_probe_of_a_private_address_the_policy_does_not_allow_is_refused(
    db: Engine, web: tuple[FakeWeb, Settings], tmp_path: Path
) -> None:
    """coins-woo.fake.test resolves to 127.0.0.1. The fake web's policy allows that (by
    configuration); a stricter local policy that does not is obeyed by the probe too."""
    fake_web, settings = web
    record_runs(db, "coins-woo", steady())
    strict = settings.model_copy(
        update={"policy_override": override(tmp_path, **{COINS: {"allow_private_network": False}})}
    )

    [refused] = asyncio.run(run_health(db, strict, coins()))

    assert (refused.status, refused.reasons) == ("DEGRADED", ["probe_failed"])
    assert refused.details["probe"]["error"] == "UnsafeURL"
    assert "127.0.0.1 is loopback" in refused.details["probe"]["message"]
    assert fake_web.log(COINS).requests == 0  # refused before anything was sent
    assert stored(db)["coins-woo"].details["probe"]["error"] == "UnsafeURL"

    [allowed] = asyncio.run(run_health(db, settings, coins()))  # the same, as configured
    assert (allowed.status, allowed.details["probe"]["error"]) == ("UP", None)
    assert fake_web.log(COINS).requests >= 1


def test_a_probe_skips_the_host_queue_but_spends_the_host_budget(
    db: Engine, web: tuple[FakeWeb, Settings], tmp_path: Path
) -> None:
    """A crawl holds the host's only slot and the next start is a minute away: a crawl fetch
    waits, the probe goes straight through and is counted in the day's budget."""
    fake_web, settings = web
    record_runs(db, "coins-woo", steady())
    limits = {"concurrency": 1, "min_interval_ms": 60_000, "budget_per_day": 100}
    settings = settings.model_copy(
        update={"policy_override": override(tmp_path, **{COINS: limits})}
    )

    async def main() -> tuple[HealthSnapshot, int, int, float]:
        stack = build_fetch_stack(settings)
        policy = stack.policies.for_host(COINS)
        try:
            async with stack.gates.slot(COINS, policy, url=WOO_PAGE):  # the crawl's request
                with pytest.raises(TimeoutError):  # a second crawl request queues behind it
                    await asyncio.wait_for(stack.router.fetch(WOO_PAGE), 0.5)
                before = await stack.gates.state(COINS)
                started = time.monotonic()
                [snapshot] = await run_health(db, settings, coins(), stack=stack, probe_timeout_s=5)
                elapsed = time.monotonic() - started
                after = await stack.gates.state(COINS)
            assert before is not None and after is not None
            return snapshot, before.day_count, after.day_count, elapsed
        finally:
            await stack.aclose()

    snapshot, before, after, elapsed = asyncio.run(main())

    assert (snapshot.status, snapshot.details["probe"]["status"]) == ("UP", "UP")
    assert elapsed < 10  # not the 60 s interval, nor a wait for the held slot
    sent = fake_web.log(COINS).requests
    assert sent >= 1
    assert after - before == sent  # every probe request counted against the day's budget


def test_a_probe_through_a_paid_engine_is_billed_in_the_costs_ledger(
    db: Engine, web: tuple[FakeWeb, Settings], tmp_path: Path
) -> None:
    """coins-woo configured for Firecrawl only: its probe goes through the (fake) vendor, which
    bills a credit per scrape, and the health worker writes that spend to ``costs`` as a crawl
    would — per engine and day, every request counted."""
    _, settings = web
    port = int(settings.connect_to[COINS].rsplit(":", 1)[1])
    record_runs(db, "coins-woo", steady())
    root = tmp_path / "connectors"
    shutil.copytree(REPO_ROOT / "connectors", root)
    toml = root / "woocommerce" / "coins-woo.toml"
    toml.write_text(toml.read_text() + 'engines = ["firecrawl"]\n')
    paid = load_registry(root).get("coins-woo")
    fake = create_fake_firecrawl_app(api_key="fc-test", upstream_transport=FakeWebOn(port))
    with serve_asgi(fake) as firecrawl_url:
        billed = settings.model_copy(
            update={
                "policy_override": override(tmp_path, **{COINS: {"engines": ["firecrawl"]}}),
                "firecrawl_api_key": SecretStr("fc-test"),
                "firecrawl_api_url": firecrawl_url,
            }
        )
        [snapshot] = asyncio.run(run_health(db, billed, [paid]))
        [again] = asyncio.run(run_health(db, billed, [paid]))  # a second probe adds to the day

    assert snapshot.details["probe"]["status"] == again.details["probe"]["status"] == "UP"
    charged = 1000 - fake.credits_remaining
    assert charged >= 2  # at least one scrape per probe, each billed
    with db.connect() as conn:
        rows = conn.execute(
            select(costs.c.engine, costs.c.day, costs.c.credits, costs.c.requests).where(
                costs.c.connector_id == "coins-woo"
            )
        ).all()
    assert [(r.engine, r.day, Decimal(str(r.credits)), r.requests) for r in rows] == [
        ("firecrawl", datetime.now(UTC).date(), Decimal(charged), charged)
    ]


class FakeWebOn(httpx.AsyncBaseTransport):
    """How the fake vendor reaches the fake web: ``*.fake.test`` to 127.0.0.1:``port`` with the
    ``Host`` kept; anything else is refused (the test never leaves loopback)."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.host not in FAKE_HOSTS:
            raise httpx.ConnectError(f"{request.url.host} is not on the fake web", request=request)
        request.headers["host"] = request.url.host
        request.url = request.url.copy_with(host="127.0.0.1", port=self.port)
        async with httpx.AsyncHTTPTransport() as inner:
            response = await inner.handle_async_request(request)
            await response.aread()
        return httpx.Response(
            response.status_code, headers=response.headers, content=response.content
        )


def test_a_probe_over_the_host_budget_is_refused_and_sends_nothing(
    db: Engine, web: tuple[FakeWeb, Settings], tmp_path: Path
) -> None:
    fake_web, settings = web
    record_runs(db, "coins-woo", steady())
    settings = settings.model_copy(
        update={"policy_override": override(tmp_path, **{COINS: {"budget_per_day": 1}})}
    )

    async def main() -> HealthSnapshot:
        stack = build_fetch_stack(settings)
        try:
            async with stack.gates.slot(COINS, stack.policies.for_host(COINS)):
                pass  # the day's one request, spent by a crawl
            [snapshot] = await run_health(db, settings, coins(), stack=stack)
            return snapshot
        finally:
            await stack.aclose()

    snapshot = asyncio.run(main())

    assert (snapshot.status, snapshot.reasons) == ("DEGRADED", ["probe_failed"])
    assert snapshot.details["probe"]["error"] == "BudgetExhausted"
    assert fake_web.log(COINS).requests == 0


# -- breakers, shared between processes -----------------------------------------------------------


def test_a_breaker_a_crawler_tripped_is_seen_through_the_shared_gates(
    db: Engine, web: tuple[FakeWeb, Settings], redis_url: str, tmp_path: Path
) -> None:
    """Fleet mode: a crawler's gates and the health worker's are two processes' views of one
    Redis state. coins-woo's data is a day old (not fresh: no probe), so the breaker is found
    through the host of its latest capture."""
    _, settings = web
    record_runs(db, "coins-woo", steady(first_hours_ago=30))
    with db.begin() as conn:
        RawRecordStore(BlobStore(tmp_path)).insert_many(
            conn,
            connector_id="coins-woo",
            connector_version="1",
            parser_version="1",
            records=[RawRecordInput(external_id="101", url=WOO_PAGE, payload={"id": 101})],
        )
    prefix = f"ri:test:{secrets.token_hex(4)}:gate:"
    policies = load_policies(settings)
    policy = policies.for_host(COINS)  # circuit_failures 3, cooldown 2 s (domains.d/fake-web.json)

    async def trip() -> None:
        crawler = HostGates(RedisGateBackend.from_url(redis_url, prefix=prefix))
        try:
            for _ in range(policy.circuit_failures):
                with pytest.raises(TransientFetchError):
                    async with crawler.slot(COINS, policy, url=WOO_PAGE):
                        raise TransientFetchError("503", url=WOO_PAGE, host=COINS)
        finally:
            await crawler.backend.aclose()  # type: ignore[attr-defined]

    async def check() -> HealthSnapshot:
        gates = HostGates(RedisGateBackend.from_url(redis_url, prefix=prefix))
        api = ApiEngine(
            policies=policies, gates=gates, resolver=SafeResolver(static=settings.connect_to)
        )
        stack = FetchStack(policies=policies, gates=gates, router=Router({"api": api}, policies))
        try:
            [snapshot] = await run_health(db, settings, coins(), stack=stack)
            return snapshot
        finally:
            await stack.aclose()

    try:
        asyncio.run(trip())
        tripped = asyncio.run(check())
        time.sleep(policy.circuit_cooldown_ms / 1000 + 0.2)
        cooled = asyncio.run(check())
    finally:
        client = redis.Redis.from_url(redis_url)
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
        client.close()

    assert (tripped.status, tripped.reasons) == ("BROKEN", ["breaker_open"])
    assert tripped.breaker_state == "open"
    assert tripped.details["hosts"] == {COINS: "open"}
    assert tripped.details["probe_skipped"] == "not_fresh"
    assert (cooled.status, cooled.reasons, cooled.breaker_state) == (
        "DEGRADED",
        ["breaker_half_open"],
        "half_open",
    )


# -- rareindex health ------------------------------------------------------------------------------


def test_rareindex_health_prints_a_table_and_json_and_shows_what_is_stored(
    sqlite_engine: Engine, web: tuple[FakeWeb, Settings]
) -> None:
    fake_web, settings = web
    upgrade(sqlite_engine)
    settings = settings.model_copy(update={"database_url": str(sqlite_engine.url)})
    with sqlite_engine.begin() as conn:
        sync_connectors(conn, REGISTRY)
    record_runs(sqlite_engine, "coins-woo", steady())
    set_status(sqlite_engine, "cards-shop", "maintenance")
    app = typer.Typer()

    @app.callback()
    def root(ctx: typer.Context) -> None:
        ctx.obj = settings

    app.command("health")(health)
    runner = CliRunner()

    with capture_logs() as events:
        table = runner.invoke(app, ["health"])
        as_json = runner.invoke(app, ["health", "--no-probe", "--json"])
        set_status(sqlite_engine, "coins-woo", "disabled")
        probes = fake_web.log(COINS).requests
        kept = runner.invoke(app, ["health", "--stored", "--json"])

    assert table.exit_code == 0, table.output
    lines = {line.split("│")[1].strip(): line for line in table.stdout.splitlines() if "│" in line}
    assert "UP" in lines["coins-woo"] and "100%" in lines["coins-woo"]
    assert "MAINTENANCE" in lines["cards-shop"] and "maintenance" in lines["cards-shop"]
    assert "no_runs" in lines["grading-registry"]
    assert probes >= 1

    assert as_json.exit_code == 0, as_json.output
    rows = {row["connector_id"]: row for row in json.loads(as_json.stdout)}
    assert sorted(rows) == sorted(REGISTRY.connectors)
    assert (rows["coins-woo"]["status"], rows["coins-woo"]["reasons"]) == ("UP", [])
    assert rows["coins-woo"]["details"]["probe_skipped"] == "probe_off"

    assert json.loads(kept.stdout) == json.loads(as_json.stdout)  # nothing re-checked
    assert fake_web.log(COINS).requests == probes
    assessed = [e for e in events if e["event"] == "health.assessed"]
    assert len(assessed) == 2 * len(REGISTRY)  # two checks; --stored checks nothing
    assert any(e["connector"] == "coins-woo" and e["status"] == "UP" for e in assessed)
