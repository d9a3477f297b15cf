"""The fake web: misbehaving and well-behaved sites on 127.0.0.1, one ASGI app, routed by host.

Every site is a distinct host name (``json.fake.test``, ``ratelimit.fake.test``…) served by one
server; :meth:`FakeWeb.resolver_map` points those names at 127.0.0.1 for the SDK's resolver and
:meth:`FakeWeb.policy` gives each host its own policy entry (``allow_private_network`` on, since
the fake web lives on loopback). The app records every request it serves, so tests can assert
what a host actually saw: start times, peak concurrency, 429s sent.

Hosts:

* ``json.fake.test`` — ``/items/<n>.json`` (JSON, with ETag / 304 support), ``/pages/<n>.html``,
  ``/products.json?page=N`` (ends on an empty page), ``/slow/<ms>``.
* ``ratelimit.fake.test`` — 429 with ``Retry-After: <s>`` (``/retry-after/<s>``) until that long
  has passed, ``/retry-after-date/<s>`` the same with an HTTP-date; ``/window/<s>`` answers 200
  with ``RateLimit-Remaining: 0`` and ``RateLimit-Reset: <s>`` (the window is spent).
* ``budget.fake.test`` — enforces ``budget_per_minute`` requests in any sliding 60 s (429 beyond).
* ``flaky.fake.test`` — ``/flap`` alternates 503 and 200; ``/down`` is always 503.
* ``challenge.fake.test`` — a Cloudflare managed challenge (403, ``cf-mitigated: challenge``) on
  every path; ``/datadome`` a DataDome captcha.
* ``redirect.fake.test`` — ``/to/<host>/<path>`` 302s, ``/loop-a`` <-> ``/loop-b``, ``/private``
  302 to ``http://10.0.0.1/``, ``/metadata`` 302 to ``http://169.254.169.254/``.
* ``bomb.fake.test`` — ``/bomb`` a gzip body of ~28 KB inflating to 11 MB; ``/large`` an 11 MB
  plain body.
* ``bodies.fake.test`` — br, zstd and stacked bodies, truncated gzip/deflate/br, a body shorter
  than its Content-Length, an encoding nobody decodes (:mod:`.sites.bodies`; :attr:`FakeWeb.bodies`
  counts the requests per path).
* ``robots.fake.test`` — a robots.txt with ``Disallow`` and ``Crawl-delay`` (stricter for
  RareIndexBot) and a ``Sitemap:``; ``robots-down.fake.test`` — its robots.txt answers 503
  (:mod:`.sites.robots_hosts`).

Example:
    >>> web = FakeWeb()
    >>> with serve_asgi(web.app) as base:                     # doctest: +SKIP
    ...     url = web.url(base, "json.fake.test", "/items/1.json")
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from rareindex_connectors.runtime import Clock, SystemClock

from .servers import RENDERER_HEADER
from .sites import SITE_HOSTS, SiteHandler, build_sites, robots_hosts
from .sites.bodies import Bodies

__all__ = ["FAKE_HOSTS", "MISBEHAVING_HOSTS", "FakeWeb", "HostLog"]

MISBEHAVING_HOSTS = (
    "json.fake.test",
    "ratelimit.fake.test",
    "budget.fake.test",
    "flaky.fake.test",
    "challenge.fake.test",
    "redirect.fake.test",
    "bomb.fake.test",
    "bodies.fake.test",
    "robots.fake.test",
    "robots-down.fake.test",
)
FAKE_HOSTS = MISBEHAVING_HOSTS + SITE_HOSTS
"""Every host the fake web serves: the misbehaving ones and the collectibles sites."""

CLOUDFLARE_CHALLENGE = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    b"<div id='challenge-body-text'>Checking your browser</div>"
    b"<script>window._cf_chl_opt={cvId:'3'};</script>"
    b"<script src='/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1'></script>"
    b"</body></html>"
)
DATADOME_CAPTCHA = (
    b"<html><head><title>example.com</title></head><body>"
    b"<script>var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F5','t':'fe','s':17434};</script>"
    b"<script src='https://ct.captcha-delivery.com/c.js'></script></body></html>"
)


@dataclass
class HostLog:
    """What one host saw."""

    starts: list[float] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """The path of each request, in arrival order."""
    statuses: list[int] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0
    user_agents: set[str] = field(default_factory=set)

    @property
    def requests(self) -> int:
        return len(self.starts)

    @property
    def page_requests(self) -> int:
        """Requests other than ``/robots.txt``, which a router reads before a host's first page."""
        return sum(1 for path in self.paths if path != "/robots.txt")

    @property
    def page_statuses(self) -> list[int]:
        """The statuses of :attr:`page_requests`, in order."""
        return [s for p, s in zip(self.paths, self.statuses, strict=False) if p != "/robots.txt"]

    def count(self, status: int) -> int:
        return self.statuses.count(status)

    def min_gap(self) -> float | None:
        """The smallest gap between two consecutive request starts, in seconds."""
        ordered = sorted(self.starts)
        gaps = [b - a for a, b in itertools.pairwise(ordered)]
        return min(gaps) if gaps else None


