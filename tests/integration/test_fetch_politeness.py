"""The api engine and host gates against the fake web over real sockets: what hosts actually see."""

from __future__ import annotations

import asyncio
import time
import tracemalloc

import pytest
import structlog

from rareindex_connectors._engines import BROWSER_USER_AGENT, FetchRequest, bot_user_agent
from rareindex_connectors.errors import (
    Blocked,
    CircuitOpen,
    PermanentFetchError,
    RateLimited,
    ResponseTooLarge,
    TransientFetchError,
    UnsafeURL,
)
from rareindex_connectors.testing.clock import ScaledClock
from rareindex_fakeweb.fake_web import FakeWeb
from tests.integration.fetch_helpers import api_engine, running_fake_web

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files

GAP_TOLERANCE_S = 0.05
"""Server-observed gaps may be shorter than the reserved interval by connection set-up and
scheduling jitter on a loaded 2-core machine; 50 ms is the tolerance we hold ourselves to."""


async def _fetch_all(engine, urls):  # type: ignore[no-untyped-def]
    try:
        return await asyncio.gather(*(engine.fetch(FetchRequest(u)) for u in urls))
    finally:
        await engine.aclose()


def test_concurrency_and_interval_hold_at_the_host() -> None:
    host = "json.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"concurrency": 2, "min_interval_ms": 200}}))
        urls = [web.url(base, host, "/slow/450") for _ in range(8)]
        started = time.monotonic()
        results = asyncio.run(_fetch_all(engine, urls))
        elapsed = time.monotonic() - started
    log = web.log(host)
    assert [r.status for r in results] == [200] * 8
    assert log.requests == 8
    assert log.max_in_flight == 2  # the cap was reached, never passed
    assert log.min_gap() is not None and log.min_gap() >= 0.2 - GAP_TOLERANCE_S
    assert elapsed >= 7 * 0.2


def test_retry_after_keeps_us_away_for_that_long() -> None:
    host = "ratelimit.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_retries": 2}}))
        result = asyncio.run(_fetch_all(engine, [web.url(base, host, "/retry-after/2")]))[0]
    log = web.log(host)
    assert result.status == 200
    assert log.statuses == [429, 200]
    assert log.starts[1] - log.starts[0] >= 2.0


def test_retry_after_as_http_date_is_honoured() -> None:
    host = "ratelimit.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_retries": 2}}))
        asyncio.run(_fetch_all(engine, [web.url(base, host, "/retry-after-date/1")]))
    log = web.log(host)
    assert log.statuses[-1] == 200 and log.count(429) == 1
    assert log.starts[1] - log.starts[0] >= 1.0


def test_a_retry_after_beyond_the_cap_reschedules_instead_of_sleeping() -> None:
    host = "ratelimit.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(
            FakeWeb.policy(**{host: {"max_retries": 3, "retry_after_cap_ms": 1000}})
        )
        started = time.monotonic()
        with pytest.raises(RateLimited) as excinfo:
            asyncio.run(_fetch_all(engine, [web.url(base, host, "/retry-after/30")]))
    assert excinfo.value.retry_after == 30.0
    assert time.monotonic() - started < 2.0
    assert web.log(host).requests == 1


def test_a_per_minute_budget_like_the_host_s_sees_zero_429s() -> None:
    """200 requests to a host allowing 30 a minute, our budget set the same: the host never has
    to say 429. Time runs 30x faster for both sides (ScaledClock), so 200 requests take ~14 s."""
    host = "budget.fake.test"
    clock = ScaledClock(factor=30)
    with running_fake_web(clock=clock, budget_per_minute=30) as (web, base):
        engine = api_engine(
            FakeWeb.policy(
                **{host: {"budget_per_minute": 30, "concurrency": 4, "max_wait_ms": 120_000}}
            ),
            clock=clock,
        )
        urls = [web.url(base, host, f"/item/{i}") for i in range(200)]
        results = asyncio.run(_fetch_all(engine, urls))
    log = web.log(host)
    assert len(results) == 200 and log.requests == 200
    assert log.count(429) == 0
    assert log.count(200) == 200


def test_breaker_opens_fails_fast_and_half_opens() -> None:
    host = "flaky.fake.test"
    policy = FakeWeb.policy(**{host: {"circuit_failures": 3, "circuit_cooldown_ms": 400}})

    async def scenario(web: FakeWeb, base: str) -> list[str]:
        engine = api_engine(policy)
        outcomes = []
        try:
            for path in ["/down"] * 5:
                try:
                    await engine.fetch(FetchRequest(web.url(base, host, path)))
                except (TransientFetchError, CircuitOpen) as exc:
                    outcomes.append(type(exc).__name__)
            await asyncio.sleep(0.45)
            for path, pause in (("/flap", 0.45), ("/flap", 0.0)):  # flap: 503 then 200
                try:
                    await engine.fetch(FetchRequest(web.url(base, host, path)))
                    outcomes.append("ok")
                except (TransientFetchError, CircuitOpen) as exc:
                    outcomes.append(type(exc).__name__)
                await asyncio.sleep(pause)
            try:  # closed again: the next 503 reaches the host instead of failing fast
                await engine.fetch(FetchRequest(web.url(base, host, "/flap")))
            except TransientFetchError:
                outcomes.append("reached")
        finally:
            await engine.aclose()
        return outcomes

    with running_fake_web() as (web, base):
        outcomes = asyncio.run(scenario(web, base))
    assert outcomes == [
        "TransientFetchError",
        "TransientFetchError",
        "TransientFetchError",  # opens
        "CircuitOpen",
        "CircuitOpen",  # fail fast: never reached the host
        "TransientFetchError",  # half-open trial fails: reopens
        "ok",  # the next trial succeeds: closed
        "reached",
    ]
    assert web.log(host).requests == 3 + 1 + 1 + 1


