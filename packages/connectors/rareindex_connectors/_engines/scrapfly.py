"""The ``scrapfly`` engine: Scrapfly's Web Scraping API fetches the target, through scrapfly-sdk.

* The *target* URL passes the SSRF check, then the *target* host's gate, as in ``firecrawl``.
* One ``fetch()`` is at most one billed send. ``ScrapflyClient.scrape`` is wrapped in
  ``backoff.on_exception(NetworkError, max_tries=5)`` and resends after read timeouts, when the
  first send may already be billed; the engine calls the undecorated function
  (``ScrapflyClient.scrape.__wrapped__``) so the router and the worker own retries. Scrapfly's
  server-side ``retry`` (not billed twice) stays on unless the policy sets a ``timeout_ms``,
  which Scrapfly only honours with ``retry=false``.
* ``raise_on_upstream_error=False``: a target's 403 challenge page comes back as a response, to be
  detected (:func:`challenge_from_scrapfly`) and reported as :class:`Blocked`; an
  ``ERR::ASP::*`` rejection is :class:`Blocked` too. The content is the raw page (``format`` raw).
* Credits: ``X-Scrapfly-Api-Cost`` (else ``context.cost.total``), on the result and on every error
  raised after Scrapfly billed; a read timeout counts the documented price of the request.
* Options: ``engine_options.scrapfly`` (:data:`SCRAPFLY_OPTIONS`) and the policy's ``country``.
* The key travels in the query string (``?key=``), so every vendor message is scrubbed of it
  before it goes into an error; scrapfly-sdk and requests exceptions stop here, translated through
  :data:`SCRAPFLY_ERROR_ACTIONS`. A vendor-side failure never counts against the target's breaker.
* The SDK is synchronous (requests); each send runs in a worker thread. A cancelled fetch stops
  waiting at once, but its thread lives until the client's read timeout.

Example:
    >>> engine = ScrapflyEngine(api_key=key, policies=policies, gates=gates)  # doctest: +SKIP
    >>> result = await engine.fetch(FetchRequest("https://shop.example/p/1"))  # doctest: +SKIP
    >>> result.status, result.credits                                        # doctest: +SKIP
    (200, 1.0)
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from typing import Any, Literal

import structlog

from .._challenge import challenge_from_scrapfly
from .._context import FetchResult
from .._gates import Permit
from .._policy import DomainPolicy
from .._raw import EngineName
from ..errors import (
    Blocked,
    BudgetExhausted,
    FetchError,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    ResponseTooLarge,
    TransientFetchError,
)
from .base import FetchRequest
from .outcome import charged, error_for_status, scrub_secret
from .paid import PaidEngine
from .retry import parse_retry_after

__all__ = ["SCRAPFLY_API_URL", "SCRAPFLY_ERROR_ACTIONS", "SCRAPFLY_OPTIONS", "ScrapflyEngine"]

log = structlog.get_logger(__name__)

SCRAPFLY_API_URL = "https://api.scrapfly.io"
SCRAPFLY_OPTIONS = frozenset(
    {
        "asp",
        "cost_budget",
        "proxy_pool",
        "render_js",
        "rendering_wait",
        "timeout_ms",
        "wait_for_selector",
    }
)
"""Keys allowed in a policy's ``engine_options.scrapfly``."""

Action = Literal["blocked", "budget", "rate_limited", "transient", "permanent"]

SCRAPFLY_ERROR_ACTIONS: tuple[tuple[str, Action], ...] = (
    ("ERR::ASP::", "blocked"),  # the shield won: the next engine (or a later retry) may not
    ("ERR::ACCOUNT::", "budget"),  # payment required, suspended
    ("ERR::THROTTLE::MAX_API_CREDIT_BUDGET_EXCEEDED", "budget"),
    ("ERR::SCRAPE::QUOTA_LIMIT_REACHED", "budget"),
    ("ERR::SCRAPE::COST_BUDGET_LIMIT", "budget"),  # this request would cost over cost_budget
    ("ERR::THROTTLE::", "rate_limited"),  # our concurrency or rate on Scrapfly
    ("ERR::SCRAPE::CONFIG_ERROR", "permanent"),
    ("ERR::PROXY::POOL_NOT_FOUND", "permanent"),
    ("ERR::PROXY::", "transient"),
    ("ERR::SCRAPE::", "transient"),  # network error, driver or operation timeout
)
"""Scrapfly error code prefix -> what it means here, first match wins. A code not listed is judged
by the API's HTTP status: 401/403 permanent (our key), 402 budget, 429 rate limited, 408/5xx
transient, other 4xx permanent."""

