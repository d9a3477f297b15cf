"""A run taken over by another worker sends nothing more, even while its pages yield no record
to commit (a re-run answered by 304s): the lease is checked before each fetch, not only at the
next commit. Over real sockets, on both databases."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import Engine, update

from rareindex.crawl import run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import connector_runs
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput
from rareindex_connectors.runtime import PolicySet, SafeResolver
from rareindex_fakeweb import FakeWeb
from tests.integration.fetch_helpers import running_fake_web

PAGES = 8


class QuietPager:
    """Fetches eight pages and yields nothing (as a re-run of an unchanged store does); after the
    first, another worker takes its run over."""

    meta = ConnectorMeta(
        id="quiet-pager",
        source="Quiet pager",
        engines=("api",),
        categories=("coin",),
        capabilities=("listing",),
    )
    version = parser_version = "1"

    def __init__(self, base: str, db: Engine) -> None:
        self.base, self.db = base, db

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        for page in range(1, PAGES + 1):
            await ctx.fetch(FakeWeb.url(self.base, "json.fake.test", f"/items/{page}.json"))
            if page == 1:
                with self.db.begin() as conn:  # another worker's claim bumps the fencing token
                    conn.execute(
                        update(connector_runs)
                        .where(connector_runs.c.status == "running")
                        .values(lease_token=connector_runs.c.lease_token + 1)
                    )
            await asyncio.sleep(0.4)
        for record in ():
            yield record

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


def test_a_run_taken_over_stops_fetching_before_its_next_commit(
    any_engine: Engine, tmp_path: Path
) -> None:
    upgrade(any_engine)
    with running_fake_web() as (web, base):
        connector = QuietPager(base, any_engine)
        with any_engine.begin() as conn:
            sync_connectors(conn, [connector])

        async def go() -> object:
            stack = build_fetch_stack(
                Settings(_env_file=None),  # type: ignore[call-arg]
                policies=PolicySet.from_mapping(FakeWeb.policy()),
                resolver=SafeResolver(static=FakeWeb.resolver_map()),
            )
            try:
                store = RawRecordStore(BlobStore(tmp_path))
                return await run_connector(
                    connector, db=any_engine, stack=stack, store=store, lease_seconds=1.2
                )
            finally:
                await stack.aclose()

        summary = asyncio.run(go())
    assert summary.failure_reason == "lease_lost"  # type: ignore[attr-defined]
    # page 1, and at most the one or two sent before a renewal (every 0.4 s) met the takeover
    assert web.log("json.fake.test").page_requests <= 3 < PAGES
