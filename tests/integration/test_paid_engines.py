"""The paid engines (firecrawl, scrapfly) through the real SDKs, against the local fake APIs.

Everything runs on 127.0.0.1: the fake web, the fake Firecrawl and Scrapfly APIs, and the SDKs
talking to them over real sockets. The engines are given the fake web's own URLs
(``http://json.fake.test:PORT/...``), exactly as they would be given a shop's; only the fakes'
upstream transport knows that those names live on 127.0.0.1 (:class:`FakeWebTransport`).
"""

from __future__ import annotations

import asyncio
import socket
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
from structlog.testing import capture_logs

from rareindex_connectors import FetchResult
from rareindex_connectors._engines import FirecrawlEngine, ScrapflyEngine
from rareindex_connectors.errors import (
    Blocked,
    BudgetExhausted,
    FetchError,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    TransientFetchError,
    UnsafeURL,
)
from rareindex_connectors.records import EngineName
from rareindex_connectors.runtime import (
    ApiEngine,
    CostEntry,
    Engine,
    FetchRequest,
    HostGates,
    MemoryGateBackend,
    PolicySet,
    Router,
    SafeResolver,
)
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import (
    Delay,
    FakeFirecrawl,
    FakeScrapfly,
    FirecrawlFault,
    RateLimit,
    ScrapflyFault,
    create_fake_firecrawl_app,
    create_fake_scrapfly_app,
)
from rareindex_fakeweb.fake_web import FAKE_HOSTS, FakeWeb

T = TypeVar("T")
FC_KEY = "fc-test"
SCP_KEY = "scp-test"
VENDORS = ["firecrawl", "scrapfly"]
THE_FAKES_KEY = "<the key the fake accepts>"


class FakeWebTransport(httpx.AsyncBaseTransport):
    """How a fake API reaches the fake web: its host names go to 127.0.0.1 on the same port, with
    the ``Host`` header kept, so the fake web routes them as it would any client's request.

    ``reroute`` serves one fake host from another (``challenge.fake.test`` -> ``json.fake.test``),
    which is how the Scrapfly fake, which solves no challenge, gets past a shield the way real ASP
    does. Anything that is not the fake web is refused: these tests never leave loopback.
    """

    def __init__(self, reroute: Mapping[str, str] | None = None) -> None:
        self._reroute = dict(reroute or {})
        self._inner: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host not in FAKE_HOSTS and host != "127.0.0.1":
            raise httpx.ConnectError(f"{host} is not on the fake web", request=request)
        if host in FAKE_HOSTS:
            request.headers["host"] = f"{self._reroute.get(host, host)}:{request.url.port}"
            request.url = request.url.copy_with(host="127.0.0.1")
        if self._inner is None:  # built in the fake's own event loop, on its first request
            self._inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """The fake closes its client after every fetch; this transport outlives them all."""


@dataclass
class Kit:
    """What every engine shares: policies, the per-host gates and the resolver."""

    policies: PolicySet
    gates: HostGates
    resolver: SafeResolver


def kit(**per_host: dict[str, Any]) -> Kit:
    """Policies for the fake web (loopback allowed), fresh gates; built inside the test's loop."""
    return Kit(
        PolicySet.from_mapping(FakeWeb.policy(**per_host)),
        HostGates(MemoryGateBackend()),
        SafeResolver(static=FakeWeb.resolver_map()),
    )


@dataclass
class Paid:
    """One running fake paid API and how to build its engine."""

    name: str
    fake: FakeFirecrawl | FakeScrapfly
    base_url: str

    @property
    def key(self) -> str:
        return FC_KEY if self.name == "firecrawl" else SCP_KEY

    @property
    def calls(self) -> int:
        return len(self.fake.calls)

    def engine(
        self,
        kit: Kit,
        *,
        key: str | None = THE_FAKES_KEY,
        api_url: str | None = None,
        **options: Any,
    ) -> FirecrawlEngine | ScrapflyEngine:
        cls = FirecrawlEngine if self.name == "firecrawl" else ScrapflyEngine
        return cls(
            api_key=self.key if key == THE_FAKES_KEY else key,
            api_url=api_url or self.base_url,
            policies=kit.policies,
            gates=kit.gates,
            resolver=kit.resolver,
            **options,
        )


