"""The fake Firecrawl v2 API, driven by the real firecrawl-py SDK over loopback sockets.

A tiny upstream (JSON page, HTML page, Cloudflare challenge, 404, a page that never answers)
stands in for the fake web; the fake fetches from it and the SDK talks to the fake.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import pytest
import requests
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    FirecrawlError,
    InternalServerError,
    PaymentRequiredError,
    RateLimitError,
    RequestTimeoutError,
    UnauthorizedError,
    WebsiteNotSupportedError,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb.fake_firecrawl import (
    FakeFirecrawl,
    FirecrawlFault,
    create_fake_firecrawl_app,
)
from rareindex_fakeweb.servers import Delay, RateLimit, linger

CARD_HTML = """<!doctype html>
<html lang="en"><head><title>1986 Fleer Michael Jordan #57 PSA 8</title>
<meta name="description" content="Graded rookie card">
<meta property="og:site_name" content="Card Shop"><script>var tracking = 1;</script></head>
<body><nav><a href="/account">Account</a></nav>
<main><h1>1986 Fleer Michael Jordan #57</h1><p>Price: <b>$4,250.00</b></p>
<ul><li>PSA 8</li><li>Cert 12345678</li></ul><a href="/cards/58">Next card</a></main>
<footer>(c) shop</footer></body></html>"""

CHALLENGE_HTML = """<!DOCTYPE html><html><head><title>Just a moment...</title></head>
<body><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/v1"></script></body></html>"""

Start = Callable[..., tuple[FakeFirecrawl, Firecrawl]]