_STATUS_ACTIONS: dict[int, Action] = {
    401: "permanent",
    402: "budget",
    403: "permanent",
    429: "rate_limited",
}
_ERRORS: dict[Action, type[FetchError]] = {
    "blocked": Blocked,
    "budget": BudgetExhausted,
    "rate_limited": RateLimited,
    "transient": TransientFetchError,
    "permanent": PermanentFetchError,
}
_MANAGED_READ_TIMEOUT_S = 160.0  # Scrapfly: with retry on, let the client wait at least 155 s
_CLIENT_MARGIN_S = 5.0  # Scrapfly: with a custom timeout, add 5 s to the client's read timeout
_MIN_TIMEOUT_MS = 1_000
_POOL_PRICE = {"public_datacenter_pool": 1, "public_residential_pool": 25}
_RENDER_JS_PRICE = 5
_KEY_PARAM = re.compile(r"((?:[?&]|%3F|%26)key(?:=|%3D))[^&\s'\"]+", re.IGNORECASE)


def _scrape_once() -> Any:
    """``ScrapflyClient.scrape`` without its ``backoff`` retry decorator."""
    from scrapfly import ScrapflyClient  # imported on first use, like the client

    scrape = ScrapflyClient.scrape
    return getattr(scrape, "__wrapped__", scrape)


