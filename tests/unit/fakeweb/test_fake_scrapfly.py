"""The fake Scrapfly API, driven by the real scrapfly-sdk over loopback sockets.

A tiny upstream (JSON page, HTML page, Cloudflare challenge, 404, an echo, a page that never
answers) stands in for the fake web; the fake fetches from it and the SDK talks to the fake.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import pytest
from scrapfly import ScrapeConfig, ScrapflyClient
from scrapfly.errors import (
    ApiHttpClientError,
    ApiHttpServerError,
    BadApiKeyError,
    PaymentRequired,
    ScrapflyAspError,
    ScrapflyError,
    ScrapflyProxyError,
    ScrapflyScrapeError,
    TooManyRequest,
    UpstreamHttpClientError,
    UpstreamHttpServerError,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb.fake_scrapfly import FakeScrapfly, ScrapflyFault, create_fake_scrapfly_app
from rareindex_fakeweb.servers import Delay, RateLimit, linger

CARD_HTML = """<!doctype html>
<html lang="en"><head><title>1986 Fleer Michael Jordan #57 PSA 8</title></head>
<body><h1>1986 Fleer Michael Jordan #57</h1><p>Price: <b>$4,250.00</b></p></body></html>"""

CHALLENGE_HTML = """<!DOCTYPE html><html><head><title>Just a moment...</title></head>
<body><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/v1"></script></body></html>"""

Start = Callable[..., tuple[FakeScrapfly, ScrapflyClient]]


def upstream_app() -> Starlette:
    async def card(request: Request) -> Response:
        return HTMLResponse(CARD_HTML, headers={"set-cookie": "session=abc; Path=/"})

    async def card_json(request: Request) -> Response:
        return JSONResponse({"cert": "12345678", "price": "4250.00"})

    async def challenge(request: Request) -> Response:
        headers = {"cf-mitigated": "challenge", "server": "cloudflare"}
        return HTMLResponse(CHALLENGE_HTML, status_code=403, headers=headers)

    async def missing(request: Request) -> Response:
        return HTMLResponse("<h1>Not found</h1>", status_code=404)

    async def broken(request: Request) -> Response:
        return HTMLResponse("<h1>Oops</h1>", status_code=503)

    async def echo(request: Request) -> Response:
        body = (await request.body()).decode()
        return JSONResponse({"method": request.method, "body": body, "ua": request.headers["x-ua"]})

    async def never(request: Request) -> Response:
        await linger(request, 10.0)  # ends as soon as the fake gives up and hangs up
        return HTMLResponse("too late")

    return Starlette(
        routes=[
            Route("/cards/57", card),
            Route("/api/cards/57.json", card_json),
            Route("/challenge", challenge),
            Route("/missing", missing),
            Route("/broken", broken),
            Route("/echo", echo, methods=["POST"]),
            Route("/never", never),
        ]
    )


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    with serve_asgi(upstream_app()) as base_url:
        yield base_url


@pytest.fixture
def start() -> Iterator[Start]:
    """Start a fake (options as for ``create_fake_scrapfly_app``) and an SDK client for it."""
    with ExitStack() as stack:

        def _start(
            client: dict[str, Any] | None = None, **fake_options: Any
        ) -> tuple[FakeScrapfly, ScrapflyClient]:
            fake = create_fake_scrapfly_app(**fake_options)
            base_url = stack.enter_context(serve_asgi(fake))
            return fake, ScrapflyClient(key="scp-test", host=base_url, **(client or {}))

        yield _start


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


# -- content and cost ----------------------------------------------------------------------


def test_scrape_returns_the_full_envelope_the_sdk_reads(start: Start, web: str) -> None:
    fake, client = start()
    url = f"{web}/cards/57"

    response = client.scrape(ScrapeConfig(url, country="us"))

    assert response.content == CARD_HTML
    assert (response.status_code, response.upstream_status_code) == (200, 200)
    assert (response.cost, response.remaining_quota) == (1, 999)
    assert response.headers["X-Scrapfly-Upstream-Http-Code"] == "200"
    assert response.config is not None and response.config["url"] == url
    assert response.context is not None and response.context["proxy"]["country"] == "us"
    assert response.scrape_result is not None
    assert response.scrape_result["format"] == "text"
    assert response.scrape_result["response_headers"]["set-cookie"] == ["session=abc; Path=/"]
    assert response.scrape_result["log_url"].endswith(response.result["uuid"])
    upstream = response.upstream_result_into_response()
    assert upstream is not None
    assert (upstream.status_code, upstream.text, upstream.cookies["session"]) == (
        200,
        CARD_HTML,
        "abc",
    )
    assert [(c.method, c.target, c.key_valid, c.status, c.cost) for c in fake.calls] == [
        ("GET", url, True, 200, 1)
    ]
    assert "key" not in fake.calls[0].params


