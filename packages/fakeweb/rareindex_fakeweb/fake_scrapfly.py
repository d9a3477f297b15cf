"""A local fake of the Scrapfly Web Scraping API (``/scrape``) that the real scrapfly-sdk parses.

Every answer carries the full envelope ``{config, context, result, uuid}`` with every field
``scrapfly/api_response.py`` and ``client.py`` read (``config.headers``, ``result.log_url``,
``result.duration``, ...), plus the headers ``X-Scrapfly-Api-Cost``,
``X-Scrapfly-Remaining-Api-Credit`` and ``X-Scrapfly-Upstream-Http-Code``. The fake fetches the
target itself (from the local fake web) and bills 1 credit (datacenter) or 25 (residential),
+5 with ``render_js`` (it runs no JavaScript and solves no challenge). How answers reach the SDK,
as on the real API:

- a bad or missing key: 401, the generic error (no code) -> ``ApiHttpClientError``, not
  ``BadApiKeyError``;
- an invalid ``url`` or unsupported ``format``: 400 generic, ``ERR::SCRAPE::CONFIG_ERROR`` ->
  ``ApiHttpClientError``;
- the credit balance spent: 402 ``ERR::ACCOUNT::PAYMENT_REQUIRED`` -> ``PaymentRequired``;
- concurrency or rate exceeded: 429 ``ERR::THROTTLE::MAX_*_EXCEEDED`` + ``Retry-After`` ->
  ``TooManyRequest`` (the SDK never raises ``ScrapflyThrottleError`` for these);
- a :class:`ScrapflyFault` such as ``ERR::ASP::SHIELD_PROTECTION_FAILED``: 422 ->
  ``ScrapflyAspError`` (``ERR::PROXY::*`` -> ``ScrapflyProxyError``), not billed;
- an upstream timeout or connection error: 422 ``ERR::PROXY::TIMEOUT`` /
  ``ERR::SCRAPE::NETWORK_ERROR``, not billed;
- an upstream 4xx/5xx: 200 ``ERR::SCRAPE::BAD_UPSTREAM_RESPONSE`` -> ``UpstreamHttpClientError``
  / ``UpstreamHttpServerError``, billed.

With ``ScrapeConfig(raise_on_upstream_error=False)`` the SDK returns an upstream 4xx/5xx (a 403
challenge page included) instead of raising, with ``upstream_status_code`` and the page in
``content``.

Example:
    >>> from scrapfly import ScrapeConfig, ScrapflyClient
    >>> from rareindex_connectors.testing import serve_asgi
    >>> fake = create_fake_scrapfly_app(
    ...     faults=[ScrapflyFault("ERR::ASP::SHIELD_PROTECTION_FAILED", match=r"/guarded/")]
    ... )
    >>> with serve_asgi(fake) as base_url:                               # doctest: +SKIP
    ...     client = ScrapflyClient(key="scp-test", host=base_url)
    ...     response = client.scrape(ScrapeConfig(f"{fake_web_url}/card/1", render_js=True))
    >>> response.cost, fake.credits_used                                  # doctest: +SKIP
    (6, 6)
"""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import structlog
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .servers import (
    RENDERER_HEADER,
    CreditLedger,
    Delay,
    RateLimit,
    RuleBook,
    Throttle,
    UpstreamPage,
    digest_page,
    fetch_upstream,
    is_valid_target,
    linger,
)

__all__ = ["FakeScrapfly", "ScrapflyCall", "ScrapflyFault", "create_fake_scrapfly_app"]

log = structlog.get_logger(__name__)

_DOC = "https://scrapfly.io/docs/scrape-api/error/"
_DEFAULT_TIMEOUT_MS = 150_000
_POOL_COST = {"public_datacenter_pool": 1, "public_residential_pool": 25}
_RENDER_JS_COST = 5
_FORMATS = frozenset({"raw", "text", "markdown", "clean_html"})
_THROTTLE_CODES = {
    "concurrency": "ERR::THROTTLE::MAX_CONCURRENT_REQUEST_EXCEEDED",
    "rate": "ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED",
}


@dataclass(frozen=True, slots=True)
class _Code:
    http_code: int
    retryable: bool
    description: str


