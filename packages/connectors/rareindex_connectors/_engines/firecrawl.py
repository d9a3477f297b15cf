"""The ``firecrawl`` engine: Firecrawl's ``/v2/scrape`` fetches the target, through firecrawl-py.

* The *target* URL passes the SSRF check before Firecrawl is asked to fetch it (a paid engine never
  fetches a private address unless the target host's policy allows private networks), then the
  *target* host's gate: Firecrawl hits that host for us, so its politeness budget applies.
* One ``fetch()`` is at most one billed send. firecrawl-py counts ``max_retries`` as total sends
  (``max(1, n)``) and resends after read timeouts, when the first send may already be billed, so
  the client is built with ``max_retries=1``; ``auto_resume=False`` stops it resending a 408.
  Retries belong to the router and the worker, which see the credits.
* ``max_age=0``: Firecrawl caches for two days by default; a price index wants today's page.
* Formats ``markdown`` + ``rawHtml``: ``rawHtml`` is the content (for ``expect="json"`` it is the
  upstream JSON as text). The target's status is ``metadata.statusCode``: Firecrawl answers 200 for
  a target's 403 challenge page and bills it, so the inner status is what counts.
* Credits: ``metadata.creditsUsed``, else the documented price; set on the result and on every
  error raised after Firecrawl charged (a challenge page, an upstream 404, a read timeout).
* Timeouts: Firecrawl gets the target deadline (``engine_options.firecrawl.timeout_ms``, else the
  policy's ``timeout_ms``) and our client waits 5 s longer, so Firecrawl gives up (and answers 408)
  before we hang up on a request it may bill. ``timeout_s`` caps the client's wait.
* firecrawl-py and httpx exceptions stop here, translated into the SDK's error tree. A vendor-side
  failure (bad key, credits, the API's own 429 or 5xx) never counts against the target's breaker.

Example:
    >>> engine = FirecrawlEngine(api_key=key, policies=policies, gates=gates)  # doctest: +SKIP
    >>> result = await engine.fetch(FetchRequest("https://shop.example/p/1"))  # doctest: +SKIP
    >>> result.status, result.credits                                        # doctest: +SKIP
    (200, 1.0)
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx
import structlog

from .._challenge import challenge_from_firecrawl
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

__all__ = ["FIRECRAWL_API_URL", "FIRECRAWL_OPTIONS", "FirecrawlEngine"]

log = structlog.get_logger(__name__)

FIRECRAWL_API_URL = "https://api.firecrawl.dev"
FIRECRAWL_OPTIONS = frozenset(
    {"block_ads", "mobile", "only_main_content", "proxy", "timeout_ms", "wait_for"}
)
"""Keys allowed in a policy's ``engine_options.firecrawl``."""

_MIN_TIMEOUT_MS, _MAX_TIMEOUT_MS = 1_000, 300_000  # what /v2/scrape accepts
_CLIENT_MARGIN_S = 5.0
_SCRAPE_CREDITS = 1  # per page; "enhanced" proxies cost 4 more
_ENHANCED_CREDITS = 4

# Firecrawl API status -> error. Unlisted: other 4xx permanent, 5xx transient. These are
# Firecrawl's answers, not the target's (whose status arrives in metadata.statusCode).
_API_ERRORS: dict[int, type[FetchError]] = {
    400: PermanentFetchError,  # invalid URL or options: a resend will not help
    401: PermanentFetchError,  # our key is bad
    402: BudgetExhausted,  # the account's credits are spent
    403: PermanentFetchError,  # "this website is no longer supported"
    408: TransientFetchError,  # the scrape ran out of time
    429: RateLimited,  # our rate or concurrency on Firecrawl, not the target's
}
_PRE_TAG = re.compile(r"<pre[^>]*>(.*?)</pre>", re.IGNORECASE | re.DOTALL)


