"""Parser-scored escalation in production, over real sockets: the marketplace serves its item
pages as a JavaScript shell to plain clients and the full page to rendering engines; the shipped
card-market connector's scorer finds none of its fields in the shell, so each item page goes on
to (fake) Firecrawl, and every stored record has its listing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr
from sqlalchemy import Engine, select

from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import raw_records
from rareindex_connectors.runtime import PolicySet
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.fake_firecrawl import create_fake_firecrawl_app
from tests.integration.test_health_worker import FakeWebOn

MARKET = "market.fake.test"
KEY = "fc-test"


def _crawl(db: Engine, tmp_path: Path, web: FakeWeb) -> tuple[RunSummary, list[Any], int]:
    """One page of card-market's sold search and its item pages; the stored payloads and the
    credits the fake Firecrawl charged."""
    connector = load_registry(REPO_ROOT / "connectors").get("card-market")
    policy = FakeWeb.policy(**{MARKET: {"engines": ["api", "firecrawl"]}})
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])
    with serve_asgi(web.app) as base:
        port = urlsplit(base).port or 80
        fake = create_fake_firecrawl_app(api_key=KEY, upstream_transport=FakeWebOn(port))
        with serve_asgi(fake) as firecrawl_url:
            settings = Settings(
                _env_file=None,  # type: ignore[call-arg]
                connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
                firecrawl_api_key=SecretStr(KEY),
                firecrawl_api_url=firecrawl_url,
            )

            async def go() -> RunSummary:
                stack = build_fetch_stack(settings, policies=PolicySet.from_mapping(policy))
                try:
                    store = RawRecordStore(BlobStore(tmp_path))
                    return await run_connector(
                        connector, db=db, stack=stack, store=store, max_pages=1
                    )
                finally:
                    await stack.aclose()

            summary = asyncio.run(go())
    with db.connect() as conn:
        payloads = list(conn.execute(select(raw_records.c.payload)).scalars())
    return summary, payloads, 1000 - fake.credits_remaining


def test_a_javascript_shell_escalates_to_a_rendering_engine(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    web = FakeWeb(client_rendered={MARKET: "/itm/"})
    summary, payloads, charged = _crawl(sqlite_engine, tmp_path, web)
    assert summary.status == "succeeded", summary.error
    assert summary.records == len(payloads) > 0
    assert all(p["listing"] is not None for p in payloads)  # each read from the rendered page
    api, firecrawl = summary.engines["api"], summary.engines["firecrawl"]
    assert firecrawl["success"] == len(payloads) == charged  # one scrape per item page
    assert api["success"] == len(payloads) + 1  # every item page, and the search page


def test_a_full_page_never_pays_for_rendering(sqlite_engine: Engine, tmp_path: Path) -> None:
    summary, payloads, charged = _crawl(sqlite_engine, tmp_path, FakeWeb())
    assert all(p["listing"] is not None for p in payloads) and payloads
    assert charged == 0 and "firecrawl" not in summary.engines