Start = Callable[..., Paid]


@pytest.fixture
def web() -> Iterator[tuple[FakeWeb, str]]:
    fake_web = FakeWeb()
    with serve_asgi(fake_web.app) as base_url:
        yield fake_web, base_url


@pytest.fixture
def start() -> Iterator[Start]:
    """``start("firecrawl", **fake_options)``: a fake paid API that fetches from the fake web."""
    with ExitStack() as stack:

        def _start(name: str, *, reroute: Mapping[str, str] | None = None, **options: Any) -> Paid:
            transport = FakeWebTransport(reroute)
            fake: FakeFirecrawl | FakeScrapfly
            if name == "firecrawl":
                fake = create_fake_firecrawl_app(upstream_transport=transport, **options)
            else:
                fake = create_fake_scrapfly_app(upstream_transport=transport, **options)
            return Paid(name, fake, stack.enter_context(serve_asgi(fake)))

        yield _start


def run(main: Callable[[], Awaitable[T]]) -> T:
    """Run one test body in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout=9.0)

    return asyncio.run(bounded())


async def fetch_once(
    engine: FirecrawlEngine | ScrapflyEngine, request: FetchRequest
) -> FetchResult:
    try:
        return await engine.fetch(request)
    finally:
        await engine.aclose()


def fails(engine_factory: Callable[[Kit], Any], url: str, **kit_options: Any) -> FetchError:
    """Fetch ``url`` once and return the error it raised (failing the test if none was raised)."""

    async def main() -> FetchError:
        engine = engine_factory(kit(**kit_options))
        with pytest.raises(FetchError) as info:
            await fetch_once(engine, FetchRequest(url))
        return info.value

    return run(main)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def full_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + repr(exc.args)


# -- success --------------------------------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_good_page_is_fetched_once_with_its_status_content_and_credits(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    fake_web, base = web
    paid = start(vendor)
    url = FakeWeb.url(base, "json.fake.test", "/items/7.json")

    async def main() -> FetchResult:
        return await fetch_once(paid.engine(kit()), FetchRequest(url, expect="json"))

    result = run(main)

    assert (result.status, result.engine) == (200, vendor)
    assert result.json()["title"] == "1999 Pokemon Base Set Charizard #7"
    assert result.credits == 1.0 == paid.fake.credits_used
    assert paid.calls == 1
    assert fake_web.log("json.fake.test").requests == 1


def test_firecrawl_is_asked_for_a_fresh_raw_page_within_the_policy_deadline(
    start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start("firecrawl")
    url = FakeWeb.url(base, "json.fake.test", "/pages/3.html")
    policy = {
        "timeout_ms": 12_000,
        "country": "us",
        "engine_options": {"firecrawl": {"proxy": "enhanced"}},
    }

    async def main() -> FetchResult:
        return await fetch_once(paid.engine(kit(**{"json.fake.test": policy})), FetchRequest(url))

    result = run(main)

    assert isinstance(paid.fake, FakeFirecrawl)
    body = paid.fake.calls[0].body
    assert body["maxAge"] == 0  # Firecrawl's two-day cache would serve yesterday's price
    assert set(body["formats"]) == {"markdown", "rawHtml"}
    assert body["timeout"] == 12_000
    assert body["location"] == {"country": "US"}
    assert b"<p class='price'>$1,250.00</p>" in result.content  # rawHtml, not the markdown
    assert result.credits == 5.0 == paid.fake.credits_used  # 1 + 4 for the enhanced proxy


def test_scrapfly_options_and_country_come_from_the_policy(
    start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start("scrapfly")
    url = FakeWeb.url(base, "json.fake.test", "/pages/3.html")
    options = {"asp": True, "render_js": True, "rendering_wait": 500}
    policy = {"country": "GB", "engine_options": {"scrapfly": options}}

    async def main() -> FetchResult:
        return await fetch_once(paid.engine(kit(**{"json.fake.test": policy})), FetchRequest(url))

    result = run(main)

    assert isinstance(paid.fake, FakeScrapfly)
    params = paid.fake.calls[0].params
    assert (params["asp"], params["render_js"], params["country"]) == ("true", "true", "gb")
    assert params["rendering_wait"] == "500"
    assert "key" not in params and "retry" not in params  # managed timeouts: Scrapfly retries
    assert result.credits == 6.0 == paid.fake.credits_used  # datacenter 1 + browser 5
    assert result.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_unknown_engine_option_is_a_policy_error_naming_the_valid_keys(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")
    policy = {"engine_options": {vendor: {"render_jss": True}}}

    async def main() -> None:
        with pytest.raises(PolicyError, match=r"render_jss.*valid: .*timeout_ms"):
            await fetch_once(paid.engine(kit(**{"json.fake.test": policy})), FetchRequest(url))

    run(main)
    assert paid.calls == 0


def test_a_bad_firecrawl_option_value_fails_before_anything_is_sent(
    start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start("firecrawl")
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")
    policy = {"engine_options": {"firecrawl": {"proxy": "residential"}}}

    async def main() -> None:
        with pytest.raises(PolicyError, match=r"json\.fake\.test.*proxy"):
            await fetch_once(paid.engine(kit(**{"json.fake.test": policy})), FetchRequest(url))

    run(main)
    assert paid.calls == 0


# -- what the target said --------------------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_cloudflare_challenge_is_blocked_and_its_credits_are_recorded(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)
    url = FakeWeb.url(base, "challenge.fake.test", "/cards/1")

    error = fails(paid.engine, url)

    assert isinstance(error, Blocked)
    assert (error.vendor, error.engine, error.host) == ("cloudflare", vendor, "challenge.fake.test")
    assert error.credits == 1.0 == paid.fake.credits_used  # billed although it was a wall


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_upstream_404_is_permanent_and_charged(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)

    error = fails(paid.engine, FakeWeb.url(base, "json.fake.test", "/no-such-card"))

    assert isinstance(error, PermanentFetchError)
    assert error.status == 404
    assert error.credits == 1.0 == paid.fake.credits_used


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_upstream_503_is_transient_and_charged(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)

    error = fails(paid.engine, FakeWeb.url(base, "flaky.fake.test", "/down"))

    assert type(error) is TransientFetchError
    assert "503" in str(error)
    assert error.credits == 1.0 == paid.fake.credits_used


def test_a_scrapfly_asp_failure_is_blocked(start: Start, web: tuple[FakeWeb, str]) -> None:
    _, base = web
    paid = start("scrapfly", faults=[ScrapflyFault("ERR::ASP::SHIELD_PROTECTION_FAILED")])

    error = fails(paid.engine, FakeWeb.url(base, "json.fake.test", "/items/1.json"))

    assert isinstance(error, Blocked)
    assert error.vendor is None  # Scrapfly does not say whose shield it failed
    assert "ERR::ASP::SHIELD_PROTECTION_FAILED" in str(error)
    assert error.credits == 0.0 == paid.fake.credits_used


# -- what the vendor said --------------------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDORS)
def test_spent_vendor_credits_are_budget_exhausted(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor, credits=0)

    error = fails(paid.engine, FakeWeb.url(base, "json.fake.test", "/items/1.json"))

    assert isinstance(error, BudgetExhausted)
    assert error.credits == 0.0
    assert paid.calls == 1


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_vendors_429_is_rate_limited_with_its_retry_after(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor, rate_limit=RateLimit(1, per_seconds=60))
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")

    async def main() -> FetchError:
        engine = paid.engine(kit())
        try:
            await engine.fetch(FetchRequest(url))
            with pytest.raises(RateLimited) as info:
                await engine.fetch(FetchRequest(url))
        finally:
            await engine.aclose()
        return info.value

    error = run(main)

    assert isinstance(error, RateLimited)
    assert error.retry_after is not None and 55 <= error.retry_after <= 60
    assert paid.calls == 2  # one send each: the SDK did not retry the 429 itself


@pytest.mark.parametrize(
    ("vendor", "fault"),
    [
        ("firecrawl", FirecrawlFault(502)),  # firecrawl-py resends a 502 when it may
        ("scrapfly", ScrapflyFault("ERR::API::INTERNAL_ERROR")),
    ],
)
def test_a_vendor_5xx_is_transient_and_sent_once(
    vendor: str, fault: Any, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor, faults=[fault])

    error = fails(paid.engine, FakeWeb.url(base, "json.fake.test", "/items/1.json"))

    assert type(error) is TransientFetchError
    assert paid.calls == 1


@pytest.mark.serial  # asserts the client gave up in time
@pytest.mark.parametrize("vendor", VENDORS)
def test_a_read_timeout_is_one_billed_send(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    """The vendor did the work and billed it, then answered too late: no second send."""
    _, base = web
    paid = start(vendor, delays=[Delay(5.0)])
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")
    started = time.monotonic()

    error = fails(lambda k: paid.engine(k, timeout_s=1.0), url)

    assert type(error) is TransientFetchError
    assert time.monotonic() - started < 4.0
    assert paid.calls == 1
    assert error.credits == 1.0 == paid.fake.credits_used


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_wrong_key_is_permanent_and_never_shown(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)
    secret = f"{paid.key}-wrong/s3cr3t+k"

    error = fails(lambda k: paid.engine(k, key=secret), FakeWeb.url(base, "json.fake.test", "/"))

    assert type(error) is PermanentFetchError
    assert error.status is None  # the API refused us; the target said nothing
    assert "401" in str(error)
    for form in (secret, "s3cr3t"):
        assert form not in full_text(error)


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_unreachable_vendor_is_transient_free_and_the_key_never_shown(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)
    secret = f"{paid.key}-live/s3cr3t+k"
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")

    error = fails(lambda k: paid.engine(k, key=secret, api_url=closed_port_url()), url)

    assert type(error) is TransientFetchError
    assert "unreachable" in str(error)
    assert error.credits == 0.0  # nothing reached the vendor, nothing was billed
    assert "s3cr3t" not in full_text(error)


# -- before any vendor call ----------------------------------------------------------------------


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_missing_key_makes_the_engine_unavailable(
    vendor: str, start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    paid = start(vendor)
    reason = f"RI_{vendor.upper()}_API_KEY is not set"

    async def main() -> None:
        for key in (None, ""):
            engine = paid.engine(kit(), key=key)
            assert engine.unavailable_reason() == reason
            with pytest.raises(PermanentFetchError, match=reason):
                await fetch_once(engine, FetchRequest(FakeWeb.url(base, "json.fake.test", "/")))
        assert paid.engine(kit()).unavailable_reason() is None

    run(main)
    assert paid.calls == 0


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_private_target_is_refused_before_any_vendor_call(vendor: str, start: Start) -> None:
    paid = start(vendor)

    error = fails(paid.engine, "http://10.0.0.1/admin")

    assert isinstance(error, UnsafeURL)
    assert paid.calls == 0


@pytest.mark.parametrize("vendor", VENDORS)
def test_the_target_hosts_gate_is_used(vendor: str, start: Start, web: tuple[FakeWeb, str]) -> None:
    _, base = web
    paid = start(vendor)
    url = FakeWeb.url(base, "json.fake.test", "/items/1.json")

    async def main() -> None:
        engine = paid.engine(kit(**{"json.fake.test": {"budget_per_day": 1}}))
        try:
            await engine.fetch(FetchRequest(url))
            with pytest.raises(BudgetExhausted, match=r"json\.fake\.test: the day's"):
                await engine.fetch(FetchRequest(url))
        finally:
            await engine.aclose()

    run(main)
    assert paid.calls == 1


# -- through the router ----------------------------------------------------------------------------


def test_the_router_escalates_a_challenge_from_api_to_firecrawl_to_scrapfly(
    start: Start, web: tuple[FakeWeb, str]
) -> None:
    """api and Firecrawl meet the Cloudflare challenge; Scrapfly's ASP gets through.

    The Scrapfly fake runs no JavaScript and solves no challenge, so its upstream transport plays
    the solved shield: it fetches ``challenge.fake.test`` from ``json.fake.test``. The engines and
    the router see the same URL and the same code path as in production.
    """
    fake_web, base = web
    firecrawl = start("firecrawl")
    scrapfly = start("scrapfly", reroute={"challenge.fake.test": "json.fake.test"})
    url = FakeWeb.url(base, "challenge.fake.test", "/items/7.json")
    shielded = {"engine_options": {"scrapfly": {"asp": True, "render_js": True}}}
    ledger: list[CostEntry] = []

    async def main() -> tuple[FetchResult, Router]:
        k = kit(**{"challenge.fake.test": shielded})
        engines: dict[EngineName, Engine] = {
            "api": ApiEngine(policies=k.policies, gates=k.gates, resolver=k.resolver),
            "firecrawl": firecrawl.engine(k),
            "scrapfly": scrapfly.engine(k),
        }
        router = Router(engines, k.policies, on_cost=ledger.append)
        try:
            result = await router.fetch(
                url, engines=("api", "firecrawl", "scrapfly"), expect="json"
            )
        finally:
            for engine in engines.values():
                await engine.aclose()
        return result, router

    result, router = run(main)

    assert result.engine == "scrapfly"
    assert result.json()["id"] == "7"
    # robots.txt first, behind the same wall: read the same way (api, Firecrawl, then Scrapfly,
    # whose solved shield finds none: allow all), and paid for like a page
    robots = url.replace("/items/7.json", "/robots.txt")
    stats = {name: s.as_dict() for name, s in router.stats.items()}
    assert (stats["api"]["blocked"], stats["api"]["credits"]) == (2, 0.0)
    assert (stats["firecrawl"]["blocked"], stats["firecrawl"]["credits"]) == (2, 2.0)
    assert (stats["scrapfly"]["success"], stats["scrapfly"]["credits"]) == (1, 12.0)
    assert [(e.engine, e.credits, e.url) for e in ledger] == [
        ("firecrawl", 1.0, robots),
        ("scrapfly", 6.0, robots),
        ("firecrawl", 1.0, url),
        ("scrapfly", 6.0, url),
    ]
    assert firecrawl.fake.credits_used == 2 and scrapfly.fake.credits_used == 12
    assert fake_web.log("challenge.fake.test").requests == 4  # api, then Firecrawl's, twice


def test_the_router_skips_scrapfly_without_a_key_and_says_why(
    start: Start, web: tuple[FakeWeb, str]
) -> None:
    _, base = web
    firecrawl = start("firecrawl")
    scrapfly = start("scrapfly")
    url = FakeWeb.url(base, "challenge.fake.test", "/cards/1")

    async def main() -> Router:
        k = kit()
        engines: dict[EngineName, Engine] = {
            "api": ApiEngine(policies=k.policies, gates=k.gates, resolver=k.resolver),
            "firecrawl": firecrawl.engine(k),
            "scrapfly": scrapfly.engine(k, key=None),
        }
        router = Router(engines, k.policies)
        try:
            with pytest.raises(Blocked):  # every engine that could run met the wall
                await router.fetch(url, engines=("api", "firecrawl", "scrapfly"))
        finally:
            for engine in engines.values():
                await engine.aclose()
        return router

    with capture_logs() as logs:
        router = run(main)

    skipped = [entry for entry in logs if entry["event"] == "router.engine_skipped"]
    assert skipped == [
        {
            "event": "router.engine_skipped",
            "log_level": "info",
            "engine": "scrapfly",
            "host": "challenge.fake.test",
            "reason": "RI_SCRAPFLY_API_KEY is not set",
        }
    ]
    assert router.stats["scrapfly"].skipped == 1
    assert router.stats["scrapfly"].attempts == 0
    assert scrapfly.calls == 0
    assert firecrawl.calls == 1