class FirecrawlEngine(PaidEngine):
    """Fetch through Firecrawl. One instance per process; share ``gates`` with the other engines.

    Args:
        api_key: ``RI_FIRECRAWL_API_KEY``; without it the engine is unavailable (the router skips
            it and says why).
        policies: per-host policies: ``timeout_ms``, ``country``, ``locale``,
            ``engine_options.firecrawl``, budgets.
        gates: the *same* gates the other engines use, so a host's budget counts every engine.
        resolver: the SSRF check for target URLs.
        api_url: the API's base URL (a local fake, or a self-hosted Firecrawl).
        timeout_s: the longest the client waits for Firecrawl's answer; by default the target
            deadline + 5 s. Firecrawl is then given at most ``timeout_s - 5`` s for the target.
    """

    name: EngineName = "firecrawl"
    key_setting = "RI_FIRECRAWL_API_KEY"
    option_keys = FIRECRAWL_OPTIONS
    default_api_url = FIRECRAWL_API_URL

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            # AsyncFirecrawl has no close(); its httpx client keeps no idle connections
            # (max_keepalive_connections=0), so this only releases the pool object.
            http = getattr(getattr(client, "_v2_client", None), "async_http_client", None)
            if http is not None:
                await http.close()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Scrape ``request.url`` through Firecrawl; raises from the SDK's error tree."""
        url, host, policy = self._target(request)
        options = self._options(policy, host, request)
        client = self._client(self._client_timeout(options["timeout"]))
        await self.resolver.resolve(url, allow_private=policy.allow_private_network)
        async with self.gates.slot(host, policy, url=url, probe=request.probe) as permit:
            started = time.perf_counter()
            try:
                document = await client.scrape(url, **options)
            except Exception as exc:
                raise self._translate(exc, url, host, permit, _price(options)) from None
            elapsed_ms = int((time.perf_counter() - started) * 1000)
            return self._result(document, url, host, request, policy, permit, options, elapsed_ms)

    # -- building the request -------------------------------------------------------------

    def _options(self, policy: DomainPolicy, host: str, request: FetchRequest) -> dict[str, Any]:
        extra = self._engine_options(policy, host)
        deadline_ms = int(extra.pop("timeout_ms", policy.timeout_ms))
        if self.timeout_s is not None:  # Firecrawl must give up before our client does
            deadline_ms = min(deadline_ms, int((self.timeout_s - _CLIENT_MARGIN_S) * 1000))
        options: dict[str, Any] = {
            "formats": ["markdown", "rawHtml"],
            "max_age": 0,
            "auto_resume": False,
            "timeout": max(_MIN_TIMEOUT_MS, min(_MAX_TIMEOUT_MS, deadline_ms)),
            **extra,
        }
        if policy.country:
            location: dict[str, Any] = {"country": policy.country.upper()}
            if policy.locale:
                location["languages"] = [policy.locale]
            options["location"] = location
        if request.headers:
            options["headers"] = dict(request.headers)
        _check_options(options, host)
        return options

    def _client_timeout(self, deadline_ms: int) -> float:
        return self.timeout_s or deadline_ms / 1000 + _CLIENT_MARGIN_S

    def _client(self, timeout_s: float) -> Any:
        client = self._clients.get(timeout_s)
        if client is None:
            from firecrawl import AsyncFirecrawl  # imported on first use: it is slow to import

            # max_retries=1: firecrawl-py counts total sends, so this is exactly one.
            client = AsyncFirecrawl(
                api_key=self._api_key,
                api_url=self.api_url,
                timeout=timeout_s,
                max_retries=1,
                backoff_factor=0,
            )
            self._clients[timeout_s] = client
        return client

    # -- reading the answer ---------------------------------------------------------------

    def _result(
        self,
        document: Any,
        url: str,
        host: str,
        request: FetchRequest,
        policy: DomainPolicy,
        permit: Permit,
        options: Mapping[str, Any],
        elapsed_ms: int,
    ) -> FetchResult:
        metadata = document.metadata
        status: int | None = getattr(metadata, "status_code", None)
        used = getattr(metadata, "credits_used", None)
        credits = float(used) if isinstance(used, (int, float)) else float(_price(options))
        raw = document.raw_html if document.raw_html is not None else (document.markdown or "")
        verdict = challenge_from_firecrawl({"statusCode": status}, raw)
        if verdict.blocked:
            error: FetchError = Blocked(
                f"{verdict.vendor or 'unknown'} {verdict.kind} page ({status}) via firecrawl",
                url=url,
                host=host,
                engine=self.name,
                vendor=verdict.vendor,
            )
            raise charged(error, credits)
        content = raw.encode("utf-8")
        if request.expect == "json":
            content = _unwrap_json(content)
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
        status = status or 200  # success without a status: Firecrawl got a page
        if status >= 400:
            raise charged(
                error_for_status(status, url=url, host=host, engine=self.name, permit=permit),
                credits,
            )
        content_type = getattr(metadata, "content_type", None)
        final_url = getattr(metadata, "url", None)
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
            engine="firecrawl",
            headers={"content-type": content_type} if isinstance(content_type, str) else {},
            elapsed_ms=elapsed_ms,
            credits=credits,
        )

    def _translate(
        self, exc: Exception, url: str, host: str, permit: Permit, price: int
    ) -> FetchError:
        """One firecrawl-py / httpx exception -> the SDK's error, key scrubbed, credits set."""
        from firecrawl.v2.utils.error_handler import FirecrawlError

        permit.outcome = "neutral"  # Firecrawl failed, not the target: keep its breaker out of it
        detail = scrub_secret(f"{type(exc).__name__}: {exc}", self._api_key)[:300]
        if isinstance(exc, FirecrawlError):
            status = exc.status_code if isinstance(exc.status_code, int) else 500
            kind = _API_ERRORS.get(
                status, PermanentFetchError if status < 500 else TransientFetchError
            )
            message = f"firecrawl API answered {status}: {detail}"
            if kind is RateLimited:
                response = exc.response
                header = response.headers.get("retry-after") if response is not None else None
                retry_after = parse_retry_after(header, now=self.gates.clock.time())
                return RateLimited(
                    message, url=url, host=host, engine=self.name, retry_after=retry_after
                )
            return kind(message, url=url, host=host, engine=self.name)
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            # Nothing reached Firecrawl: nothing was billed.
            return TransientFetchError(
                f"firecrawl API unreachable: {detail}", url=url, host=host, engine=self.name
            )
        if isinstance(exc, httpx.HTTPError):
            # Sent, but no answer (read timeout, dropped connection): Firecrawl most likely did the
            # work and billed it, so the ledger counts the documented price.
            error = TransientFetchError(
                f"firecrawl API gave no answer: {detail}", url=url, host=host, engine=self.name
            )
            error.indeterminate = True  # done or not, we cannot tell: the router records it so
            return charged(error, price)
        error = TransientFetchError(
            f"firecrawl answer could not be read: {detail}", url=url, host=host, engine=self.name
        )
        return charged(error, price)


def _check_options(options: Mapping[str, Any], host: str) -> None:
    """Validate as firecrawl-py will, so a bad policy value fails before anything is sent."""
    from firecrawl.v2.types import ScrapeOptions

    try:
        ScrapeOptions(**{k: v for k, v in options.items() if k != "auto_resume"})
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        first = str(exc).splitlines()
        raise PolicyError(
            f"policy for {host!r}: engine_options.firecrawl rejected by firecrawl-py: "
            f"{' '.join(first[:3])}"
        ) from None


def _price(options: Mapping[str, Any]) -> int:
    """The documented price of one scrape with these options."""
    return _SCRAPE_CREDITS + (_ENHANCED_CREDITS if options.get("proxy") == "enhanced" else 0)


def _unwrap_json(content: bytes) -> bytes:
    """A browser shows a JSON document inside ``<pre>``; take it out when that is what came."""
    stripped = content.strip()
    if not stripped.startswith(b"<"):
        return content
    match = _PRE_TAG.search(stripped.decode("utf-8", errors="replace"))
    if match is None:
        return content
    candidate = html.unescape(match.group(1))
    try:
        json.loads(candidate)
    except ValueError:
        return content
    return candidate.encode("utf-8")
