"""A run a host ended with ``Retry-After`` reschedules itself at that time, over real sockets and
on both databases: the scheduler enqueues nothing before it and enqueues the connector then, not
at its next refresh interval; a huge Retry-After is cut to the policy's ``reschedule_max_ms``; a
200 that says the rate-limit window is spent holds the host until it resets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import Engine, select

from rareindex.crawl import run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import due_connectors
from rareindex.storage.schema import connector_runs
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors._engines import FetchRequest
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput
from rareindex_connectors.runtime import PolicySet
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from tests.integration.fetch_helpers import api_engine, running_fake_web

HOST = "ratelimit.fake.test"


class RateLimitedSource:
    """Fetches one page of ``ratelimit.fake.test``; that host answers 429 with Retry-After."""

    meta = ConnectorMeta(
        id="limited-source",
        source="Rate-limited source",
        engines=("api",),
        categories=("coin",),
        capabilities=("listing",),
        refresh_class="ARCHIVE",
    )
    version = parser_version = "1"

    def __init__(self, path: str) -> None:
        self.path = path

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        url = f"http://{HOST}{self.path}"
        result = await ctx.fetch(url, expect="json")
        yield RawRecordInput(external_id="1", url=url, payload=result.json())

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


def _crawl(db: Engine, base: str, path: str, tmp_path: Path, **policy: Any) -> dict[str, Any]:
    port = base.rsplit(":", 1)[1]
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
    )
    policies = PolicySet.from_mapping(
        FakeWeb.policy(**{HOST: {"retry_after_cap_ms": 1000, **policy}})
    )
    connector = RateLimitedSource(path)
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])

    async def go() -> None:
        stack = build_fetch_stack(settings, policies=policies)
        try:
            store = RawRecordStore(BlobStore(tmp_path))
            await run_connector(connector, db=db, stack=stack, store=store)
        finally:
            await stack.aclose()

    asyncio.run(go())
    with db.connect() as conn:
        row = conn.execute(select(connector_runs).order_by(connector_runs.c.created_at)).all()[-1]
    return dict(row._mapping)


def _plan(db: Engine, now: datetime) -> tuple[list[str], dict[str, str]]:
    metas = {RateLimitedSource.meta.id: RateLimitedSource.meta}
    with db.connect() as conn:
        plan = due_connectors(conn, now, metas, env={})
    return [d.connector_id for d in plan.due], {s.connector_id: s.reason for s in plan.skipped}


def test_a_retry_after_date_holds_the_connector_then_runs_it_at_once(
    any_engine: Engine, tmp_path: Path
) -> None:
    with running_fake_web() as (_, base):
        started = datetime.now(UTC)
        run = _crawl(any_engine, base, "/retry-after-date/3", tmp_path)
    assert (run["status"], run["failure_reason"]) == ("failed", "rate_limited")
    hold = run["retry_not_before"]
    assert started + timedelta(seconds=2) <= hold <= started + timedelta(seconds=15)  # a busy CI
    due, skipped = _plan(any_engine, hold - timedelta(seconds=1))
    assert due == [] and skipped == {"limited-source": "retry_after"}
    # The ARCHIVE refresh interval is days away; the host's time has come: due now.
    due, skipped = _plan(any_engine, hold + timedelta(seconds=1))
    assert due == ["limited-source"] and skipped == {}


def test_a_retry_after_beyond_the_policy_maximum_is_cut_to_it(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    with running_fake_web() as (_, base), structlog.testing.capture_logs() as logs:
        started = datetime.now(UTC)
        run = _crawl(sqlite_engine, base, "/retry-after/100000", tmp_path, reschedule_max_ms=60_000)
    assert run["failure_reason"] == "rate_limited"
    hold = run["retry_not_before"]
    assert started + timedelta(seconds=59) <= hold <= started + timedelta(seconds=75)
    assert any(e["event"] == "crawl.retry_after_capped" for e in logs)


def test_a_spent_rate_limit_window_holds_the_host_until_it_resets() -> None:
    policy = FakeWeb.policy(**{HOST: {"min_interval_ms": 0, "concurrency": 2}})
    with running_fake_web() as (web, base):
        engine = api_engine(policy)
        url = FakeWeb.url(base, HOST, "/window/1")

        async def twice() -> None:
            try:
                for _ in range(2):
                    await engine.fetch(FetchRequest(url))
            finally:
                await engine.aclose()

        asyncio.run(twice())
    first, second = web.log(HOST).starts
    assert second - first >= 0.95
