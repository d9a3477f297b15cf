"""robots.txt for every fetch: :class:`RobotsCache`, which the router asks before each request.

The first fetch to an origin (scheme, host, port) reads its ``/robots.txt`` through the same
engines and host gates as any page; the rules are kept for the policy's ``robots_revisit_ms``
(a day by default) and shared by every run of the process. What the answer means:

==========================  =================================================================
robots.txt answered          what happens to the URLs of that origin
==========================  =================================================================
2xx                          its rules for ``RareIndexBot`` (else ``*``): a disallowed URL raises
                             :class:`RobotsDisallowed` before anything is sent, logged
                             ``robots.disallowed``
404, 410, other 4xx          allow all (RFC 9309 "unavailable")
401, 403                     disallow all (the long-standing convention)
429, 5xx, timeout, refused   nothing is fetched: :class:`RobotsUnavailable` (transient), so the
                             run is retried later; a 429's ``Retry-After`` is kept
                             (:class:`RateLimited`); asked again after ``RETRY_UNAVAILABLE_S``
==========================  =================================================================

``Crawl-delay`` (or ``Request-rate``) stricter than the policy's ``min_interval_ms`` raises the
host's interval in the gates; a laxer one changes nothing. A host that granted permission in
writing has ``robots_permission`` in its policy: robots.txt is then not applied, and each run
logs ``robots.not_applied`` with that text. Sitemaps the file names are offered to connectors
through :meth:`CrawlContext.robots`.

Example:
    >>> import asyncio
    >>> from rareindex_connectors.runtime import DomainPolicy
    >>> async def read(url):
    ...     return 200, b"User-agent: *\\nDisallow: /cart\\nCrawl-delay: 3\\n"
    >>> cache = RobotsCache()
    >>> rules = asyncio.run(cache.rules("https://shop.example", DomainPolicy(), read))
    >>> rules.can_fetch("https://shop.example/cart/1"), rules.crawl_delay
    (False, 3.0)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import structlog

from ._clock import Clock, SystemClock
from ._policy import DomainPolicy
from ._robots_rules import RobotsRules
from .errors import RobotsUnavailable

__all__ = ["RETRY_UNAVAILABLE_S", "RobotsCache", "RobotsReader", "origin_of", "robots_delay"]

log = structlog.get_logger(__name__)

RETRY_UNAVAILABLE_S = 30.0
"""How long an unreachable robots.txt is remembered as such before it is asked for again."""

RobotsReader = Callable[[str], Awaitable[tuple[int, bytes]]]
"""Fetch a robots.txt URL: ``(status, body)``; raises :class:`RobotsUnavailable` (or a
:class:`RateLimited`) when it cannot be read now."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, lower-cased: the scope of one robots.txt.

    >>> origin_of("HTTPS://Shop.Example:8443/p/1?x=2")
    'https://shop.example:8443'
    """
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{host}{port}"


def robots_delay(rules: RobotsRules) -> float | None:
    """The interval robots.txt asks for between requests, in seconds: the larger of
    ``Crawl-delay`` and ``Request-rate``; None when it asks for none.

    >>> robots_delay(RobotsRules.parse("User-agent: *\\nCrawl-delay: 2\\nRequest-rate: 1/5s\\n"))
    5.0
    """
    delays = [d for d in (rules.crawl_delay,) if d is not None and d > 0]
    if rules.request_rate is not None and rules.request_rate.requests > 0:
        delays.append(rules.request_rate.interval)
    return max(delays) if delays else None


@dataclass(slots=True)
class _Entry:
    rules: RobotsRules | None
    expires_at: float
    error: RobotsUnavailable | None = None


class RobotsCache:
    """robots.txt rules per origin, read once and kept for the policy's revisit interval.

    Thread-safe and usable from several event loops (dramatiq worker threads share one process
    cache); concurrent first requests to an origin wait for one read instead of each reading.
    """

    def __init__(self, *, clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._entries: dict[str, _Entry] = {}
        self._guard = threading.Lock()
        self._reads: dict[tuple[int, str], asyncio.Lock] = {}

    def known(self, origin: str) -> RobotsRules | None:
        """The rules cached for ``origin`` (None: not read, expired or unavailable)."""
        with self._guard:
            entry = self._entries.get(origin)
        if entry is None or entry.expires_at <= self.clock.time():
            return None
        return entry.rules

    async def rules(self, origin: str, policy: DomainPolicy, read: RobotsReader) -> RobotsRules:
        """The rules of ``origin``, read through ``read`` when not cached.

        Raises:
            RobotsUnavailable: robots.txt could not be read (now, or within the last
                ``RETRY_UNAVAILABLE_S``): fetch nothing from this origin for now.
        """
        cached = self._fresh(origin)
        if cached is not None:
            return cached
        async with self._read_lock(origin):
            cached = self._fresh(origin)  # another task read it while this one waited
            if cached is not None:
                return cached
            try:
                status, body = await read(f"{origin}/robots.txt")
            except RobotsUnavailable as exc:
                until = self.clock.time() + RETRY_UNAVAILABLE_S
                self._store(origin, _Entry(None, until, exc))
                log.warning("robots.unavailable", origin=origin, error=str(exc)[:300])
                raise
            rules = RobotsRules.from_status(status, body)
            revisit = policy.robots_revisit_ms / 1000
            self._store(origin, _Entry(rules, self.clock.time() + revisit))
            log.debug(
                "robots.read",
                origin=origin,
                status=status,
                verdict=rules.verdict,
                crawl_delay_ms=_ms(robots_delay(rules)),
                sitemaps=len(rules.sitemaps),
            )
            return rules

    def _fresh(self, origin: str) -> RobotsRules | None:
        with self._guard:
            entry = self._entries.get(origin)
        if entry is None or entry.expires_at <= self.clock.time():
            return None
        if entry.error is not None:
            raise RobotsUnavailable(
                f"{origin}/robots.txt could not be read ({entry.error}); nothing is fetched "
                "from this origin until it can be",
                url=f"{origin}/robots.txt",
                host=urlsplit(origin).hostname,
            )
        return entry.rules

    def _store(self, origin: str, entry: _Entry) -> None:
        with self._guard:
            self._entries[origin] = entry

    def _read_lock(self, origin: str) -> asyncio.Lock:
        key = (id(asyncio.get_running_loop()), origin)
        with self._guard:
            return self._reads.setdefault(key, asyncio.Lock())


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else int(seconds * 1000)
