"""The traps host: a pager that repeats its last page forever stops with a logged reason, and
challenge walls never yield records (the run fails closed as ``blocked``, nothing stored)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import structlog
from sqlalchemy import Engine, func, select

from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import raw_records
from rareindex_adapters.stores import ShopifyStoreConnector
from rareindex_connectors import Connector, ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb


@pytest.fixture(scope="module")
def settings() -> Iterator[Settings]:
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        yield Settings(
            _env_file=None,
            connectors_dir=REPO_ROOT / "connectors",  # type: ignore[call-arg]
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )


def _run(connector: Connector, db: Engine, settings: Settings, tmp_path: Path) -> RunSummary:
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])

    async def go() -> RunSummary:
        stack = build_fetch_stack(settings)
        try:
            return await run_connector(
                connector, db=db, stack=stack, store=RawRecordStore(BlobStore(tmp_path))
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())


def _stored(db: Engine) -> int:
    with db.connect() as conn:
        return conn.execute(select(func.count()).select_from(raw_records)).scalar_one()


def test_a_pager_repeating_its_last_page_forever_stops_with_a_logged_reason(
    sqlite_engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    connector = ShopifyStoreConnector.from_config(
        {
            "source": "Endless",
            "base_url": "http://traps.fake.test",
            "currency": "USD",
            "categories": ["tcg_card"],
            "max_pages": 50,
        },
        slug="endless-pager",
    )
    with structlog.testing.capture_logs() as logs:
        summary = _run(connector, sqlite_engine, settings, tmp_path)
    stops = [e for e in logs if e["event"] == "pagination.stopped"]
    assert [e["reason"] for e in stops] == ["repeated_page"]
    assert summary.status == "succeeded" and summary.pages <= 5  # not 50: the net caught it
    assert summary.records == _stored(sqlite_engine) > 0


class WallCrawler:
    """Fetches each challenge page of the traps host, as a naive connector would."""

    meta = ConnectorMeta(
        id="wall-crawler",
        source="Walls",
        engines=("api",),
        categories=("other",),
        capabilities=("listing",),
    )
    version = "1"
    parser_version = "1"

    def __init__(self, path: str):
        self.path = path

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        result = await ctx.fetch(f"http://traps.fake.test{self.path}")
        yield RawRecordInput(external_id=self.path, url=result.url, payload={"html": result.text})

    def normalize(self, raw: Any) -> list[Any]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


@pytest.mark.parametrize("path", ["/px", "/akamai", "/datadome", "/cloudflare"])
def test_challenge_walls_never_yield_records(
    sqlite_engine: Engine, settings: Settings, tmp_path: Path, path: str
) -> None:
    summary = _run(WallCrawler(path), sqlite_engine, settings, tmp_path)
    assert (summary.status, summary.failure_reason) == ("failed", "blocked")
    assert summary.blocked == 1 and summary.records == 0
    assert _stored(sqlite_engine) == 0