_JS_SHELL = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Market</title>'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    '<link rel="stylesheet" href="/static/app.css"></head><body>'
    "<noscript>You need to enable JavaScript to run this app.</noscript>"
    '<div id="root"></div><script src="/static/js/main.4f9c1a.js"></script></body></html>'
)
"""What a client-rendered page sends a client that runs no JavaScript: nothing to parse."""


def _bomb() -> bytes:
    # 11 MB of a repeating product line compresses to about 28 KB at level 9.
    line = b'{"sku":"PSA10-000000","title":"1999 Pokemon Base Charizard #4 Holo","price":"0.00"}\n'
    return gzip.compress(line * (11 * 1024 * 1024 // len(line)), 9)


class FakeWeb:
    """The fake web's state and its ASGI app (:attr:`app`)."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        budget_per_minute: int = 30,
        seed: int = 7,
        client_rendered: Mapping[str, str] | None = None,
    ):
        """``client_rendered``: host -> path prefix whose pages are a JavaScript shell (an empty
        ``<div id="root">`` and a script) for clients that do not render, and the real page for
        the fake engines that do (they send :data:`RENDERER_HEADER`)."""
        self.clock = clock or SystemClock()
        self.client_rendered = dict(client_rendered or {})
        self.budget_per_minute = budget_per_minute
        self.logs: dict[str, HostLog] = {}
        self._lock = threading.Lock()
        self._deferred: dict[str, float] = {}
        self._budget_window: deque[float] = deque()
        self._flap = 0
        self._bomb = _bomb()
        self.bodies = Bodies()
        self._routes: dict[str, SiteHandler] = {
            "json.fake.test": self._json_site,
            "ratelimit.fake.test": self._ratelimit_site,
            "budget.fake.test": self._budget_site,
            "flaky.fake.test": self._flaky_site,
            "challenge.fake.test": self._challenge_site,
            "redirect.fake.test": self._redirect_site,
            "bomb.fake.test": self._bomb_site,
            "bodies.fake.test": self.bodies,
            robots_hosts.HOST: robots_hosts.RobotsHost(),
            robots_hosts.DOWN_HOST: robots_hosts.RobotsDown(),
        }
        self._routes.update(build_sites(seed))

    # --- wiring -------------------------------------------------------------------------
    @staticmethod
    def url(base_url: str, host: str, path: str) -> str:
        """``http://<host>:<port><path>`` for a server at ``base_url``."""
        port = urlsplit(base_url).port
        return f"http://{host}:{port}{path}"

    @staticmethod
    def resolver_map() -> dict[str, str]:
        """Host name -> 127.0.0.1, for ``SafeResolver(static=...)``."""
        return dict.fromkeys(FAKE_HOSTS, "127.0.0.1")

    @staticmethod
    def policy(**per_host: dict[str, Any]) -> dict[str, Any]:
        """A policy document giving every fake host its own entry, loopback allowed.

        ``FakeWeb.policy(**{"json.fake.test": {"concurrency": 2}})`` overrides one host.
        """
        defaults = {"min_interval_ms": 0, "concurrency": 8, "max_retries": 0}
        return {
            "defaults": defaults,
            "domains": {
                host: {"allow_private_network": True, **per_host.get(host, {})}
                for host in FAKE_HOSTS
            },
        }

    def log(self, host: str) -> HostLog:
        """What ``host`` has seen so far."""
        with self._lock:
            return self.logs.setdefault(host, HostLog())

    # --- ASGI ---------------------------------------------------------------------------
    @property
    def app(self) -> Callable[[dict[str, Any], Any, Any], Awaitable[None]]:
        """The ASGI 3 application (a plain coroutine function, so servers detect ASGI 3)."""

        async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self._serve(scope, receive, send)

        return asgi

    async def _serve(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            while message["type"] != "lifespan.shutdown":
                await send({"type": f"{message['type']}.complete"})
                message = await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        request = Request(scope, receive)
        host = (request.headers.get("host") or "").split(":")[0].lower()
        handler = self._routes.get(host)
        log = self.log(host)
        with self._lock:
            log.starts.append(self.clock.time())
            log.paths.append(request.url.path)
            log.in_flight += 1
            log.max_in_flight = max(log.max_in_flight, log.in_flight)
            log.user_agents.add(request.headers.get("user-agent", ""))
        try:
            prefix = self.client_rendered.get(host)
            if handler is None:
                response: Response = Response(f"unknown host {host!r}", status_code=421)
            elif (
                prefix is not None
                and request.url.path.startswith(prefix)
                and RENDERER_HEADER not in request.headers
            ):
                response = Response(_JS_SHELL, media_type="text/html; charset=utf-8")
            else:
                response = await handler(request)
        finally:
            with self._lock:
                log.in_flight -= 1
                log.statuses.append(response.status_code if handler else 421)
        await response(scope, receive, send)

    # --- sites --------------------------------------------------------------------------
    async def _json_site(self, request: Request) -> Response:
        path = request.url.path
        if path.startswith("/slow/"):
            await asyncio.sleep(int(path.rsplit("/", 1)[1]) / 1000)
            return JSONResponse({"slow": True})
        if path == "/products.json":
            page = int(request.query_params.get("page", "1"))
            products = (
                [] if page > 3 else [{"id": page * 100 + i, "title": f"Card {i}"} for i in range(5)]
            )
            return JSONResponse({"products": products})
        if path.startswith("/items/") and path.endswith(".json"):
            number = path.removeprefix("/items/").removesuffix(".json")
            etag = f'"item-{number}-v1"'
            if request.headers.get("if-none-match") == etag:
                return Response(status_code=304, headers={"etag": etag})
            body = {
                "id": number,
                "title": f"1999 Pokemon Base Set Charizard #{number}",
                "price": "420.00",
                "currency": "USD",
            }
            return JSONResponse(
                body, headers={"etag": etag, "last-modified": "Mon, 02 Nov 2026 10:00:00 GMT"}
            )
        if path.startswith("/pages/"):
            number = path.removeprefix("/pages/").removesuffix(".html")
            html = (
                f"<html><head><title>Lot {number}</title></head><body><h1>Lot {number}</h1>"
                "<p class='price'>$1,250.00</p></body></html>"
            )
            return Response(html, media_type="text/html")
        if path == "/broken.json":
            return Response('{"products": [{"id": 1, "title": ', media_type="application/json")
        return Response("not found", status_code=404)

    async def _ratelimit_site(self, request: Request) -> Response:
        path = request.url.path
        key = path
        now = self.clock.time()
        for prefix in ("/retry-after/", "/retry-after-date/"):
            if path.startswith(prefix):
                seconds = int(path.removeprefix(prefix))
                with self._lock:
                    until = self._deferred.setdefault(key, now + seconds)
                if now < until:
                    value = (
                        str(seconds)
                        if prefix == "/retry-after/"
                        else formatdate(until + 1, usegmt=True)
                    )
                    return JSONResponse(
                        {"error": "slow down"}, status_code=429, headers={"retry-after": value}
                    )
                return JSONResponse({"ok": True})
        if path.startswith("/window/"):  # 200s that say the window is spent for <s> seconds
            reset = path.removeprefix("/window/")
            headers = {"ratelimit-limit": "1", "ratelimit-remaining": "0", "ratelimit-reset": reset}
            return JSONResponse({"ok": True}, headers=headers)
        return Response("not found", status_code=404)

    async def _budget_site(self, request: Request) -> Response:
        now = self.clock.time()
        with self._lock:
            while self._budget_window and self._budget_window[0] <= now - 60:
                self._budget_window.popleft()
            if len(self._budget_window) >= self.budget_per_minute:
                return JSONResponse(
                    {"error": "30 requests a minute"},
                    status_code=429,
                    headers={"retry-after": "60"},
                )
            self._budget_window.append(now)
        return JSONResponse({"ok": True, "path": request.url.path})

    async def _flaky_site(self, request: Request) -> Response:
        if request.url.path == "/down":
            return Response("upstream down", status_code=503)
        with self._lock:
            self._flap += 1
            failing = self._flap % 2 == 1
        if failing:
            return Response("try again", status_code=503)
        return JSONResponse({"ok": True})

    async def _challenge_site(self, request: Request) -> Response:
        if request.url.path == "/datadome":
            return Response(
                DATADOME_CAPTCHA,
                status_code=403,
                media_type="text/html",
                headers={"x-datadome": "protected"},
            )
        return Response(
            CLOUDFLARE_CHALLENGE,
            status_code=403,
            media_type="text/html",
            headers={"cf-mitigated": "challenge", "server": "cloudflare"},
        )

    async def _redirect_site(self, request: Request) -> Response:
        path = request.url.path
        port = request.url.port
        targets = {
            "/loop-a": "/loop-b",
            "/loop-b": "/loop-a",
            "/private": "http://10.0.0.1/",
            "/metadata": "http://169.254.169.254/latest/meta-data/",
        }
        if path in targets:
            return Response(status_code=302, headers={"location": targets[path]})
        if path.startswith("/to/"):
            host, _, rest = path.removeprefix("/to/").partition("/")
            return Response(status_code=302, headers={"location": f"http://{host}:{port}/{rest}"})
        return Response("not found", status_code=404)

    async def _bomb_site(self, request: Request) -> Response:
        if request.url.path == "/bomb":
            return Response(
                self._bomb, media_type="application/json", headers={"content-encoding": "gzip"}
            )
        if request.url.path == "/large":
            return Response(b"x" * (11 * 1024 * 1024), media_type="text/plain")
        return Response("not found", status_code=404)

    @property
    def bomb_size(self) -> int:
        """The compressed size of ``/bomb``, in bytes."""
        return len(self._bomb)
