"""The budget store over real sockets, on both dialects: conditional revisits are cheap 304s,
unchanged pages are revisited less and less often, changed ones more, and the learning is
committed with the records it came with."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, update

from rareindex.budget import MAX_INTERVAL_S, MIN_INTERVAL_S, UrlBudget, next_interval
from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import crawl_state
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext, FetchResult
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import PolicySet, SafeResolver
from rareindex_fakeweb import FakeWeb
from tests.integration.fetch_helpers import running_fake_web


class ItemPages:
    """Five item pages of json.fake.test (ETag-aware), fetched when due, conditionally."""

    meta = ConnectorMeta(
        id="item-pages",
        source="Items",
        engines=("api",),
        categories=("tcg_card",),
        capabilities=("listing",),
        refresh_class="ACTIVE",
    )
    version = "1"
    parser_version = "1"

    def __init__(self, base: str):
        self.base = base
        self.skipped = 0

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        for number in range(1, 6):
            url = FakeWeb.url(self.base, "json.fake.test", f"/items/{number}.json")
            if not ctx.should_fetch(url):
                self.skipped += 1
                continue
            result = await ctx.fetch(url, expect="json", conditional=True)
            if not result.not_modified:
                yield RawRecordInput(external_id=str(number), url=url, payload=result.json())
        ctx.set_cursor({"done": True})

    def normalize(self, raw: Any) -> list[Any]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


@pytest.fixture
def web() -> Iterator[tuple[FakeWeb, str]]:
    with running_fake_web() as running:
        yield running


def _run(connector: ItemPages, db: Engine, tmp_path: Path) -> RunSummary:
    async def go() -> RunSummary:
        stack = build_fetch_stack(
            Settings(_env_file=None),  # type: ignore[call-arg]
            policies=PolicySet.from_mapping(FakeWeb.policy()),
            resolver=SafeResolver(static=FakeWeb.resolver_map()),
        )
        try:
            return await run_connector(
                connector, db=db, stack=stack, store=RawRecordStore(BlobStore(tmp_path))
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("preload", [True, False], ids=["preloaded", "url-by-url"])
def test_revisits_are_conditional_and_spaced_by_how_often_pages_change(
    any_engine: Engine,
    tmp_path: Path,
    web: tuple[FakeWeb, str],
    preload: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same on both read paths of the budget store: every stored state in one query, or,
    for a connector with more than PRELOAD_LIMIT, URL by URL."""
    if not preload:
        monkeypatch.setattr("rareindex.budget.PRELOAD_LIMIT", 0)
    upgrade(any_engine)
    connector = ItemPages(web[1])
    with any_engine.begin() as conn:
        sync_connectors(conn, [connector])

    first = _run(connector, any_engine, tmp_path)
    assert (first.records, first.unchanged) == (5, 0)
    with any_engine.connect() as conn:
        states = conn.execute(select(crawl_state)).all()
    assert len(states) == 5 and all(s.etag for s in states)
    assert {s.change_interval_seconds for s in states} == {1800.0}  # ACTIVE's hour, halved

    web[0].logs.clear()
    again = _run(connector, any_engine, tmp_path)  # nothing is due yet: nothing is fetched
    assert (again.records, connector.skipped) == (0, 5)
    assert web[0].log("json.fake.test").page_requests == 0

    with any_engine.begin() as conn:  # time passes: everything is due
        conn.execute(
            update(crawl_state).values(next_fetch_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    revisit = _run(connector, any_engine, tmp_path)
    assert (revisit.records, revisit.unchanged) == (0, 5)  # five cheap 304s
    assert web[0].log("json.fake.test").page_statuses == [304] * 5
    with any_engine.connect() as conn:
        states = conn.execute(select(crawl_state)).all()
    assert {s.change_interval_seconds for s in states} == {3600.0}  # unchanged: doubled
    assert {(s.changes, s.unchanged) for s in states} == {(1, 1)}
    assert all(s.next_fetch_at > datetime.now(UTC) + timedelta(minutes=59) for s in states)


def test_the_interval_estimate_is_bounded_and_learns_from_changes(sqlite_engine: Engine) -> None:
    assert next_interval(600, changed=True) == MIN_INTERVAL_S
    assert next_interval(MAX_INTERVAL_S, changed=False) == MAX_INTERVAL_S
    upgrade(sqlite_engine)
    budget = UrlBudget(sqlite_engine, "any", initial_interval_s=3600)
    page = FetchResult(url="u", status=200, content=b"v1", engine="api", headers={"ETag": '"a"'})
    now = datetime(2026, 11, 30, tzinfo=UTC)
    assert budget.should_fetch("u", now)
    assert budget.observe("u", page, now) is True
    assert budget.validators("u") == ('"a"', None)
    assert not budget.should_fetch("u", now + timedelta(minutes=29))
    assert budget.should_fetch("u", now + timedelta(minutes=31))
    changed = FetchResult(url="u", status=200, content=b"v2", engine="api")
    assert budget.observe("u", changed, now + timedelta(hours=1)) is True
    assert budget.state("u").change_interval_seconds == 900.0  # type: ignore[union-attr]


@pytest.mark.parametrize("preload", [True, False], ids=["preloaded", "url-by-url"])
def test_a_long_run_keeps_a_bounded_number_of_states_and_its_latest_observations(
    sqlite_engine: Engine, preload: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of many pages holds at most RECENT_STATES URL states besides the preloaded ones
    (the bench's 50,000-page crawl held one for every page: +26 MB), and a URL it observed again
    reads its latest observation, not the state stored before the run, on both read paths."""
    from rareindex.storage.crawl_state import UrlState, save_states

    monkeypatch.setattr("rareindex.budget.RECENT_STATES", 5)
    if not preload:
        monkeypatch.setattr("rareindex.budget.PRELOAD_LIMIT", 0)
    upgrade(sqlite_engine)
    connector = ItemPages("http://unused.test")
    before = datetime(2026, 1, 1, tzinfo=UTC)
    with sqlite_engine.begin() as conn:
        sync_connectors(conn, [connector])
        save_states(conn, "item-pages", [UrlState(url="u0", etag='"old"', last_fetched_at=before)])
    budget = UrlBudget(sqlite_engine, "item-pages")
    assert budget.validators("u0") == ('"old"', None)

    page = FetchResult(url="u0", status=200, headers={"ETag": '"new"'}, content=b"{}", engine="api")
    budget.observe("u0", page)
    taken = budget.take_pending()
    with sqlite_engine.begin() as conn:
        save_states(conn, "item-pages", taken)
    assert budget.validators("u0") == ('"new"', None)  # its own observation, not the stored one

    for number in range(1, 50):  # many more pages than the run keeps
        url = f"u{number}"
        budget.should_fetch(url)
        budget.observe(
            url, FetchResult(url=url, status=200, headers={}, content=b"{}", engine="api")
        )
        with sqlite_engine.begin() as conn:
            save_states(conn, "item-pages", budget.take_pending())
    assert len(budget._recent) <= 5
    assert len(budget._all or {}) <= 1  # the preloaded states do not grow
    assert budget.validators("u0") == ('"new"', None)  # read again: the committed state