class Upstream:
    """The fake web for these tests: a base URL and how often each path was fetched."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.url = ""

    def app(self) -> Callable[[Any, Any, Any], Awaitable[None]]:
        async def card(request: Request) -> Response:
            return HTMLResponse(CARD_HTML)

        async def card_json(request: Request) -> Response:
            return JSONResponse({"cert": "12345678", "price": "4250.00", "currency": "USD"})

        async def challenge(request: Request) -> Response:
            headers = {"cf-mitigated": "challenge", "server": "cloudflare"}
            return HTMLResponse(CHALLENGE_HTML, status_code=403, headers=headers)

        async def missing(request: Request) -> Response:
            return HTMLResponse("<h1>Not found</h1>", status_code=404)

        async def never(request: Request) -> Response:
            await linger(request, 10.0)  # ends as soon as the fake gives up and hangs up
            return HTMLResponse("too late")

        routes = [
            Route("/cards/57", card),
            Route("/api/cards/57.json", card_json),
            Route("/challenge", challenge),
            Route("/missing", missing),
            Route("/never", never),
        ]
        app = Starlette(routes=routes)

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.hits[scope["path"]] += 1
            await app(scope, receive, send)

        return counted


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    web = Upstream()
    with serve_asgi(web.app()) as base_url:
        web.url = base_url
        yield web


@pytest.fixture
def start() -> Iterator[Start]:
    """Start a fake (options as for ``create_fake_firecrawl_app``) and an SDK client for it."""
    with ExitStack() as stack:

        def _start(
            client: dict[str, Any] | None = None, **fake_options: Any
        ) -> tuple[FakeFirecrawl, Firecrawl]:
            fake = create_fake_firecrawl_app(**fake_options)
            base_url = stack.enter_context(serve_asgi(fake))
            options = {"max_retries": 0, "timeout": 10.0} | (client or {})
            return fake, Firecrawl(api_key="fc-test", api_url=base_url, **options)

        yield _start


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


# -- content -------------------------------------------------------------------------------


def test_scrape_wraps_the_upstream_html_in_every_requested_format(
    start: Start, upstream: Upstream
) -> None:
    fake, client = start()
    url = f"{upstream.url}/cards/57"

    doc = client.scrape(url, formats=["markdown", "html", "rawHtml", "links"], max_age=0)

    assert doc.markdown is not None and doc.html is not None and doc.raw_html == CARD_HTML
    assert "# 1986 Fleer Michael Jordan #57" in doc.markdown
    assert "Price: $4,250.00" in doc.markdown
    assert f"[Next card]({upstream.url}/cards/58)" in doc.markdown
    assert "Account" not in doc.markdown and "tracking" not in doc.html  # main content only
    assert doc.links == [f"{upstream.url}/account", f"{upstream.url}/cards/58"]
    meta = doc.metadata_typed
    assert (meta.title, meta.description, meta.language) == (
        "1986 Fleer Michael Jordan #57 PSA 8",
        "Graded rookie card",
        "en",
    )
    assert meta.og_site_name == "Card Shop"
    assert (meta.status_code, meta.source_url, meta.url) == (200, url, url)
    assert meta.content_type is not None and meta.content_type.startswith("text/html")
    assert (meta.proxy_used, meta.cache_state, meta.credits_used) == ("basic", "miss", 1)
    assert meta.scrape_id
    assert [(c.endpoint, c.target, c.status, c.credits) for c in fake.calls] == [
        ("/v2/scrape", url, 200, 1)
    ]
    assert fake.calls[0].body["formats"] == ["markdown", "html", "rawHtml", "links"]
    assert (fake.credits_used, fake.credits_remaining) == (1, 999)


def test_json_format_returns_the_page_data_and_costs_four_more_credits(
    start: Start, upstream: Upstream
) -> None:
    fake, client = start()

    doc = client.scrape(
        f"{upstream.url}/api/cards/57.json",
        formats=[{"type": "json", "prompt": "the cert number and price"}],
        max_age=0,
    )

    assert doc.json == {"cert": "12345678", "price": "4250.00", "currency": "USD"}
    assert doc.markdown is None  # only what was asked for
    assert doc.metadata_typed.credits_used == 5
    assert fake.credits_used == 5


def test_enhanced_proxy_costs_four_more_credits_and_reports_stealth(
    start: Start, upstream: Upstream
) -> None:
    fake, client = start()

    doc = client.scrape(f"{upstream.url}/cards/57", proxy="enhanced", max_age=0)

    assert doc.metadata_typed.proxy_used == "stealth"
    assert fake.credits_used == 5


@pytest.mark.parametrize(("path", "status"), [("/challenge", 403), ("/missing", 404)])
def test_an_upstream_error_page_is_a_success_with_its_status_and_is_charged(
    start: Start, upstream: Upstream, path: str, status: int
) -> None:
    fake, client = start()

    doc = client.scrape(f"{upstream.url}{path}", formats=["rawHtml", "markdown"], max_age=0)

    assert doc.metadata_typed.status_code == status
    assert doc.metadata_typed.credits_used == 1
    if status == 403:
        assert doc.raw_html == CHALLENGE_HTML  # the challenge markers reach the caller
    assert [(c.status, c.upstream_status, c.credits) for c in fake.calls] == [(200, status, 1)]
    assert fake.credits_used == 1


def test_max_age_serves_a_cached_copy_still_billed_unless_zero(
    start: Start, upstream: Upstream
) -> None:
    fake, client = start()
    url = f"{upstream.url}/cards/57?cache-test"
    before = upstream.hits["/cards/57"]

    first = client.scrape(url)  # no max_age: the API default is two days
    second = client.scrape(url)
    fresh = client.scrape(url, max_age=0)

    assert [d.metadata_typed.cache_state for d in (first, second, fresh)] == ["miss", "hit", "miss"]
    assert second.metadata_typed.cached_at == first.metadata_typed.cached_at
    assert upstream.hits["/cards/57"] - before == 2
    assert fake.credits_used == 3


def test_an_error_page_is_never_served_from_cache(start: Start, upstream: Upstream) -> None:
    fake, client = start()
    before = upstream.hits["/missing"]

    docs = [client.scrape(f"{upstream.url}/missing") for _ in range(2)]

    assert [d.metadata_typed.cache_state for d in docs] == ["miss", "miss"]
    assert upstream.hits["/missing"] - before == 2
    assert fake.credits_used == 2


def test_map_lists_same_site_links_for_one_credit(start: Start, upstream: Upstream) -> None:
    fake, client = start()

    result = client.map(f"{upstream.url}/cards/57", search="cards")

    assert [link.url for link in result.links] == [
        f"{upstream.url}/cards/57",
        f"{upstream.url}/cards/58",
    ]
    assert fake.credits_used == 1


def test_search_matches_the_index_for_two_credits_per_ten_results(
    start: Start, upstream: Upstream
) -> None:
    index = [
        {"url": f"{upstream.url}/cards/57", "title": "Jordan Fleer 57", "description": "PSA 8"},
        {"url": f"{upstream.url}/cards/58", "title": "Pippen rookie", "description": "PSA 9"},
    ]
    fake, client = start(search_index=index)

    result = client.search("fleer jordan", limit=5)

    assert result.web is not None
    assert [(hit.url, hit.title, hit.position) for hit in result.web] == [
        (f"{upstream.url}/cards/57", "Jordan Fleer 57", 1)
    ]
    assert fake.calls[0].target == "fleer jordan"
    assert fake.credits_used == 2


# -- errors --------------------------------------------------------------------------------


def test_a_wrong_key_is_401_and_free(start: Start, upstream: Upstream) -> None:
    fake, client = start()
    intruder = Firecrawl(api_key="fc-wrong", api_url=client.api_url, max_retries=0)

    with pytest.raises(UnauthorizedError) as info:
        intruder.scrape(f"{upstream.url}/cards/57")

    assert info.value.status_code == 401
    assert [(c.authorized, c.status, c.credits) for c in fake.calls] == [(False, 401, 0)]
    assert fake.credits_used == 0


def test_a_spent_balance_is_402_payment_required(start: Start, upstream: Upstream) -> None:
    fake, client = start(credits=5)
    url = f"{upstream.url}/cards/57"
    client.scrape(url, formats=[{"type": "json", "prompt": "price"}], max_age=0)  # 5 credits

    with pytest.raises(PaymentRequiredError, match="Insufficient credits"):
        client.scrape(url, max_age=0)

    assert [c.status for c in fake.calls] == [200, 402]
    assert (fake.credits_used, fake.credits_remaining) == (5, 0)


def test_an_invalid_url_is_400(start: Start) -> None:
    fake, client = start()

    with pytest.raises(BadRequestError):
        client.scrape("not a url")

    assert [(c.status, c.credits) for c in fake.calls] == [(400, 0)]


def test_an_upstream_that_never_answers_is_408_and_free(start: Start, upstream: Upstream) -> None:
    fake, client = start()

    with pytest.raises(RequestTimeoutError):
        client.scrape(f"{upstream.url}/never", timeout=1000)  # the API's minimum

    assert [(c.status, c.credits) for c in fake.calls] == [(408, 0)]
    assert fake.credits_used == 0


def test_the_rate_limit_answers_429_with_retry_after(start: Start, upstream: Upstream) -> None:
    fake, client = start(rate_limit=RateLimit(requests=2, per_seconds=60))
    url = f"{upstream.url}/cards/57"
    client.scrape(url, max_age=0)
    client.scrape(url, max_age=0)

    with pytest.raises(RateLimitError) as info:
        client.scrape(url, max_age=0)

    assert info.value.response is not None
    assert 55 <= int(info.value.response.headers["Retry-After"]) <= 60
    assert [c.status for c in fake.calls] == [200, 200, 429]
    assert fake.credits_used == 2


def test_the_concurrency_limit_answers_429_while_a_scrape_is_in_flight(
    start: Start, upstream: Upstream
) -> None:
    held = f"{upstream.url}/cards/57?held"
    fake, client = start(max_concurrency=1, delays=[Delay(0.5, match=r"\?held$")])

    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(client.scrape, held, max_age=0)
        wait_until(lambda: fake.in_flight == 1)
        with pytest.raises(RateLimitError) as info:
            client.scrape(f"{upstream.url}/cards/57", max_age=0)
        assert first.result(timeout=5).metadata_typed.status_code == 200

    assert info.value.response is not None
    assert info.value.response.headers["Retry-After"] == "1"
    assert sorted(c.status for c in fake.calls) == [200, 429]


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, BadRequestError),
        (402, PaymentRequiredError),
        (403, WebsiteNotSupportedError),
        (408, RequestTimeoutError),
        (429, RateLimitError),
        (500, InternalServerError),
        (503, FirecrawlError),
    ],
)
def test_a_forced_fault_surfaces_as_the_sdk_exception(
    start: Start, upstream: Upstream, status: int, error: type[FirecrawlError]
) -> None:
    fake, client = start(faults=[FirecrawlFault(status, match=r"/cards/57$", times=1)])
    url = f"{upstream.url}/cards/57"

    with pytest.raises(error) as info:
        client.scrape(url, max_age=0)
    client.scrape(url, max_age=0)  # times=1: the next one goes through

    assert info.value.status_code == status
    assert [c.status for c in fake.calls] == [status, 200]
    assert fake.credits_used == 1


def test_a_fault_only_hits_matching_urls(start: Start, upstream: Upstream) -> None:
    fake, client = start(faults=[FirecrawlFault(403, match=r"/challenge$")])

    client.scrape(f"{upstream.url}/cards/57", max_age=0)
    for _ in range(2):
        with pytest.raises(WebsiteNotSupportedError):
            client.scrape(f"{upstream.url}/challenge", max_age=0)

    assert [c.status for c in fake.calls] == [200, 403, 403]


# -- the SDK's own retries: every attempt is a billed request -------------------------------


def test_a_client_timeout_after_the_request_was_sent_is_still_billed(
    start: Start, upstream: Upstream
) -> None:
    fake, client = start(client={"timeout": 0.3}, delays=[Delay(5.0)])

    with pytest.raises(requests.exceptions.ReadTimeout):  # not a FirecrawlError
        client.scrape(f"{upstream.url}/cards/57", max_age=0)

    assert [(c.status, c.credits) for c in fake.calls] == [(200, 1)]
    assert fake.credits_used == 1
    wait_until(lambda: fake.in_flight == 0, timeout=2.0)  # the fake noticed the hang-up


def test_max_retries_resends_a_timed_out_scrape_and_each_send_is_billed(
    start: Start, upstream: Upstream
) -> None:
    client_options = {"timeout": 0.3, "max_retries": 3, "backoff_factor": 0.01}
    fake, client = start(client=client_options, delays=[Delay(5.0)])

    with pytest.raises(requests.exceptions.ReadTimeout):
        client.scrape(f"{upstream.url}/cards/57", max_age=0)

    assert len(fake.calls) == 3  # max_retries counts attempts, not retries
    assert fake.credits_used == 3


def test_max_retries_resends_on_502_only(start: Start, upstream: Upstream) -> None:
    fake, client = start(
        client={"max_retries": 3, "backoff_factor": 0.01}, faults=[FirecrawlFault(502, times=2)]
    )
    url = f"{upstream.url}/cards/57"

    client.scrape(url, max_age=0)  # 502, 502, then 200
    fake.add_fault(FirecrawlFault(500, times=1))
    with pytest.raises(InternalServerError):
        client.scrape(url, max_age=0)  # 500 is not retried

    assert [c.status for c in fake.calls] == [502, 502, 200, 500]