@pytest.mark.parametrize(
    ("render_js", "proxy_pool", "cost"),
    [
        (False, None, 1),
        (True, None, 6),
        (False, "public_residential_pool", 25),
        (True, "public_residential_pool", 30),
    ],
)
def test_cost_is_pool_plus_browser(
    start: Start, web: str, render_js: bool, proxy_pool: str | None, cost: int
) -> None:
    fake, client = start(credits=100)

    response = client.scrape(
        ScrapeConfig(f"{web}/cards/57", render_js=render_js, proxy_pool=proxy_pool)
    )

    assert response.cost == cost
    assert response.context is not None and response.context["cost"]["total"] == cost
    assert response.remaining_quota == 100 - cost
    assert (fake.credits_used, fake.calls[0].cost) == (cost, cost)


def test_json_and_converted_formats(start: Start, web: str) -> None:
    _, client = start()

    raw = client.scrape(ScrapeConfig(f"{web}/api/cards/57.json"))
    markdown = client.scrape(ScrapeConfig(f"{web}/cards/57", format="markdown"))
    text = client.scrape(ScrapeConfig(f"{web}/cards/57", format="text"))

    assert json.loads(raw.content) == {"cert": "12345678", "price": "4250.00"}
    assert markdown.content == "# 1986 Fleer Michael Jordan #57\n\nPrice: $4,250.00"
    assert text.content == "1986 Fleer Michael Jordan #57 Price: $4,250.00"


def test_method_body_and_headers_reach_the_target(start: Start, web: str) -> None:
    _, client = start()
    config = ScrapeConfig(
        f"{web}/echo", method="POST", body='{"q": 1}', headers={"x-ua": "RareIndex"}
    )

    response = client.scrape(config)

    assert json.loads(response.content) == {"method": "POST", "body": '{"q": 1}', "ua": "RareIndex"}


# -- upstream errors: billed, HTTP 200, BAD_UPSTREAM_RESPONSE -------------------------------


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/challenge", 403, UpstreamHttpClientError),
        ("/missing", 404, UpstreamHttpClientError),
        ("/broken", 503, UpstreamHttpServerError),
    ],
)
def test_an_upstream_error_raises_upstream_http_error_and_is_billed(
    start: Start, web: str, path: str, status: int, error: type[ScrapflyError]
) -> None:
    fake, client = start()

    with pytest.raises(error) as info:
        client.scrape(ScrapeConfig(f"{web}{path}"))

    assert type(info.value) is error
    assert info.value.code == "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE"
    assert info.value.http_status_code == status
    response = info.value.api_response
    assert response is not None
    assert (response.status_code, response.upstream_status_code, response.cost) == (200, status, 1)
    assert response.headers["X-Scrapfly-Reject-Code"] == "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE"
    assert [(c.status, c.upstream_status, c.cost) for c in fake.calls] == [(200, status, 1)]
    assert fake.credits_used == 1


def test_a_challenge_page_is_returned_when_upstream_errors_are_not_raised(
    start: Start, web: str
) -> None:
    fake, client = start()

    response = client.scrape(ScrapeConfig(f"{web}/challenge", raise_on_upstream_error=False))

    assert response.upstream_status_code == 403
    assert response.content == CHALLENGE_HTML
    assert response.scrape_result is not None
    assert response.scrape_result["response_headers"]["cf-mitigated"] == "challenge"
    assert response.error is not None
    assert response.error["code"] == "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE"
    assert fake.credits_used == 1


# -- API errors ------------------------------------------------------------------------------


def test_a_wrong_key_is_a_generic_401_and_free(start: Start, web: str) -> None:
    fake, client = start()
    intruder = ScrapflyClient(key="scp-wrong", host=client.host)

    with pytest.raises(ApiHttpClientError) as info:
        intruder.scrape(ScrapeConfig(f"{web}/cards/57"))

    assert not isinstance(info.value, BadApiKeyError)  # the SDK never maps the real 401 to it
    assert (info.value.http_status_code, info.value.code) == (401, "")
    assert [(c.key_valid, c.status, c.cost) for c in fake.calls] == [(False, 401, 0)]


def test_an_invalid_url_is_a_config_error(start: Start) -> None:
    fake, client = start()

    with pytest.raises(ApiHttpClientError) as info:
        client.scrape(ScrapeConfig("ftp://example.invalid/card"))

    assert (info.value.http_status_code, info.value.code) == (400, "ERR::SCRAPE::CONFIG_ERROR")
    assert [(c.status, c.cost, c.error_code) for c in fake.calls] == [
        (400, 0, "ERR::SCRAPE::CONFIG_ERROR")
    ]


def test_a_spent_balance_is_402_payment_required(start: Start, web: str) -> None:
    fake, client = start(credits=6)
    client.scrape(ScrapeConfig(f"{web}/cards/57", render_js=True))

    with pytest.raises(PaymentRequired) as info:
        client.scrape(ScrapeConfig(f"{web}/cards/57"))

    assert info.value.code == "ERR::ACCOUNT::PAYMENT_REQUIRED"
    assert info.value.api_response is not None
    assert info.value.api_response.remaining_quota == 0
    assert [(c.status, c.cost) for c in fake.calls] == [(200, 6), (402, 0)]


