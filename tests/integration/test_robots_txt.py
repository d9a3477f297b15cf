"""robots.txt for every fetch, over real sockets: the router reads it once per origin, refuses
what it disallows before anything is sent, applies a stricter Crawl-delay, treats a 503 as
"retry later" and a 404 as allow-all; a written permission skips it, logged; a shipped store
connector's crawl reads it first."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import structlog
from sqlalchemy import Engine

from rareindex.crawl import run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex_connectors._policy import PolicySet
from rareindex_connectors.errors import RobotsDisallowed, RobotsUnavailable
from rareindex_connectors.runtime import Router
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.robots_hosts import CRAWL_DELAY_S, DOWN_HOST, HOST
from tests.integration.fetch_helpers import api_engine, running_fake_web
from tests.integration.test_fetch_politeness import GAP_TOLERANCE_S

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files


def _router(policy: dict[str, object]) -> Router:
    engine = api_engine(policy)
    return Router({"api": engine}, PolicySet.from_mapping(policy))


def _fetch_all(router: Router, urls: list[str]) -> list[object]:
    async def go() -> list[object]:
        try:
            return await asyncio.gather(
                *(router.fetch(url, expect="json") for url in urls), return_exceptions=True
            )
        finally:
            for engine in router.engines.values():
                await engine.aclose()

    return asyncio.run(go())


def test_disallowed_paths_are_never_requested_and_the_crawl_delay_spaces_the_rest() -> None:
    policy = FakeWeb.policy(**{HOST: {"min_interval_ms": 0, "concurrency": 4}})
    with running_fake_web() as (web, base):
        pages = [FakeWeb.url(base, HOST, f"/p/{n}") for n in range(1, 6)]
        refused = [FakeWeb.url(base, HOST, p) for p in ("/private/1", "/members/1")]
        with structlog.testing.capture_logs() as logs:
            results = _fetch_all(_router(policy), [*pages, *refused])
    assert all(not isinstance(r, Exception) for r in results[:5]), results
    assert all(isinstance(r, RobotsDisallowed) for r in results[5:]), results[5:]
    log = web.log(HOST)
    # robots.txt first and once; RareIndexBot's group (not *'s) decides: /members/ is refused too
    assert log.paths[0] == "/robots.txt" and log.paths.count("/robots.txt") == 1
    assert not [p for p in log.paths if p.startswith(("/private/", "/members/"))]
    assert sorted(log.paths[1:]) == sorted(urlsplit(u).path for u in pages)
    page_starts = [t for t, p in zip(log.starts, log.paths, strict=True) if p.startswith("/p/")]
    gaps = [b - a for a, b in itertools.pairwise(sorted(page_starts))]
    assert min(gaps) >= CRAWL_DELAY_S - GAP_TOLERANCE_S, gaps
    events = [e["event"] for e in logs]
    assert events.count("robots.crawl_delay_applied") == 1
    assert events.count("robots.disallowed") == 2


def test_a_crawl_delay_laxer_than_the_policy_changes_nothing() -> None:
    policy = FakeWeb.policy(**{HOST: {"min_interval_ms": 500, "concurrency": 4}})
    with running_fake_web() as (web, base):
        router = _router(policy)
        pages = [FakeWeb.url(base, HOST, f"/p/{n}") for n in range(1, 4)]
        _fetch_all(router, pages)
    starts = [t for t, p in zip(web.log(HOST).starts, web.log(HOST).paths, strict=True)]
    assert min(b - a for a, b in itertools.pairwise(sorted(starts))) >= 0.5 - GAP_TOLERANCE_S
    assert router.gates is not None and router.gates.interval_floor(HOST) == 0.0


def test_an_unreachable_robots_txt_means_retry_later_not_allow_all() -> None:
    policy = FakeWeb.policy(**{DOWN_HOST: {"max_retries": 0}})
    with running_fake_web() as (web, base):
        router = _router(policy)
        urls = [FakeWeb.url(base, DOWN_HOST, "/p/1"), FakeWeb.url(base, DOWN_HOST, "/p/2")]

        async def one_then_another() -> list[BaseException | None]:
            seen: list[BaseException | None] = []
            for url in urls:  # the second within the retry window: answered from the cache
                try:
                    await router.fetch(url, expect="json")
                    seen.append(None)
                except RobotsUnavailable as exc:
                    seen.append(exc)
            await router.engines["api"].aclose()
            return seen

        seen = asyncio.run(one_then_another())
    assert all(isinstance(e, RobotsUnavailable) for e in seen), seen
    assert web.log(DOWN_HOST).paths == ["/robots.txt"]  # no page was sent


def test_no_robots_txt_allows_all_and_a_written_permission_skips_it() -> None:
    permission = "crawl granted by ops@json.fake.test, 2026-11-03"
    with running_fake_web() as (web, base):
        url = FakeWeb.url(base, "json.fake.test", "/items/1.json")
        first = _fetch_all(_router(FakeWeb.policy()), [url])
        assert web.log("json.fake.test").paths == ["/robots.txt", "/items/1.json"]  # a 404
        granted = FakeWeb.policy(**{HOST: {"robots_permission": permission}})
        with structlog.testing.capture_logs() as logs:
            second = _fetch_all(_router(granted), [FakeWeb.url(base, HOST, "/private/1")])
    assert not isinstance(first[0], Exception) and not isinstance(second[0], Exception)
    assert web.log(HOST).paths == ["/private/1"]  # robots.txt not even read
    assert [e for e in logs if e["event"] == "robots.not_applied"] == [
        {
            "event": "robots.not_applied",
            "host": HOST,
            "permission": permission,
            "log_level": "warning",
        }
    ]


def test_a_store_connector_s_crawl_reads_robots_txt_first(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    connector = load_registry(REPO_ROOT / "connectors").get("cards-shop")
    host = "cards-shop.fake.test"
    with running_fake_web() as (web, base):
        port = urlsplit(base).port
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )
        upgrade(sqlite_engine)
        with sqlite_engine.begin() as conn:
            sync_connectors(conn, [connector])

        async def crawl_twice() -> None:
            stack = build_fetch_stack(settings)
            try:
                store = RawRecordStore(BlobStore(tmp_path))
                for _ in range(2):  # one process: the second run uses the cached rules
                    await run_connector(
                        connector, db=sqlite_engine, stack=stack, store=store, max_pages=2
                    )
            finally:
                await stack.aclose()

        asyncio.run(crawl_twice())
    paths = web.log(host).paths
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1, paths[:5]


def test_a_run_ended_by_robots_txt_says_so() -> None:
    from rareindex.crawl import failure_reason
    from rareindex.storage.runs import FAILURE_REASONS

    down = RobotsUnavailable("503", url="http://h.test/robots.txt")
    refused = RobotsDisallowed("disallowed", url="http://h.test/private/1")
    assert (failure_reason(down), failure_reason(refused)) == (
        "robots_unavailable",
        "robots_disallowed",
    )
    assert {"robots_unavailable", "robots_disallowed"} <= FAILURE_REASONS