class ScrapflyEngine(PaidEngine):
    """Fetch through Scrapfly. One instance per process; share ``gates`` with the other engines.

    Args:
        api_key: ``RI_SCRAPFLY_API_KEY``; without it the engine is unavailable (the router skips
            it and says why).
        policies: per-host policies: ``country``, ``engine_options.scrapfly``, budgets.
        gates: the *same* gates the other engines use, so a host's budget counts every engine.
        resolver: the SSRF check for target URLs.
        api_url: the API's base URL (a local fake in tests).
        timeout_s: the longest the client waits for Scrapfly's answer; by default 160 s (Scrapfly
            retries for up to 155 s), or a policy ``timeout_ms`` + 5 s.
    """

    name: EngineName = "scrapfly"
    key_setting = "RI_SCRAPFLY_API_KEY"
    option_keys = SCRAPFLY_OPTIONS
    default_api_url = SCRAPFLY_API_URL

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Scrape ``request.url`` through Scrapfly; raises from the SDK's error tree."""
        url, host, policy = self._target(request)
        options = self._options(policy, host, request)
        config = self._config(url, host, options)
        client = self._client(self._read_timeout(options))
        await self.resolver.resolve(url, allow_private=policy.allow_private_network)
        async with self.gates.slot(host, policy, url=url, probe=request.probe) as permit:
            started = time.perf_counter()
            try:
                response = await asyncio.to_thread(_send, client, config)
            except Exception as exc:
                raise self._translate(exc, url, host, permit, _price(options)) from None
            elapsed_ms = int((time.perf_counter() - started) * 1000)
            return self._result(response, url, host, policy, permit, options, elapsed_ms)

    # -- building the request -------------------------------------------------------------

    def _options(self, policy: DomainPolicy, host: str, request: FetchRequest) -> dict[str, Any]:
        extra = self._engine_options(policy, host)
        # session_sticky_proxy=None: its default (True) without a session only makes the SDK log
        # a warning on the root logger for every request.
        options: dict[str, Any] = {"raise_on_upstream_error": False, "session_sticky_proxy": None}
        timeout_ms = extra.pop("timeout_ms", None)
        if timeout_ms is not None:
            if self.timeout_s is not None:  # Scrapfly must give up before our client does
                timeout_ms = min(timeout_ms, int((self.timeout_s - _CLIENT_MARGIN_S) * 1000))
            options.update(retry=False, timeout=max(_MIN_TIMEOUT_MS, int(timeout_ms)))
        options.update(extra)
        if policy.country:
            options["country"] = policy.country.lower()
        if policy.locale:
            options["lang"] = [policy.locale]
        if request.headers:
            options["headers"] = dict(request.headers)
        return options

    def _config(self, url: str, host: str, options: Mapping[str, Any]) -> Any:
        from scrapfly import ScrapeConfig

        try:
            return ScrapeConfig(url, **options)
        except Exception as exc:  # the SDK validates option values as it builds the config
            raise PolicyError(
                f"policy for {host!r}: engine_options.scrapfly rejected by scrapfly-sdk: "
                f"{type(exc).__name__}: {exc}"
            ) from None

    def _read_timeout(self, options: Mapping[str, Any]) -> float:
        if self.timeout_s is not None:
            return self.timeout_s
        if "timeout" in options:
            return float(options["timeout"]) / 1000 + _CLIENT_MARGIN_S
        return _MANAGED_READ_TIMEOUT_S

    def _client(self, read_timeout_s: float) -> Any:
        client = self._clients.get(read_timeout_s)
        if client is None:
            from scrapfly import ScrapflyClient

            client = ScrapflyClient(
                key=self._api_key,
                host=self.api_url,
                connect_timeout=min(ScrapflyClient.DEFAULT_CONNECT_TIMEOUT, read_timeout_s),
                web_scraping_api_read_timeout=read_timeout_s,
            )
            self._clients[read_timeout_s] = client
        return client

    # -- reading the answer ---------------------------------------------------------------

    def _result(
        self,
        response: Any,
        url: str,
        host: str,
        policy: DomainPolicy,
        permit: Permit,
        options: Mapping[str, Any],
        elapsed_ms: int,
    ) -> FetchResult:
        envelope: Mapping[str, Any] = response.result
        result: Mapping[str, Any] = envelope.get("result") or {}
        credits = _billed(response, envelope, default=_price(options))
        verdict = challenge_from_scrapfly(envelope)
        if verdict.blocked:
            status = result.get("status_code")
            error: FetchError = Blocked(
                f"{verdict.vendor or 'unknown'} {verdict.kind} page ({status}) via scrapfly",
                url=url,
                host=host,
                engine=self.name,
                vendor=verdict.vendor,
            )
            raise charged(error, credits)
        content = _content(result.get("content"))
        if len(content) > policy.max_response_bytes:
            raise charged(
                ResponseTooLarge(
                    f"{host}: {len(content)} bytes > {policy.max_response_bytes}",
                    url=url,
                    host=host,
                    engine=self.name,
                ),
                credits,
            )
        upstream = result.get("status_code")
        status = upstream if isinstance(upstream, int) else 200
        if status >= 400:
            raise charged(
                error_for_status(status, url=url, host=host, engine=self.name, permit=permit),
                credits,
            )
        final_url = result.get("url")
        log.debug(
            "fetch.completed",
            engine=self.name,
            host=host,
            url=url,
            status=status,
            credits=credits,
            elapsed_ms=elapsed_ms,
        )
        return FetchResult(
            url=final_url if isinstance(final_url, str) and final_url else url,
            status=status,
            content=content,
            engine="scrapfly",
            headers=_headers(result.get("response_headers")),
            elapsed_ms=elapsed_ms,
            credits=credits,
        )

    def _translate(
        self, exc: Exception, url: str, host: str, permit: Permit, price: int
    ) -> FetchError:
        """One scrapfly-sdk / requests exception -> the SDK's error, key scrubbed, credits set."""
        import requests
        from scrapfly.errors import ScrapflyError

        detail = _scrub(f"{type(exc).__name__}: {exc}", self._api_key)[:300]
        if isinstance(exc, ScrapflyError):
            code = exc.code if isinstance(exc.code, str) else None
            status = exc.http_status_code if isinstance(exc.http_status_code, int) else None
            action = _action(code, status)
            if action != "blocked":
                permit.outcome = "neutral"  # Scrapfly failed, not the target
            error = self._error(action, f"scrapfly: {detail}", url, host, exc)
            return charged(error, _billed_by_error(exc))
        permit.outcome = "neutral"
        if isinstance(exc, requests.ConnectTimeout) or _never_connected(exc):
            return TransientFetchError(
                f"scrapfly API unreachable: {detail}", url=url, host=host, engine=self.name
            )
        if isinstance(exc, requests.RequestException | ConnectionError):
            # Sent, but no answer: Scrapfly most likely did the work and billed it.
            error = TransientFetchError(
                f"scrapfly API gave no answer: {detail}", url=url, host=host, engine=self.name
            )
            error.indeterminate = True  # done or not, we cannot tell: the router records it so
            return charged(error, price)
        error = TransientFetchError(
            f"scrapfly answer could not be read: {detail}", url=url, host=host, engine=self.name
        )
        return charged(error, price)

    def _error(self, action: Action, message: str, url: str, host: str, exc: Any) -> FetchError:
        if action == "rate_limited":
            response = getattr(exc, "response", None)
            header = response.headers.get("retry-after") if response is not None else None
            retry_after = parse_retry_after(header, now=self.gates.clock.time())
            if retry_after is None and isinstance(getattr(exc, "retry_delay", None), int):
                retry_after = float(exc.retry_delay)
            return RateLimited(
                message, url=url, host=host, engine=self.name, retry_after=retry_after
            )
        return _ERRORS[action](message, url=url, host=host, engine=self.name)


