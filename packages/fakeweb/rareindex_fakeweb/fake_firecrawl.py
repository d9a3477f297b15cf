"""A local fake of the Firecrawl v2 API (``/v2/scrape``, ``/v2/map``, ``/v2/search``).

It speaks the real wire format, so the real ``firecrawl-py`` SDK works against it. Each scrape
fetches the target URL itself (with httpx, from the local fake web) and wraps what came back, so
a 403 challenge page is still ``success: true`` with ``metadata.statusCode: 403``, and is charged,
as on the real service. It bills credits (scrape 1, +4 for the ``json`` format, +4 for
``proxy: "enhanced"``; map 1; search 2 per 10 results plus scraped pages), keeps a cache that
honours ``maxAge`` (the real default is two days, so a second scrape of a URL is a cache hit
unless ``maxAge`` is 0), answers errors in the real shape ``{success: false, error, code?}``
(401 bad key, 402 out of credits, 429 + ``Retry-After``, 408 upstream timeout, 400 invalid URL,
500 unreachable upstream), and records every request it received.

Example:
    >>> from firecrawl import Firecrawl
    >>> from rareindex_connectors.testing import serve_asgi
    >>> fake = create_fake_firecrawl_app(credits=10)
    >>> with serve_asgi(fake) as base_url:                                # doctest: +SKIP
    ...     client = Firecrawl(api_key="fc-test", api_url=base_url, max_retries=0)
    ...     doc = client.scrape(f"{fake_web_url}/card/1", formats=["markdown"], max_age=0)
    >>> doc.metadata.status_code, fake.credits_used, len(fake.calls)     # doctest: +SKIP
    (200, 1, 1)

Faults, delays, limits, the ledger, the upstream fetch and the HTML digest come from
:mod:`.servers`, shared with ``fake_scrapfly``.
"""

from __future__ import annotations

import json
import math
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

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
    PageDigest,
    RateLimit,
    RuleBook,
    Throttle,
    UpstreamPage,
    digest_page,
    fetch_upstream,
    is_valid_target,
    linger,
)

__all__ = [
    "FakeFirecrawl",
    "FirecrawlCall",
    "FirecrawlFault",
    "JsonExtractor",
    "create_fake_firecrawl_app",
    "default_json_extractor",
]

log = structlog.get_logger(__name__)


JsonExtractor = Callable[[UpstreamPage, Mapping[str, Any]], Any]
"""Produces the ``json`` format from the fetched page and the format object (prompt, schema)."""

