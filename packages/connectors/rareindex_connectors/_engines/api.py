"""The ``api`` engine: direct HTTP(S) with httpx, polite and safe.

* An honest ``RareIndexBot/<version> (+contact)`` user agent, unless the policy says ``browser``.
  The contact is the host policy's ``engine_options.api.contact``, else ``RI_USER_AGENT``, else
  the project's URL.
* Every attempt passes the host's gate (interval, concurrency, budgets, breaker) first.
* Retries on 408/425/429/5xx, network errors and names that do not resolve (:class:`DNSError`)
  with exponential backoff and full jitter (``engine_options.api.backoff_base_ms``, 500 ms).
  A body cut short (:class:`TruncatedBody`) is retried once. A TLS failure (:class:`TLSError`)
  and a body we cannot decode (:class:`UndecodableBody`) are permanent: never retried.
  ``Retry-After`` (seconds or HTTP-date) defers the whole host; beyond the policy's cap the error
  is raised at once so the caller reschedules instead of sleeping.
* Conditional requests from a stored ETag / Last-Modified: a 304 is a cheap "unchanged".
* Redirects followed by hand, each hop through the SSRF check and the new host's gate; loops and
  chains longer than ``max_redirects`` are refused.
* The body is read raw and decoded with a bound (gzip, deflate, br, zstd, stacked): a
  decompression bomb stops at the size limit; fewer bytes than ``Content-Length`` is truncated.
* A challenge page is :class:`Blocked`, never a result.
* httpx exceptions stop here, translated into the SDK's error tree.

Example:
    >>> engine = ApiEngine(policies=PolicySet.from_mapping({}))
    >>> result = await engine.fetch(FetchRequest("https://shop.example/p.json"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
import ssl
import time
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import structlog

from .._challenge import is_challenge_page
from .._clock import Clock, SystemClock
from .._context import FetchResult
from .._gates import HostGates, MemoryGateBackend
from .._policy import DomainPolicy, PolicySet
from .._raw import EngineName
from .._ssrf import SafeResolver
from .._version import __version__
from ..errors import (
    Blocked,
    FetchError,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    ResponseTooLarge,
    TLSError,
    TransientFetchError,
    TruncatedBody,
    UndecodableBody,
)
from .base import FetchRequest
from .body import SUPPORTED_ENCODINGS, BodyTooLarge, BodyTruncated, BodyUndecodable, BoundedBody
from .outcome import error_for_status
from .retry import backoff_s, parse_rate_limit, parse_retry_after

__all__ = ["API_OPTIONS", "BROWSER_USER_AGENT", "DEFAULT_CONTACT", "ApiEngine", "bot_user_agent"]

log = structlog.get_logger(__name__)

BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
DEFAULT_CONTACT = "https://github.com/rareindex/rareindex"
"""The project's URL: where a site operator reads what RareIndexBot is and how to reach us."""
CONTACT_ENV = "RI_USER_AGENT"
"""The environment variable that sets the contact part of the bot user agent for a process."""
API_OPTIONS = frozenset({"contact", "backoff_base_ms"})
"""Keys allowed in a policy's ``engine_options.api``."""
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_NO_BODY = frozenset({204, 304})
_CONTACT = re.compile(r"[!-'*-~](?:[ -'*-~]{0,198}[!-'*-~])?")
"""Printable ASCII without parentheses (they close the comment), at most 200 characters."""


def default_client() -> httpx.AsyncClient:
    """The httpx API over aiohttp's transport.

    Stock httpx spends most of its time in connection-pool bookkeeping under concurrency (about
    350 pages/s at 64 concurrent requests here, against about 3,300 for aiohttp); the
    ``httpx-aiohttp`` transport keeps the httpx API for engines and connectors with aiohttp's
    pooling underneath. It reads bodies raw (``auto_decompress=False``), so our bounded decoder
    still does the decompression, and it passes ``sni_hostname`` on to TLS.
    """
    from httpx_aiohttp import AiohttpTransport

    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    transport = AiohttpTransport(limits=limits, trust_env=False)
    return httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False)