def test_conditional_request_turns_into_a_cheap_304() -> None:
    host = "json.fake.test"

    async def scenario(web: FakeWeb, base: str):  # type: ignore[no-untyped-def]
        engine = api_engine(FakeWeb.policy())
        try:
            first = await engine.fetch(FetchRequest(web.url(base, host, "/items/7.json")))
            again = await engine.fetch(
                FetchRequest(web.url(base, host, "/items/7.json"), etag=first.headers["etag"])
            )
            return first, again
        finally:
            await engine.aclose()

    with running_fake_web() as (web, base):
        first, again = asyncio.run(scenario(web, base))
    assert first.status == 200 and first.json()["id"] == "7"
    assert again.status == 304 and again.not_modified and again.content == b""


def test_user_agent_is_honest_unless_the_policy_says_browser() -> None:
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{"flaky.fake.test": {"user_agent": "browser"}}))
        asyncio.run(_fetch_all(engine, [web.url(base, "json.fake.test", "/items/1.json")]))
        engine = api_engine(FakeWeb.policy(**{"flaky.fake.test": {"user_agent": "browser"}}))
        with pytest.raises(TransientFetchError):
            asyncio.run(_fetch_all(engine, [web.url(base, "flaky.fake.test", "/down")]))
    assert web.log("json.fake.test").user_agents == {bot_user_agent()}
    assert bot_user_agent().startswith("RareIndexBot/") and "(+http" in bot_user_agent()
    assert web.log("flaky.fake.test").user_agents == {BROWSER_USER_AGENT}


def test_a_challenge_page_is_blocked_not_retried_and_feeds_the_breaker() -> None:
    host = "challenge.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_retries": 3, "circuit_failures": 2}}))
        for _ in range(2):
            with pytest.raises(Blocked) as excinfo:
                asyncio.run(_fetch_all(engine, [web.url(base, host, "/lot/1")]))
            engine = api_engine(
                FakeWeb.policy(**{host: {"max_retries": 3, "circuit_failures": 2}}),
                backend=engine.gates.backend,
            )
        with pytest.raises(CircuitOpen):
            asyncio.run(_fetch_all(engine, [web.url(base, host, "/lot/1")]))
    assert excinfo.value.vendor == "cloudflare"
    assert web.log(host).requests == 2  # no retries into the wall, and then not at all


def test_flapping_503_is_retried_with_backoff() -> None:
    host = "flaky.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_retries": 2}}))
        with structlog.testing.capture_logs() as logs:
            result = asyncio.run(_fetch_all(engine, [web.url(base, host, "/flap")]))[0]
    assert result.status == 200
    assert web.log(host).statuses == [503, 200]
    retry = next(e for e in logs if e["event"] == "fetch.retrying")
    assert retry["host"] == host and retry["attempt"] == 1


def test_a_decompression_bomb_stops_at_the_size_limit() -> None:
    host = "bomb.fake.test"
    limit = 2 * 1024 * 1024
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_response_bytes": limit}}))
        tracemalloc.start()
        try:
            with pytest.raises(ResponseTooLarge):
                asyncio.run(_fetch_all(engine, [web.url(base, host, "/bomb")]))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        engine = api_engine(FakeWeb.policy(**{host: {"max_response_bytes": limit}}))
        with pytest.raises(ResponseTooLarge):
            asyncio.run(_fetch_all(engine, [web.url(base, host, "/large")]))
    assert web.bomb_size < 64 * 1024
    assert peak < 3 * limit  # never held the 11 MB it inflates to


def test_404_is_permanent_and_never_retried() -> None:
    host = "json.fake.test"
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(**{host: {"max_retries": 3}}))
        with pytest.raises(PermanentFetchError) as excinfo:
            asyncio.run(_fetch_all(engine, [web.url(base, host, "/missing")]))
    assert excinfo.value.status == 404
    assert web.log(host).requests == 1


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://evil.example/",  # resolves to 127.0.0.1 and is not allow-listed
        "REDIRECT:/private",  # a redirect into private space
        "REDIRECT:/metadata",
    ],
)
def test_ssrf_vectors_are_refused_unless_allow_listed(url: str) -> None:
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy(), static={"evil.example": "127.0.0.1"})
        if url.startswith("REDIRECT:"):
            url = web.url(base, "redirect.fake.test", url.removeprefix("REDIRECT:"))
        with pytest.raises(UnsafeURL):
            asyncio.run(_fetch_all(engine, [url]))
    assert "evil.example" not in web.logs


def test_redirects_are_followed_across_hosts_and_loops_refused() -> None:
    with running_fake_web() as (web, base):
        engine = api_engine(FakeWeb.policy())
        result = asyncio.run(
            _fetch_all(
                engine, [web.url(base, "redirect.fake.test", "/to/json.fake.test/items/3.json")]
            )
        )[0]
        engine = api_engine(FakeWeb.policy())
        with pytest.raises(PermanentFetchError, match="redirect loop"):
            asyncio.run(_fetch_all(engine, [web.url(base, "redirect.fake.test", "/loop-a")]))
    assert result.status == 200 and result.url.startswith("http://json.fake.test:")