_DEFAULT_TIMEOUT_MS = 30_000
_DEFAULT_MAX_AGE_MS = 172_800_000
_TEXT_FORMATS = frozenset({"markdown", "html", "rawHtml", "links", "images", "summary"})
_KNOWN_FORMATS = _TEXT_FORMATS | {"json", "screenshot", "changeTracking", "branding"}
_ERROR_MESSAGES = {
    400: "Bad Request",
    401: "Unauthorized: Invalid token",
    402: "Payment Required: Insufficient credits to perform this request. For more credits, "
    "you can upgrade your plan at https://firecrawl.dev/pricing.",
    403: "This website is no longer supported.",
    408: "Request timed out",
    429: "Rate limit exceeded. Please retry after the time in the Retry-After header.",
    500: "An unexpected error occurred.",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass(frozen=True, slots=True)
class FirecrawlFault:
    """Answer a request with an error instead of doing the work (nothing is charged).

    ``match`` is a regex searched in the request's target (the URL; the query for search);
    ``None`` matches every request. ``times`` limits the fault to the next N matching requests.
    """

    status: int
    match: str | None = None
    times: int | None = None
    error: str | None = None
    code: str | None = None
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class FirecrawlCall:
    """One request the fake received, as answered."""

    endpoint: str
    target: str | None
    body: Mapping[str, Any]
    authorized: bool
    status: int
    credits: int = 0
    upstream_status: int | None = None
    cache_state: Literal["hit", "miss"] | None = None


@dataclass(frozen=True, slots=True)
class _Outcome:
    status: int
    payload: dict[str, Any]
    credits: int = 0
    upstream_status: int | None = None
    cache_state: Literal["hit", "miss"] | None = None
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class _ScrapeRequest:
    url: str
    formats: tuple[str, ...]
    json_spec: Mapping[str, Any] | None
    only_main_content: bool
    timeout_ms: int
    max_age_ms: int
    store_in_cache: bool
    enhanced: bool
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def credits(self) -> int:
        return 1 + (4 if self.json_spec is not None else 0) + (4 if self.enhanced else 0)


class _BadRequest(Exception):
    pass


def _fail(
    status: int,
    error: str | None = None,
    code: str | None = None,
    *,
    retry_after: int | None = None,
    **extra: Any,
) -> _Outcome:
    payload: dict[str, Any] = {"success": False, "error": error or _ERROR_MESSAGES.get(status, "")}
    if code:
        payload["code"] = code
    return _Outcome(status, payload | extra, retry_after=retry_after)


def _response(outcome: _Outcome) -> Response:
    headers = {"Retry-After": str(outcome.retry_after)} if outcome.retry_after else None
    return JSONResponse(outcome.payload, status_code=outcome.status, headers=headers)


def _parse_scrape(body: Mapping[str, Any], url: object) -> _ScrapeRequest:
    if not is_valid_target(url):
        raise _BadRequest("Invalid URL")
    names: list[str] = []
    json_spec: Mapping[str, Any] | None = None
    for item in body.get("formats") or ["markdown"]:
        name = item.get("type") if isinstance(item, Mapping) else item
        if name not in _KNOWN_FORMATS or (name == "json" and not isinstance(item, Mapping)):
            raise _BadRequest(f"Invalid format: {name!r}")
        if name == "json":
            json_spec = item
        names.append(str(name))
    timeout_ms = body.get("timeout", _DEFAULT_TIMEOUT_MS)
    if not isinstance(timeout_ms, int) or not 1000 <= timeout_ms <= 300_000:
        raise _BadRequest("timeout must be an integer between 1000 and 300000 ms")
    return _ScrapeRequest(
        url=url,
        formats=tuple(names),
        json_spec=json_spec,
        only_main_content=body.get("onlyMainContent", True) is not False,
        timeout_ms=timeout_ms,
        max_age_ms=int(body.get("maxAge", _DEFAULT_MAX_AGE_MS)),
        store_in_cache=body.get("storeInCache", True) is not False,
        enhanced=body.get("proxy") == "enhanced",
        headers=dict(body.get("headers") or {}),
    )


def default_json_extractor(page: UpstreamPage, spec: Mapping[str, Any]) -> Any:
    """No LLM here: a JSON page yields its parsed body, anything else an empty object."""
    try:
        return json.loads(page.text)
    except ValueError:
        return {}


class FakeFirecrawl:
    """The fake Firecrawl v2 API: an ASGI app plus what tests assert on.

    Build it with :func:`create_fake_firecrawl_app`; serve it with ``serve_asgi``. Thread-safe to
    inspect and configure from the test thread while the server thread answers requests.
    """

    def __init__(
        self,
        *,
        api_key: str | None,
        credits: int | None,
        faults: Iterable[FirecrawlFault],
        delays: Iterable[Delay],
        max_concurrency: int | None,
        rate_limit: RateLimit | None,
        upstream_transport: httpx.AsyncBaseTransport | None,
        json_extractor: JsonExtractor,
        search_index: Sequence[Mapping[str, str]],
        cache: bool,
    ) -> None:
        self._api_key = api_key
        self._ledger = CreditLedger(credits)
        self._faults: RuleBook[FirecrawlFault] = RuleBook(faults)
        self._delays: RuleBook[Delay] = RuleBook(delays)
        self._throttle = Throttle(max_concurrency, rate_limit)
        self._transport = upstream_transport
        self._extract_json = json_extractor
        self._search_index = tuple(search_index)
        self._cache_enabled = cache
        self._cache: dict[str, UpstreamPage] = {}
        self._calls: list[FirecrawlCall] = []
        self._lock = threading.Lock()
        self._app = Starlette(
            routes=[
                Route("/v2/scrape", self._scrape, methods=["POST"]),
                Route("/v2/map", self._map, methods=["POST"]),
                Route("/v2/search", self._search, methods=["POST"]),
            ]
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    @property
    def calls(self) -> list[FirecrawlCall]:
        """Every request received so far, in arrival order of their answers."""
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

    def add_fault(self, fault: FirecrawlFault) -> None:
        self._faults.add(fault)

    def add_delay(self, delay: Delay) -> None:
        self._delays.add(delay)

    # -- request pipeline: auth, throttle, fault, work, record, delay ----------------------

    async def _scrape(self, request: Request) -> Response:
        return await self._handle(request, "/v2/scrape", "url", self._do_scrape)

    async def _map(self, request: Request) -> Response:
        return await self._handle(request, "/v2/map", "url", self._do_map)

    async def _search(self, request: Request) -> Response:
        return await self._handle(request, "/v2/search", "query", self._do_search)

    async def _handle(
        self,
        request: Request,
        endpoint: str,
        target_key: str,
        work: Callable[[Mapping[str, Any]], Awaitable[_Outcome]],
    ) -> Response:
        body = await _json_body(request)
        target = body.get(target_key) if isinstance(body.get(target_key), str) else None
        authorized = self._authorized(request)
        if not authorized:
            outcome = _fail(401)
        elif (refusal := self._throttle.admit()) is not None:
            outcome = _fail(429, retry_after=refusal.retry_after)
        else:
            try:
                outcome = await self._work(body, target, work)
                self._record(endpoint, target, body, authorized, outcome)
                if (delay := self._delays.take(target or "")) is not None:
                    await linger(request, delay.seconds)
            finally:
                self._throttle.release()
            return _response(outcome)
        self._record(endpoint, target, body, authorized, outcome)
        return _response(outcome)

    async def _work(
        self,
        body: Mapping[str, Any],
        target: str | None,
        work: Callable[[Mapping[str, Any]], Awaitable[_Outcome]],
    ) -> _Outcome:
        if (fault := self._faults.take(target or "")) is not None:
            retry_after = fault.retry_after or (1 if fault.status == 429 else None)
            return _fail(fault.status, fault.error, fault.code, retry_after=retry_after)
        try:
            return await work(body)
        except _BadRequest as exc:
            return _fail(400, "Bad Request", "BAD_REQUEST", details=[{"message": str(exc)}])

    def _authorized(self, request: Request) -> bool:
        if self._api_key is None:
            return True
        return request.headers.get("authorization") == f"Bearer {self._api_key}"

    def _record(
        self,
        endpoint: str,
        target: str | None,
        body: Mapping[str, Any],
        authorized: bool,
        outcome: _Outcome,
    ) -> None:
        call = FirecrawlCall(
            endpoint,
            target,
            body,
            authorized,
            outcome.status,
            outcome.credits,
            outcome.upstream_status,
            outcome.cache_state,
        )
        with self._lock:
            self._calls.append(call)
        log.debug(
            "fake_firecrawl.answered",
            endpoint=endpoint,
            url=target,
            status=outcome.status,
            credits=outcome.credits,
        )

    # -- endpoints --------------------------------------------------------------------------

    async def _do_scrape(self, body: Mapping[str, Any]) -> _Outcome:
        scrape = _parse_scrape(body, body.get("url"))
        if not self._ledger.reserve(scrape.credits):
            return _fail(402)
        outcome = await self._scrape_document(scrape)
        if outcome.status != 200:
            self._ledger.refund(scrape.credits)
        return outcome

    async def _scrape_document(self, scrape: _ScrapeRequest) -> _Outcome:
        """Fetch (or reuse from cache) and wrap one page; credits are already reserved."""
        page = self._cached(scrape)
        cache_state: Literal["hit", "miss"] = "hit" if page is not None else "miss"
        if page is None:
            try:
                page = await fetch_upstream(
                    scrape.url,
                    transport=self._transport,
                    timeout_s=scrape.timeout_ms / 1000,
                    headers={**scrape.headers, RENDERER_HEADER: "firecrawl"},  # it renders
                )
            except httpx.TimeoutException:
                return _fail(408, "Scrape timed out", "SCRAPE_TIMEOUT")
            except httpx.TransportError as exc:
                return _fail(
                    500,
                    f"All scraping engines failed! -- {type(exc).__name__}",
                    "SCRAPE_ALL_ENGINES_FAILED",
                )
            self._store(scrape, page)
        document = self._document(scrape, page, cache_state)
        return _Outcome(
            200, {"success": True, "data": document}, scrape.credits, page.status, cache_state
        )

    def _cached(self, scrape: _ScrapeRequest) -> UpstreamPage | None:
        if not self._cache_enabled or scrape.max_age_ms <= 0:
            return None
        with self._lock:
            page = self._cache.get(scrape.url)
        if page is None:
            return None
        age_ms = (datetime.now(UTC) - page.fetched_at).total_seconds() * 1000
        return page if age_ms <= scrape.max_age_ms else None

    def _store(self, scrape: _ScrapeRequest, page: UpstreamPage) -> None:
        if self._cache_enabled and scrape.store_in_cache and page.status < 400:
            with self._lock:
                self._cache[scrape.url] = page

    def _document(
        self, scrape: _ScrapeRequest, page: UpstreamPage, cache_state: str
    ) -> dict[str, Any]:
        digest = digest_page(page, only_main_content=scrape.only_main_content)
        produced: dict[str, Any] = {
            "markdown": digest.markdown,
            "html": digest.html,
            "rawHtml": page.text,
            "links": list(digest.links),
            "images": list(digest.images),
            "summary": digest.text[:500],
        }
        document = {name: produced[name] for name in scrape.formats if name in produced}
        if scrape.json_spec is not None:
            document["json"] = self._extract_json(page, scrape.json_spec)
        unsupported = [name for name in scrape.formats if name not in produced and name != "json"]
        if unsupported:
            document["warning"] = f"The fake does not produce: {', '.join(unsupported)}"
        document["metadata"] = _metadata(scrape, page, digest, cache_state)
        return document

    async def _do_map(self, body: Mapping[str, Any]) -> _Outcome:
        url = body.get("url")
        if not is_valid_target(url):
            raise _BadRequest("Invalid URL")
        if not self._ledger.reserve(1):
            return _fail(402)
        try:
            page = await fetch_upstream(
                url, transport=self._transport, timeout_s=int(body.get("timeout", 60_000)) / 1000
            )
        except httpx.HTTPError:
            self._ledger.refund(1)
            return _fail(408, "Map timed out", "MAP_TIMEOUT")
        links = _map_links(url, page, body)
        return _Outcome(200, {"success": True, "links": links}, 1, page.status)

    async def _do_search(self, body: Mapping[str, Any]) -> _Outcome:
        query = body.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > 500:
            raise _BadRequest("query must be a non-empty string of at most 500 characters")
        hits = _search(self._search_index, query, int(body.get("limit", 10)))
        credits = 2 * math.ceil(max(len(hits), 1) / 10)
        options = body.get("scrapeOptions")
        scrapes = (
            [_parse_scrape(options, hit["url"]) for hit in hits]
            if isinstance(options, Mapping) and options.get("formats")
            else []
        )
        credits += sum(scrape.credits for scrape in scrapes)
        if not self._ledger.reserve(credits):
            return _fail(402)
        web: list[dict[str, Any]] = [dict(hit, position=rank) for rank, hit in enumerate(hits, 1)]
        for result, scrape in zip(web, scrapes, strict=False):
            outcome = await self._scrape_document(scrape)
            if outcome.status == 200:
                result.update(outcome.payload["data"])
            else:  # a result that could not be scraped is listed, not charged
                self._ledger.refund(scrape.credits)
                credits -= scrape.credits
        payload = {
            "success": True,
            "data": {"web": web},
            "creditsUsed": credits,
            "id": str(uuid.uuid4()),
        }
        return _Outcome(200, payload, credits)


def _metadata(
    scrape: _ScrapeRequest, page: UpstreamPage, digest: PageDigest, cache_state: str
) -> dict[str, Any]:
    metadata: dict[str, Any] = dict(digest.metadata)
    metadata.update(
        sourceURL=scrape.url,
        url=page.url,
        statusCode=page.status,
        contentType=page.content_type,
        scrapeId=str(uuid.uuid4()),
        proxyUsed="stealth" if scrape.enhanced else "basic",
        cacheState=cache_state,
        cachedAt=page.fetched_at.isoformat().replace("+00:00", "Z"),
        creditsUsed=scrape.credits,
        concurrencyLimited=False,
    )
    if page.status >= 400:
        metadata["error"] = page.reason
    return metadata


def _map_links(url: str, page: UpstreamPage, body: Mapping[str, Any]) -> list[dict[str, str]]:
    host = urlsplit(url).hostname or ""
    subdomains = body.get("includeSubdomains", True) is not False
    search = str(body.get("search") or "").lower()
    found = [url, *digest_page(page, only_main_content=False).links]
    kept: list[dict[str, str]] = []
    for link in dict.fromkeys(found):
        link_host = urlsplit(link).hostname or ""
        same_site = link_host == host or (subdomains and link_host.endswith("." + host))
        if same_site and search in link.lower():
            kept.append({"url": link})
    return kept[: int(body.get("limit", 5000))]


def _search(index: Sequence[Mapping[str, str]], query: str, limit: int) -> list[dict[str, str]]:
    terms = query.lower().split()
    fields = ("url", "title", "description")
    hits = []
    for entry in index:
        haystack = " ".join(entry.get(key, "") for key in fields).lower()
        if all(term in haystack for term in terms):
            hits.append({key: entry[key] for key in fields if key in entry})
    return hits[:limit]


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def create_fake_firecrawl_app(
    *,
    api_key: str | None = "fc-test",
    credits: int | None = 1_000,
    faults: Iterable[FirecrawlFault] = (),
    delays: Iterable[Delay] = (),
    max_concurrency: int | None = None,
    rate_limit: RateLimit | None = None,
    upstream_transport: httpx.AsyncBaseTransport | None = None,
    json_extractor: JsonExtractor = default_json_extractor,
    search_index: Sequence[Mapping[str, str]] = (),
    cache: bool = True,
) -> FakeFirecrawl:
    """Build a fake Firecrawl v2 API.

    Args:
        api_key: the bearer key it accepts; ``None`` accepts any request (keyless tier).
        credits: starting balance; ``None`` is unlimited. A request it cannot afford gets 402.
        faults: forced errors, by target pattern and/or for the next N requests.
        delays: late answers, to make a client time out after the work was charged.
        max_concurrency: in-flight requests above this get 429 (``Retry-After: 1``).
        rate_limit: requests above this rate get 429 with ``Retry-After`` seconds.
        upstream_transport: how targets are fetched; default is the real network (loopback),
            or e.g. ``httpx.ASGITransport(app=fake_web)`` to serve any host in-process.
        json_extractor: produces the ``json`` format (there is no LLM here).
        search_index: ``{url, title, description}`` entries ``/v2/search`` matches all query
            words against.
        cache: honour ``maxAge`` with a per-instance cache, as the real service does.

    Example:
        >>> fake = create_fake_firecrawl_app(credits=5, faults=[FirecrawlFault(429, times=1)])
        >>> fake.credits_remaining
        5
    """
    return FakeFirecrawl(
        api_key=api_key,
        credits=credits,
        faults=faults,
        delays=delays,
        max_concurrency=max_concurrency,
        rate_limit=rate_limit,
        upstream_transport=upstream_transport,
        json_extractor=json_extractor,
        search_index=search_index,
        cache=cache,
    )