def bot_user_agent(contact_url: str = DEFAULT_CONTACT) -> str:
    """``RareIndexBot/0.1.0 (+https://…)``: who we are and where to complain.

    >>> bot_user_agent("mailto:crawl@example.org").endswith("(+mailto:crawl@example.org)")
    True
    """
    return f"RareIndexBot/{__version__} (+{check_contact(contact_url, where='contact_url')})"


def check_contact(value: str, *, where: str) -> str:
    """``value`` if it can stand in the user agent's comment, else :class:`PolicyError`."""
    value = value.strip() if isinstance(value, str) else value
    if not isinstance(value, str) or not _CONTACT.fullmatch(value):
        raise PolicyError(
            f"{where}: the contact in the user agent must be a URL or mailto: address of "
            "printable ASCII without parentheses, at most 200 characters, e.g. "
            f"'https://example.org/bot' or 'mailto:crawl@example.org'; got {value!r}"
        )
    return value


class ApiEngine:
    """Direct HTTP. One instance per process; it pools connections across hosts."""

    name: EngineName = "api"
    paid = False

    def __init__(
        self,
        *,
        policies: PolicySet,
        gates: HostGates | None = None,
        resolver: SafeResolver | None = None,
        client: httpx.AsyncClient | None = None,
        clock: Clock | None = None,
        contact_url: str | None = None,
        max_redirects: int = 5,
    ):
        """``contact_url`` defaults to ``RI_USER_AGENT``, else :data:`DEFAULT_CONTACT`; a host
        policy's ``engine_options.api.contact`` replaces it for that host."""
        self.policies = policies
        self.gates = gates or HostGates(MemoryGateBackend())
        self.resolver = resolver or SafeResolver()
        self.clock = clock or self.gates.clock or SystemClock()
        if contact_url is None:
            contact_url = os.environ.get(CONTACT_ENV, "").strip() or DEFAULT_CONTACT
            where = CONTACT_ENV
        else:
            where = "contact_url"
        self.user_agent = bot_user_agent(check_contact(contact_url, where=where))
        self.max_redirects = max_redirects
        self._client = client or default_client()

    def unavailable_reason(self) -> str | None:
        return None

    async def aclose(self) -> None:
        await self._client.aclose()

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Fetch ``request.url``, following redirects; raises from the SDK's error tree."""
        url = str(httpx.URL(request.url, params=request.params)) if request.params else request.url
        visited = {url}
        for _hop in range(self.max_redirects + 1):
            result = await self._fetch_with_retries(url, request)
            if result.status not in _REDIRECTS:
                return result
            location = result.headers.get("location")
            if not location:
                raise PermanentFetchError(
                    f"{result.status} without Location",
                    url=url,
                    engine=self.name,
                    status=result.status,
                )
            url = urljoin(url, location)
            if url in visited:
                raise PermanentFetchError(
                    f"redirect loop back to {url}",
                    url=request.url,
                    engine=self.name,
                    status=result.status,
                )
            visited.add(url)
        raise PermanentFetchError(
            f"more than {self.max_redirects} redirects", url=request.url, engine=self.name
        )

    async def _fetch_with_retries(self, url: str, request: FetchRequest) -> FetchResult:
        host = (urlsplit(url).hostname or "").lower()
        policy = self.policies.for_host(host)
        options = self._options(policy, host)
        attempt = 0
        truncated = 0
        while True:
            error: FetchError
            try:
                return await self._attempt(url, host, request, policy, options)
            except TruncatedBody as exc:
                truncated += 1
                if truncated > 1:  # cut short twice: the host sends it that way; say so
                    raise
                error = exc
            except RateLimited as exc:
                wait = exc.retry_after
                if wait is not None:
                    await self.gates.defer(host, wait)
                    if wait > policy.retry_after_cap_ms / 1000:
                        raise  # reschedule: do not hold a worker for that long
                error = exc
            except TransientFetchError as exc:
                error = exc
            if attempt >= policy.max_retries:
                raise error
            delay = backoff_s(attempt, base_s=options.get("backoff_base_ms", 500) / 1000)
            log.info(
                "fetch.retrying",
                host=host,
                url=url,
                engine=self.name,
                attempt=attempt + 1,
                reason=str(error),
                error=type(error).__name__,
                delay_ms=int(delay * 1000),
            )
            await self.clock.sleep(delay)
            attempt += 1

    def _options(self, policy: DomainPolicy, host: str) -> dict[str, Any]:
        """The host policy's ``engine_options.api``, checked: unknown keys, bad values refused."""
        options = dict(policy.engine_options.get(self.name, {}))
        unknown = sorted(set(options) - API_OPTIONS)
        if unknown:
            raise PolicyError(
                f"policy for {host!r}: unknown engine_options.api key(s) {unknown}; "
                f"valid: {', '.join(sorted(API_OPTIONS))}"
            )
        if "contact" in options:
            where = f"policy for {host!r}: engine_options.api.contact"
            options["contact"] = check_contact(options["contact"], where=where)
        base = options.get("backoff_base_ms", 500)
        if isinstance(base, bool) or not isinstance(base, int) or not 0 <= base <= 60_000:
            raise PolicyError(
                f"policy for {host!r}: engine_options.api.backoff_base_ms is the first retry's "
                f"longest wait in milliseconds, a whole number from 0 to 60000 (e.g. 500); "
                f"got {base!r}"
            )
        return options

    def _user_agent(self, policy: DomainPolicy, options: dict[str, Any]) -> str:
        if policy.user_agent == "browser":
            return BROWSER_USER_AGENT
        contact = options.get("contact")
        return bot_user_agent(contact) if contact else self.user_agent

    def _headers(
        self, url: str, request: FetchRequest, policy: DomainPolicy, options: dict[str, Any]
    ) -> dict[str, str]:
        headers = {
            # The URL's authority, whatever address and port the connection really goes to.
            "host": urlsplit(url).netloc.rpartition("@")[2],
            "user-agent": self._user_agent(policy, options),
            "accept-encoding": SUPPORTED_ENCODINGS,
            "accept": "application/json" if request.expect == "json" else "*/*",
        }
        if request.etag:
            headers["if-none-match"] = request.etag
        if request.last_modified:
            headers["if-modified-since"] = request.last_modified
        headers.update({k.lower(): v for k, v in request.headers.items()})
        return headers

    async def _attempt(
        self,
        url: str,
        host: str,
        request: FetchRequest,
        policy: DomainPolicy,
        options: dict[str, Any],
    ) -> FetchResult:
        target = await self.resolver.resolve(url, allow_private=policy.allow_private_network)
        parts = urlsplit(url)
        address = f"[{target.address}]" if ":" in target.address else target.address
        connect_url = urlunsplit(
            (parts.scheme, f"{address}:{target.port}", parts.path or "/", parts.query, "")
        )
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        headers = self._headers(url, request, policy, options)
        async with self.gates.slot(host, policy, url=url, probe=request.probe) as permit:
            started = time.perf_counter()
            status, response_headers, content = await self._send(
                connect_url, headers, extensions, policy, url=url, host=host
            )
            elapsed_ms = int((time.perf_counter() - started) * 1000)
            verdict = is_challenge_page(status, response_headers, content, blocked_only=True)
            if verdict.blocked:
                raise Blocked(
                    f"{verdict.vendor or 'unknown'} {verdict.kind} page ({status})",
                    url=url,
                    host=host,
                    engine=self.name,
                    vendor=verdict.vendor,
                )
            window = parse_rate_limit(response_headers, now=self.clock.time())
            if window:  # none left in the host's window: nothing more starts until it resets
                await self.gates.defer(host, window)
                log.info("fetch.rate_window_spent", host=host, url=url, wait_ms=int(window * 1000))
            if status >= 400:
                retry_after = parse_retry_after(
                    response_headers.get("retry-after"), now=self.clock.time()
                )
                if retry_after is not None and status in (429, 503):
                    # Deferred while this request still holds its slot: no other worker of the
                    # fleet can start one on the host between this answer and the deferral.
                    await self.gates.defer(host, retry_after)
                raise error_for_status(
                    status,
                    url=url,
                    host=host,
                    engine=self.name,
                    permit=permit,
                    retry_after=retry_after,
                )
            return FetchResult(
                url=url,
                status=status,
                content=content,
                engine="api",
                headers=response_headers,
                elapsed_ms=elapsed_ms,
                not_modified=status == 304,
            )

    async def _send(
        self,
        connect_url: str,
        headers: dict[str, str],
        extensions: dict[str, str],
        policy: DomainPolicy,
        *,
        url: str,
        host: str,
    ) -> tuple[int, dict[str, str], bytes]:
        limit = policy.max_response_bytes
        received = 0
        declared = ""
        try:
            async with self._client.stream(
                "GET",
                connect_url,
                headers=headers,
                extensions=extensions,
                timeout=policy.timeout_ms / 1000,
            ) as response:
                declared = response.headers.get("content-length", "").strip()
                if (
                    declared.isdigit()
                    and int(declared) > limit
                    and not response.headers.get("content-encoding")
                ):
                    raise BodyTooLarge(f"Content-Length {declared} > {limit}")
                body = BoundedBody(response.headers.get("content-encoding"), limit=limit)
                try:
                    async for chunk in response.aiter_raw():
                        received += len(chunk)
                        body.feed(chunk)
                except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
                    raise BodyTruncated(
                        f"the connection ended after {received} bytes of the body"
                        + (f" of {declared}" if declared.isdigit() else "")
                        + f" ({type(exc).__name__})"
                    ) from None
                status = response.status_code
                if (
                    declared.isdigit()
                    and received < int(declared)
                    and status not in _NO_BODY
                    and status >= 200
                ):
                    raise BodyTruncated(f"{received} bytes of a {declared}-byte Content-Length")
                return status, dict(response.headers), body.finish()
        except BodyTooLarge as exc:
            raise ResponseTooLarge(f"{host}: {exc}", url=url, host=host, engine=self.name) from None
        except BodyTruncated as exc:
            raise TruncatedBody(
                f"{host}: truncated body: {exc}", url=url, host=host, engine=self.name
            ) from None
        except BodyUndecodable as exc:
            raise UndecodableBody(
                f"{host}: undecodable body: {exc}", url=url, host=host, engine=self.name
            ) from None
        except httpx.TimeoutException as exc:
            tls = _tls_failure(exc)
            if tls is not None:  # httpx-aiohttp reports a failed handshake as ConnectTimeout
                raise TLSError(
                    f"{host}: TLS failed: {tls}", url=url, host=host, engine=self.name
                ) from None
            raise TransientFetchError(
                f"{host}: timeout ({type(exc).__name__})", url=url, host=host, engine=self.name
            ) from None
        except httpx.HTTPError as exc:
            tls = _tls_failure(exc)
            if tls is not None:
                raise TLSError(
                    f"{host}: TLS failed: {tls}", url=url, host=host, engine=self.name
                ) from None
            raise TransientFetchError(
                f"{host}: {type(exc).__name__}: {exc}", url=url, host=host, engine=self.name
            ) from None


def _tls_failure(exc: BaseException) -> str | None:
    """What went wrong in TLS, when an :class:`ssl.SSLError` is among ``exc``'s causes.

    Only connection errors reach here with one (the handshake: a certificate for another name,
    self-signed or expired, or a server that does not speak TLS); a TLS error while reading the
    body surfaces as a read error and is handled as a cut-short body.
    """
    seen: set[int] = set()
    deepest: ssl.SSLError | None = None
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLError):  # aiohttp's wrappers are, without the attributes
            message = getattr(current, "verify_message", None)
            if message:
                return str(message)
            deepest = current
        current = current.__cause__ or current.__context__
    if deepest is None:
        return None
    return str(getattr(deepest, "reason", None) or deepest)