def _send(client: Any, config: Any) -> Any:
    """One send (in a worker thread). An upstream error the SDK raises anyway is a response."""
    from scrapfly import UpstreamHttpError

    try:
        return _scrape_once()(client, config)
    except UpstreamHttpError as exc:
        if exc.api_response is None:
            raise
        return exc.api_response


def _action(code: str | None, status: int | None) -> Action:
    if code:
        for prefix, action in SCRAPFLY_ERROR_ACTIONS:
            if code.upper().startswith(prefix):
                return action
    if status is None or status == 408 or status >= 500:
        return "transient"
    return _STATUS_ACTIONS.get(status, "permanent")


def _never_connected(exc: BaseException) -> bool:
    """requests wraps a refused connection in ConnectionError(MaxRetryError(NewConnectionError))."""
    from urllib3.exceptions import ConnectTimeoutError, MaxRetryError

    reason = exc.args[0] if exc.args else None
    if isinstance(reason, MaxRetryError):
        reason = reason.reason
    return isinstance(reason, ConnectTimeoutError)  # NewConnectionError is one of these


def _price(options: Mapping[str, Any]) -> int:
    """The documented price of the request (ASP may upgrade the pool, and cost more)."""
    pool = _POOL_PRICE.get(str(options.get("proxy_pool", "public_datacenter_pool")), 1)
    return pool + (_RENDER_JS_PRICE if options.get("render_js") else 0)


def _billed(response: Any, envelope: Mapping[str, Any], *, default: int) -> float:
    header = _header_cost(getattr(response, "response", None))
    if header is not None:
        return header
    cost = (envelope.get("context") or {}).get("cost") or {}
    total = cost.get("total") if isinstance(cost, Mapping) else None
    return float(total) if isinstance(total, (int, float)) else float(default)


def _billed_by_error(exc: Any) -> float:
    api_response = getattr(exc, "api_response", None)
    cost = _header_cost(getattr(api_response, "response", None))
    if cost is None:
        cost = _header_cost(getattr(exc, "response", None))
    return cost or 0.0


def _header_cost(response: Any) -> float | None:
    headers = getattr(response, "headers", None)
    value = headers.get("x-scrapfly-api-cost") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _content(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    getvalue = getattr(value, "getvalue", None)  # binary and large-object content: a BytesIO
    if callable(getvalue):
        data = getvalue()
        return data if isinstance(data, bytes) else str(data).encode("utf-8")
    return b""


def _headers(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {
        str(name).lower(): ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
        for name, v in value.items()
    }


def _scrub(text: str, secret: str | None) -> str:
    """``text`` without the API key: the literal key in any URL encoding, and any ``key=``."""
    return _KEY_PARAM.sub(r"\1***", scrub_secret(text, secret))