# The codes the fake answers with or accepts in a fault, as Scrapfly defines them.
ERROR_CODES: Mapping[str, _Code] = {
    "ERR::ACCOUNT::PAYMENT_REQUIRED": _Code(402, True, "Payment required to continue service"),
    "ERR::ACCOUNT::SUSPENDED": _Code(429, True, "Account Suspended"),
    "ERR::API::INTERNAL_ERROR": _Code(500, False, "API Internal Error"),
    "ERR::ASP::CAPTCHA_TIMEOUT": _Code(
        422, True, "The budgeted time to solve the captcha is reached"
    ),
    "ERR::ASP::SHIELD_ERROR": _Code(422, False, "The ASP encounter an unexpected problem"),
    "ERR::ASP::SHIELD_EXPIRED": _Code(422, True, "The ASP shield previously set is expired"),
    "ERR::ASP::SHIELD_PROTECTION_FAILED": _Code(
        422, True, "The ASP shield failed to solve the challenge of the anti-scraping protection"
    ),
    "ERR::ASP::TIMEOUT": _Code(422, True, "The ASP made too much time to solve or respond"),
    "ERR::ASP::UNABLE_TO_SOLVE_CAPTCHA": _Code(422, True, "Unable to solve the captcha"),
    "ERR::PROXY::POOL_NOT_FOUND": _Code(400, False, "Provided Proxy Pool Name do not exists"),
    "ERR::PROXY::RESOURCES_SATURATION": _Code(422, True, "Proxy are saturated"),
    "ERR::PROXY::TIMEOUT": _Code(422, True, "Proxy connection or website was too slow and timeout"),
    "ERR::PROXY::UNAVAILABLE": _Code(422, True, "Proxy is unavailable"),
    "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE": _Code(
        200, False, "The website you target respond with an unexpected status code (>400)"
    ),
    "ERR::SCRAPE::CONFIG_ERROR": _Code(400, False, "Scrape Configuration Error"),
    "ERR::SCRAPE::COST_BUDGET_LIMIT": _Code(422, True, "Cost budget has been reached"),
    "ERR::SCRAPE::DRIVER_TIMEOUT": _Code(422, True, "Driver timeout - No response received"),
    "ERR::SCRAPE::NETWORK_ERROR": _Code(422, True, "Network error between Scrapfly and remote"),
    "ERR::SCRAPE::OPERATION_TIMEOUT": _Code(504, True, "Internal operation took too much time"),
    "ERR::SCRAPE::QUOTA_LIMIT_REACHED": _Code(429, False, "You reach your scrape quota plan"),
    "ERR::THROTTLE::MAX_API_CREDIT_BUDGET_EXCEEDED": _Code(429, True, "API Credit Budget reached"),
    "ERR::THROTTLE::MAX_CONCURRENT_REQUEST_EXCEEDED": _Code(
        429, True, "Too many concurrent access to the upstream"
    ),
    "ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED": _Code(
        429, True, "Too much request during the 1m window"
    ),
}


@dataclass(frozen=True, slots=True)
class ScrapflyFault:
    """Answer a scrape with a Scrapfly error instead of doing it (nothing is charged).

    ``code`` is an ``ERR::<RESOURCE>::<NAME>`` code; the HTTP status and retryable flag come from
    :data:`ERROR_CODES` unless ``http_code`` is given (required for codes it does not list).
    ``match`` is a regex searched in the target URL (``None``: all); ``times`` limits the fault
    to the next N matching requests.
    """

    code: str
    match: str | None = None
    times: int | None = None
    http_code: int | None = None
    message: str | None = None

    def __post_init__(self) -> None:
        if self.http_code is None and self.code not in ERROR_CODES:
            known = ", ".join(sorted(ERROR_CODES))
            raise ValueError(f"unknown Scrapfly code {self.code!r}: pass http_code, or use {known}")