def test_the_rate_limit_is_429_too_many_request_with_retry_after(start: Start, web: str) -> None:
    fake, client = start(rate_limit=RateLimit(requests=1, per_seconds=30))
    client.scrape(ScrapeConfig(f"{web}/cards/57"))

    with pytest.raises(TooManyRequest) as info:
        client.scrape(ScrapeConfig(f"{web}/cards/57"))

    assert info.value.code == "ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED"
    assert info.value.is_retryable is True
    assert info.value.api_response is not None
    assert 25 <= int(info.value.api_response.headers["Retry-After"]) <= 30
    assert [c.status for c in fake.calls] == [200, 429]
    assert fake.credits_used == 1


def test_the_concurrency_limit_is_429_while_a_scrape_is_in_flight(start: Start, web: str) -> None:
    held = f"{web}/cards/57?held"
    fake, client = start(max_concurrency=1, delays=[Delay(0.5, match=r"\?held$")])

    with ThreadPoolExecutor(max_workers=1) as pool:
        first = pool.submit(client.scrape, ScrapeConfig(held))
        wait_until(lambda: fake.in_flight == 1)
        with pytest.raises(TooManyRequest) as info:
            client.scrape(ScrapeConfig(f"{web}/cards/57"))
        assert first.result(timeout=5).upstream_status_code == 200

    assert info.value.code == "ERR::THROTTLE::MAX_CONCURRENT_REQUEST_EXCEEDED"
    assert sorted(c.status for c in fake.calls) == [200, 429]


@pytest.mark.parametrize(
    ("code", "status", "error"),
    [
        ("ERR::ASP::SHIELD_PROTECTION_FAILED", 422, ScrapflyAspError),
        ("ERR::PROXY::UNAVAILABLE", 422, ScrapflyProxyError),
        ("ERR::SCRAPE::DRIVER_TIMEOUT", 422, ScrapflyScrapeError),
        ("ERR::THROTTLE::MAX_CONCURRENT_REQUEST_EXCEEDED", 429, TooManyRequest),
        ("ERR::ACCOUNT::PAYMENT_REQUIRED", 402, PaymentRequired),
        ("ERR::SCRAPE::OPERATION_TIMEOUT", 504, ApiHttpServerError),
    ],
)
def test_a_forced_fault_surfaces_as_the_sdk_exception(
    start: Start, web: str, code: str, status: int, error: type[ScrapflyError]
) -> None:
    fake, client = start(faults=[ScrapflyFault(code, match=r"/cards/57$", times=1)])

    with pytest.raises(error) as info:
        client.scrape(ScrapeConfig(f"{web}/cards/57"))
    client.scrape(ScrapeConfig(f"{web}/cards/57"))  # times=1: the next one goes through

    assert type(info.value) is error
    assert (info.value.code, info.value.http_status_code) == (code, status)
    assert info.value.api_response is not None
    assert info.value.api_response.headers["X-Scrapfly-Reject-Code"] == code
    assert [(c.status, c.error_code) for c in fake.calls] == [(status, code), (200, None)]
    assert fake.credits_used == 1  # the fault was not billed


def test_an_asp_fault_only_hits_matching_urls(start: Start, web: str) -> None:
    fault = ScrapflyFault("ERR::ASP::SHIELD_PROTECTION_FAILED", match=r"/challenge$")
    fake, client = start(faults=[fault])

    client.scrape(ScrapeConfig(f"{web}/cards/57", asp=True))
    for _ in range(2):
        with pytest.raises(ScrapflyAspError) as info:
            client.scrape(ScrapeConfig(f"{web}/challenge", asp=True))
        assert info.value.is_retryable is True

    assert [c.status for c in fake.calls] == [200, 422, 422]


def test_an_unknown_fault_code_needs_an_http_code() -> None:
    with pytest.raises(ValueError, match="ERR::ASP::SHIELD_PROTECTION_FAILED"):
        ScrapflyFault("ERR::ASP::NOT_A_CODE")
    assert ScrapflyFault("ERR::ASP::NOT_A_CODE", http_code=422).http_code == 422


def test_an_upstream_that_never_answers_is_a_proxy_timeout_and_free(start: Start, web: str) -> None:
    fake, client = start()

    with pytest.raises(ScrapflyProxyError) as info:
        client.scrape(ScrapeConfig(f"{web}/never", timeout=300))

    assert info.value.code == "ERR::PROXY::TIMEOUT"
    assert [(c.status, c.cost) for c in fake.calls] == [(422, 0)]
    assert fake.credits_used == 0


# -- the SDK's own retries: every attempt is a billed request -------------------------------


def test_the_sdk_resends_after_a_read_timeout_and_both_sends_are_billed(
    start: Start, web: str
) -> None:
    fake, client = start(
        client={"web_scraping_api_read_timeout": 0.3}, delays=[Delay(5.0, times=1)]
    )

    response = client.scrape(ScrapeConfig(f"{web}/cards/57"))  # backoff retries ReadTimeout

    assert response.content == CARD_HTML
    assert [(c.status, c.cost) for c in fake.calls] == [(200, 1), (200, 1)]
    assert fake.credits_used == 2