@dataclass(frozen=True, slots=True)
class ScrapflyCall:
    """One request the fake received, as answered (the API key itself is not kept)."""

    method: str
    target: str | None
    params: Mapping[str, str]
    key_valid: bool
    status: int
    cost: int = 0
    upstream_status: int | None = None
    error_code: str | None = None


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: int
    payload: dict[str, Any]
    cost: int = 0
    upstream_status: int | None = None
    error_code: str | None = None
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class _Scrape:
    """A validated ``/scrape`` request."""

    url: str
    method: str
    body: bytes | None
    headers: Mapping[str, str]
    format: str
    timeout_ms: int
    cost: int
    cost_details: tuple[Mapping[str, Any], ...]


class _ConfigError(Exception):
    pass


def _flag(params: Mapping[str, str], name: str) -> bool:
    return params.get(name, "false").lower() == "true"


def _pool(params: Mapping[str, str]) -> str:
    return params.get("proxy_pool", "public_datacenter_pool")


def _parse(params: Mapping[str, str], method: str, body: bytes) -> _Scrape:
    url = params.get("url")
    if not is_valid_target(url):
        raise _ConfigError("Invalid url parameter: an absolute http(s) URL is required")
    fmt = params.get("format", "raw").split(":", 1)[0]
    if fmt not in _FORMATS:
        raise _ConfigError(f"format {fmt!r} is not supported by the fake: {sorted(_FORMATS)}")
    timeout = params.get("timeout", str(_DEFAULT_TIMEOUT_MS))
    if not timeout.isdigit():
        raise _ConfigError("timeout must be an integer number of milliseconds")
    if _pool(params) not in _POOL_COST:
        raise _ConfigError(f"unknown proxy_pool {_pool(params)!r}: {sorted(_POOL_COST)}")
    details: list[dict[str, Any]] = [
        {"amount": _POOL_COST[_pool(params)], "code": _pool(params).upper(), "description": "Proxy"}
    ]
    if _flag(params, "render_js"):
        details.append(
            {"amount": _RENDER_JS_COST, "code": "BROWSER", "description": "JavaScript rendering"}
        )
    return _Scrape(
        url=url,
        method=method,
        body=body or None,
        headers=_header_params(params),
        format=fmt,
        timeout_ms=int(timeout),
        cost=sum(detail["amount"] for detail in details),
        cost_details=tuple(details),
    )


def _header_params(params: Mapping[str, str]) -> dict[str, str]:
    """``headers[Name]=value`` query parameters, the headers to send to the target."""
    return {key[8:-1]: value for key, value in params.items() if key.startswith("headers[")}


def _config(params: Mapping[str, str], method: str) -> dict[str, Any]:
    """``config``: the request as Scrapfly understood it (``headers`` must be present)."""
    return {
        "url": params.get("url"),
        "method": method,
        "body": None,
        "headers": _header_params(params),
        "asp": _flag(params, "asp"),
        "render_js": _flag(params, "render_js"),
        "country": params.get("country"),
        "proxy_pool": _pool(params),
        "format": params.get("format", "raw"),
        "cache": _flag(params, "cache"),
        "cache_ttl": params.get("cache_ttl"),
        "cache_clear": _flag(params, "cache_clear"),
        "retry": params.get("retry", "true").lower() != "false",
        "timeout": int(params["timeout"]) if params.get("timeout", "").isdigit() else None,
        "session": params.get("session"),
        "cost_budget": params.get("cost_budget"),
        "rendering_wait": params.get("rendering_wait"),
        "wait_for_selector": params.get("wait_for_selector"),
        "lang": params.get("lang"),
        "tags": [tag for tag in params.get("tags", "").split(",") if tag],
        "correlation_id": params.get("correlation_id"),
        "project": "default",
        "env": "LIVE",
        "debug": _flag(params, "debug"),
        "webhook_name": params.get("webhook_name"),
    }


def _context(
    params: Mapping[str, str], cost: int, details: Iterable[Mapping[str, Any]]
) -> dict[str, Any]:
    return {
        "asp": _flag(params, "asp"),
        "cache": {"state": "MISS" if _flag(params, "cache") else "BYPASS", "entry": None},
        "cost": {"details": list(details), "total": cost},
        "created_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "env": "LIVE",
        "project": "default",
        "proxy": {"country": params.get("country") or "us", "pool": _pool(params)},
        "redirects": [],
        "retry": 0,
        "session": None,
        "url": params.get("url"),
    }


def _result(
    scrape_id: str,
    target: str | None,
    duration_s: float = 0.0,
    page: UpstreamPage | None = None,
    content: str = "",
    content_format: str = "text",
    error: Mapping[str, Any] | None = None,
    request_headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``result``: every field the SDK (and its scrapy integration) reads."""
    return {
        "content": content,
        "content_encoding": "utf-8",
        "content_type": page.content_type if page else None,
        "format": content_format,
        "status": "DONE",
        "success": error is None,
        "reason": page.reason if page else None,
        "status_code": page.status if page else None,
        "url": page.url if page else target,
        "response_headers": _headers_dict(page.headers) if page else {},
        "request_headers": dict(request_headers or {}),
        "cookies": [],
        "duration": round(duration_s, 3),
        "log_url": f"https://scrapfly.io/dashboard/monitoring/log/{scrape_id}",
        "error": dict(error) if error is not None else None,
        "screenshots": {},
        "dns": None,
        "ssl": None,
        "iframes": [],
        "browser_data": {},
        "extracted_data": None,
    }


def _headers_dict(headers: Iterable[tuple[str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in headers:
        key = name.lower()
        if key == "set-cookie":  # the SDK iterates this one as a list
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    return out


def _error(code: str, message: str | None = None, http_code: int | None = None) -> dict[str, Any]:
    spec = ERROR_CODES.get(code, _Code(http_code or 500, False, code))
    return {
        "code": code,
        "http_code": http_code or spec.http_code,
        "description": spec.description,
        "error_id": str(uuid.uuid4()),
        "message": message or spec.description,
        "retryable": spec.retryable,
        "doc_url": _DOC + code,
        "links": {"Related Error Doc": _DOC + code},
    }


def _content(page: UpstreamPage, fmt: str) -> tuple[str, str]:
    """``(content, result.format)``: text formats converted, binary bodies as base64."""
    if fmt != "raw":
        digest = digest_page(page, only_main_content=False)
        return {"text": digest.text, "markdown": digest.markdown}.get(fmt, digest.html), "text"
    try:
        return page.body.decode("utf-8"), "text"
    except UnicodeDecodeError:
        if page.is_html or page.content_type.startswith("text/"):
            return page.text, "text"
        return base64.b64encode(page.body).decode("ascii"), "binary"


class FakeScrapfly:
    """The fake Scrapfly API: an ASGI app plus what tests assert on.

    Build it with :func:`create_fake_scrapfly_app`; serve it with ``serve_asgi``. Thread-safe to
    inspect and configure from the test thread while the server thread answers requests.
    """

    def __init__(
        self,
        *,
        api_key: str,
        credits: int | None,
        faults: Iterable[ScrapflyFault],
        delays: Iterable[Delay],
        max_concurrency: int | None,
        rate_limit: RateLimit | None,
        upstream_transport: httpx.AsyncBaseTransport | None,
    ) -> None:
        self._api_key = api_key
        self._ledger = CreditLedger(credits)
        self._faults: RuleBook[ScrapflyFault] = RuleBook(faults)
        self._delays: RuleBook[Delay] = RuleBook(delays)
        self._throttle = Throttle(max_concurrency, rate_limit)
        self._transport = upstream_transport
        self._calls: list[ScrapflyCall] = []
        self._lock = threading.Lock()
        methods = ["GET", "POST", "PUT", "PATCH"]
        self._app = Starlette(routes=[Route("/scrape", self._scrape, methods=methods)])

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    @property
    def calls(self) -> list[ScrapflyCall]:
        """Every request received so far, in the order they were answered."""
        with self._lock:
            return list(self._calls)

    @property
    def credits_used(self) -> int:
        return self._ledger.used

    @property
    def credits_remaining(self) -> int | None:
        return self._ledger.remaining

    @property
    def in_flight(self) -> int:
        return self._throttle.in_flight

    def add_fault(self, fault: ScrapflyFault) -> None:
        self._faults.add(fault)

    def add_delay(self, delay: Delay) -> None:
        self._delays.add(delay)

    # -- request pipeline: key, throttle, fault, budget, fetch, record, delay -----------------

    async def _scrape(self, request: Request) -> Response:
        params = {k: v for k, v in request.query_params.items() if k != "key"}
        key_valid = request.query_params.get("key") == self._api_key
        if not key_valid:
            outcome = _api_error(401, "Unauthorized", "Invalid API key")
        elif (refusal := self._throttle.admit()) is not None:
            code = _THROTTLE_CODES[refusal.reason]
            outcome = self._rejection(params, request.method, code, refusal.retry_after)
        else:
            try:
                outcome = await self._work(request, params)
                self._record(request.method, params, key_valid, outcome)
                if (delay := self._delays.take(params.get("url", ""))) is not None:
                    await linger(request, delay.seconds)
            finally:
                self._throttle.release()
            return self._response(outcome)
        self._record(request.method, params, key_valid, outcome)
        return self._response(outcome)

    async def _work(self, request: Request, params: Mapping[str, str]) -> _Outcome:
        target = params.get("url", "")
        if (fault := self._faults.take(target)) is not None:
            return self._rejection(
                params, request.method, fault.code, message=fault.message, http_code=fault.http_code
            )
        try:
            scrape = _parse(params, request.method, await request.body())
        except _ConfigError as exc:
            return _api_error(400, "Bad Request", str(exc), code="ERR::SCRAPE::CONFIG_ERROR")
        if scrape.cost > int(params.get("cost_budget", scrape.cost)):
            return self._rejection(params, request.method, "ERR::SCRAPE::COST_BUDGET_LIMIT")
        if not self._ledger.reserve(scrape.cost):
            return self._rejection(params, request.method, "ERR::ACCOUNT::PAYMENT_REQUIRED")
        return await self._fetch(params, scrape, request.headers.get("content-type"))

    async def _fetch(
        self, params: Mapping[str, str], scrape: _Scrape, content_type: str | None
    ) -> _Outcome:
        headers = dict(scrape.headers)
        if scrape.body is not None and content_type:
            headers.setdefault("content-type", content_type)
        if _flag(params, "render_js"):
            headers[RENDERER_HEADER] = "scrapfly"
        try:
            page = await fetch_upstream(
                scrape.url,
                transport=self._transport,
                timeout_s=scrape.timeout_ms / 1000,
                method=scrape.method,
                headers=headers,
                content=scrape.body,
            )
        except httpx.HTTPError as exc:
            self._ledger.refund(scrape.cost)
            code = (
                "ERR::PROXY::TIMEOUT"
                if isinstance(exc, httpx.TimeoutException)
                else ("ERR::SCRAPE::NETWORK_ERROR")
            )
            return self._rejection(params, scrape.method, code)
        return self._scraped(params, scrape, page, headers)

    def _scraped(
        self,
        params: Mapping[str, str],
        scrape: _Scrape,
        page: UpstreamPage,
        request_headers: Mapping[str, str],
    ) -> _Outcome:
        scrape_id = str(uuid.uuid4())
        content, content_format = _content(page, scrape.format)
        error_code = "ERR::SCRAPE::BAD_UPSTREAM_RESPONSE" if page.status >= 400 else None
        error = _error(error_code, f"Target responded with {page.status}") if error_code else None
        payload = {
            "config": _config(params, scrape.method),
            "context": _context(params, scrape.cost, scrape.cost_details),
            "result": _result(
                scrape_id,
                scrape.url,
                page.elapsed_ms / 1000,
                page,
                content,
                content_format,
                error,
                request_headers,
            ),
            "uuid": scrape_id,
        }
        return _Outcome(200, payload, scrape.cost, page.status, error_code)

    def _rejection(
        self,
        params: Mapping[str, str],
        method: str,
        code: str,
        retry_after: int | None = None,
        *,
        message: str | None = None,
        http_code: int | None = None,
    ) -> _Outcome:
        """A failed scrape in the full envelope (``result.error``), not billed."""
        scrape_id = str(uuid.uuid4())
        error = _error(code, message, http_code)
        payload = {
            "config": _config(params, method),
            "context": _context(params, 0, ()),
            "result": _result(scrape_id, params.get("url"), error=error),
            "uuid": scrape_id,
        }
        status = int(error["http_code"])
        if status == 429 and retry_after is None:
            retry_after = 1
        return _Outcome(status, payload, error_code=code, retry_after=retry_after)

    def _record(
        self, method: str, params: Mapping[str, str], key_valid: bool, outcome: _Outcome
    ) -> None:
        call = ScrapflyCall(
            method,
            params.get("url"),
            params,
            key_valid,
            outcome.status,
            outcome.cost,
            outcome.upstream_status,
            outcome.error_code,
        )
        with self._lock:
            self._calls.append(call)
        log.debug(
            "fake_scrapfly.answered",
            url=call.target,
            status=call.status,
            cost=call.cost,
            error_code=call.error_code,
        )

    def _response(self, outcome: _Outcome) -> Response:
        headers = {"X-Scrapfly-Api-Cost": str(outcome.cost)}
        if (remaining := self._ledger.remaining) is not None:
            headers["X-Scrapfly-Remaining-Api-Credit"] = str(remaining)
        if outcome.upstream_status is not None:
            headers["X-Scrapfly-Upstream-Http-Code"] = str(outcome.upstream_status)
        if outcome.error_code is not None and "result" in outcome.payload:
            headers.update(_reject_headers(outcome.payload["result"]["error"]))
        if outcome.retry_after is not None:
            headers["Retry-After"] = str(outcome.retry_after)
        return JSONResponse(outcome.payload, status_code=outcome.status, headers=headers)


def _reject_headers(error: Mapping[str, Any]) -> dict[str, str]:
    return {
        "X-Scrapfly-Reject-Code": str(error["code"]),
        "X-Scrapfly-Reject-Description": str(error["description"]),
        "X-Scrapfly-Reject-Doc": str(error["doc_url"]),
        "X-Scrapfly-Reject-Http-Code": str(error["http_code"]),
        "X-Scrapfly-Reject-Retryable": "true" if error["retryable"] else "false",
        "X-Scrapfly-Reject-ID": str(error["error_id"]),
    }


def _api_error(status: int, reason: str, message: str, code: str | None = None) -> _Outcome:
    """The generic API error (no envelope), as Scrapfly answers a bad key or a bad request."""
    payload: dict[str, Any] = {
        "status": "error",
        "http_code": status,
        "reason": reason,
        "error_id": str(uuid.uuid4()),
        "message": message,
    }
    if code is not None:
        payload |= {"code": code, "retryable": False, "links": {"Related Error Doc": _DOC + code}}
    return _Outcome(status, payload, error_code=code)


def create_fake_scrapfly_app(
    *,
    api_key: str = "scp-test",
    credits: int | None = 1_000,
    faults: Iterable[ScrapflyFault] = (),
    delays: Iterable[Delay] = (),
    max_concurrency: int | None = None,
    rate_limit: RateLimit | None = None,
    upstream_transport: httpx.AsyncBaseTransport | None = None,
) -> FakeScrapfly:
    """Build a fake Scrapfly API.

    Args:
        api_key: the ``key`` query parameter it accepts; any other answers 401.
        credits: starting balance; ``None`` is unlimited. A scrape it cannot afford gets 402
            ``ERR::ACCOUNT::PAYMENT_REQUIRED``.
        faults: forced ``ERR::*`` answers, by target pattern and/or for the next N requests.
        delays: late answers, to make a client time out after the work was charged.
        max_concurrency: in-flight scrapes above this get 429
            ``ERR::THROTTLE::MAX_CONCURRENT_REQUEST_EXCEEDED``.
        rate_limit: scrapes above this rate get 429 ``ERR::THROTTLE::MAX_REQUEST_RATE_EXCEEDED``
            with ``Retry-After``.
        upstream_transport: how targets are fetched; default is the real network (loopback),
            or e.g. ``httpx.ASGITransport(app=fake_web)`` to serve any host in-process.

    Example:
        >>> fake = create_fake_scrapfly_app(credits=30, max_concurrency=1)
        >>> fake.credits_remaining
        30
    """
    return FakeScrapfly(
        api_key=api_key,
        credits=credits,
        faults=faults,
        delays=delays,
        max_concurrency=max_concurrency,
        rate_limit=rate_limit,
        upstream_transport=upstream_transport,
    )
