"""What the fake servers (the fake web, the fake Firecrawl and Scrapfly APIs) share.

They misbehave on purpose and act like a scraping engine: :class:`Delay` and a :class:`RuleBook`
of URL-pattern / next-N rules, a :class:`Throttle` for concurrency and :class:`RateLimit`, a
:class:`CreditLedger`, :func:`fetch_upstream`, which fetches a target URL into an
:class:`UpstreamPage`, and :func:`digest_page`, which reduces it to markdown, text, clean HTML,
links and metadata. Every piece is per instance; nothing is global. Serve any of them with
:func:`rareindex_connectors.testing.serve_asgi`.

    >>> slow = RuleBook([Delay(2.0, match=r"/slow/", times=1)])
    >>> slow.take("http://127.0.0.1:1/slow/a"), slow.take("http://127.0.0.1:1/slow/a")
    (Delay(seconds=2.0, match='/slow/', times=1), None)
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from html.parser import HTMLParser
from typing import Generic, Literal, Protocol, TypeGuard, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx
from starlette.requests import Request

__all__ = [
    "RENDERER_HEADER",
    "CreditLedger",
    "Delay",
    "PageDigest",
    "RateLimit",
    "Refusal",
    "RuleBook",
    "Throttle",
    "UpstreamPage",
    "digest_page",
    "fetch_upstream",
    "is_valid_target",
    "linger",
]


@dataclass(frozen=True, slots=True)
class RateLimit:
    """At most ``requests`` admitted requests in any sliding window of ``per_seconds``."""

    requests: int
    per_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class Delay:
    """Answer late: after the work is done (and charged), wait ``seconds`` before responding.

    Simulates a paid engine whose client gave up after the request was sent. ``match`` is a regex
    searched in the target URL (``None`` matches all); ``times`` limits the rule to the next N
    matching requests (``None``: every one). The wait ends early if the client disconnects.
    """

    seconds: float
    match: str | None = None
    times: int | None = None


class _Rule(Protocol):
    @property
    def match(self) -> str | None: ...

    @property
    def times(self) -> int | None: ...


R = TypeVar("R", bound=_Rule)


@dataclass(slots=True)
class _Entry(Generic[R]):
    rule: R
    remaining: int | None


class RuleBook(Generic[R]):
    """Rules in insertion order; ``take(target)`` spends one use of the first match."""

    def __init__(self, rules: Iterable[R] = ()) -> None:
        self._lock = threading.Lock()
        self._entries: list[_Entry[R]] = []
        for rule in rules:
            self.add(rule)

    def add(self, rule: R) -> None:
        if rule.match is not None:
            re.compile(rule.match)  # a bad pattern fails here, not inside a request
        with self._lock:
            self._entries.append(_Entry(rule, rule.times))

    def take(self, target: str) -> R | None:
        with self._lock:
            for entry in self._entries:
                if entry.remaining == 0:
                    continue
                if entry.rule.match is None or re.search(entry.rule.match, target):
                    if entry.remaining is not None:
                        entry.remaining -= 1
                    return entry.rule
        return None


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request was not admitted, and how many seconds to tell it to wait."""

    reason: Literal["concurrency", "rate"]
    retry_after: int


class Throttle:
    """Concurrency and sliding-window rate limits for one fake API (per app instance)."""

    def __init__(self, max_concurrency: int | None, rate_limit: RateLimit | None) -> None:
        self._lock = threading.Lock()
        self._max = max_concurrency
        self._rate = rate_limit
        self._admitted: deque[float] = deque()
        self.in_flight = 0

    def admit(self) -> Refusal | None:
        """Count a request in (``None``) or refuse it; an admitted one must be released."""
        with self._lock:
            if self._max is not None and self.in_flight >= self._max:
                return Refusal("concurrency", 1)
            if self._rate is not None:
                now = time.monotonic()
                while self._admitted and self._admitted[0] <= now - self._rate.per_seconds:
                    self._admitted.popleft()
                if len(self._admitted) >= self._rate.requests:
                    wait = self._admitted[0] + self._rate.per_seconds - now
                    return Refusal("rate", max(1, math.ceil(wait)))
                self._admitted.append(now)
            self.in_flight += 1
            return None

    def release(self) -> None:
        with self._lock:
            self.in_flight -= 1


class CreditLedger:
    """A credit balance (``None``: unlimited). Reserve before the work, refund if it fails."""

    def __init__(self, balance: int | None) -> None:
        self._lock = threading.Lock()
        self._balance = balance
        self.used = 0

    @property
    def remaining(self) -> int | None:
        return None if self._balance is None else self._balance - self.used

    def reserve(self, cost: int) -> bool:
        with self._lock:
            if self._balance is not None and self._balance - self.used < cost:
                return False
            self.used += cost
            return True

    def refund(self, cost: int) -> None:
        with self._lock:
            self.used -= cost


@dataclass(frozen=True, slots=True)
class UpstreamPage:
    """What the target answered: final URL after redirects, status, headers and body."""

    url: str
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    text: str
    elapsed_ms: float
    fetched_at: datetime

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    @property
    def content_type(self) -> str:
        return self.header("content-type") or ""

    @property
    def is_html(self) -> bool:
        return "html" in self.content_type or (
            not self.content_type and self.text.lstrip()[:1] == "<"
        )


RENDERER_HEADER = "x-fake-renderer"
"""Sent upstream by the fake engines that "render JavaScript" (Firecrawl always, Scrapfly with
``render_js``): a client-rendered fake page serves its full content only to them, as a real
browser engine would see it once the page's script has run."""


async def fetch_upstream(
    url: str,
    *,
    transport: httpx.AsyncBaseTransport | None,
    timeout_s: float,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
) -> UpstreamPage:
    """Fetch ``url`` like a scraping engine would. Raises ``httpx.TimeoutException`` and
    ``httpx.TransportError`` for the caller to translate into its vendor's error."""
    started = time.monotonic()
    async with httpx.AsyncClient(
        transport=transport, follow_redirects=True, timeout=timeout_s, trust_env=False
    ) as client:
        response = await client.request(method, url, headers=headers, content=content)
    return UpstreamPage(
        url=str(response.url),
        status=response.status_code,
        reason=response.reason_phrase,
        headers=tuple(response.headers.multi_items()),
        body=response.content,
        text=response.text,
        elapsed_ms=(time.monotonic() - started) * 1000,
        fetched_at=datetime.now(UTC),
    )


def is_valid_target(url: object) -> TypeGuard[str]:
    """An absolute http(s) URL with a host, as both APIs require."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.hostname)


async def linger(request: Request, seconds: float) -> None:
    """Sleep ``seconds``, returning early once the client has hung up."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(0.05, left))
        if await request.is_disconnected():
            return


@dataclass(frozen=True, slots=True)
class PageDigest:
    """A page reduced the way scraping APIs do: metadata, links, markdown, text, clean HTML."""

    metadata: Mapping[str, str]
    links: Sequence[str]
    images: Sequence[str]
    markdown: str
    text: str
    html: str


def digest_page(page: UpstreamPage, *, only_main_content: bool = True) -> PageDigest:
    """Digest an upstream page; a non-HTML body (JSON, text) passes through as its own text."""
    if not page.is_html:
        return PageDigest({}, (), (), page.text, page.text, page.text)
    parser = _Digester(page.url, only_main_content)
    parser.feed(page.text)
    parser.close()
    return parser.result()


_SKIPPED = frozenset({"head", "title", "script", "style", "noscript", "template", "svg", "iframe"})
_BOILERPLATE = frozenset({"nav", "header", "footer", "aside", "form"})
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "source", "wbr", "area", "col"})
_BLOCKS = frozenset({"p", "div", "section", "article", "main", "ul", "ol", "table", "tr", "dl"})


class _Digester(HTMLParser):
    def __init__(self, base_url: str, only_main_content: bool) -> None:
        super().__init__(convert_charrefs=True)
        self._base = base_url
        self._drop = _SKIPPED | (_BOILERPLATE if only_main_content else frozenset())
        self._hidden: list[str] = []  # open tags whose content is dropped
        self._in_title = False
        self._anchors: list[tuple[int, str]] = []  # (markdown position, href)
        self.meta: dict[str, str] = {}
        self.links: list[str] = []
        self.images: list[str] = []
        self.md: list[str] = []
        self.words: list[str] = []
        self.html: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self._collect(tag, values)
        if self._hidden or tag in self._drop:
            if tag not in _VOID:
                self._hidden.append(tag)
            return
        rendered = "".join(f' {key}="{escape(value, quote=True)}"' for key, value in values.items())
        self.html.append(f"<{tag}{rendered}>")
        self._open_markdown(tag, values)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if self._hidden:
            if tag in self._hidden:  # also closes dropped children left unclosed (<li>, <p>)
                del self._hidden[len(self._hidden) - 1 - self._hidden[::-1].index(tag) :]
            return
        if tag not in _VOID:
            self.html.append(f"</{tag}>")
        self._close_markdown(tag)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.meta["title"] = self.meta.get("title", "") + data.strip()
        if self._hidden:
            return
        self.html.append(escape(data, quote=False))
        words = data.split()
        if words:
            self.words.extend(words)
            lead = " " if data[:1].isspace() and self.md and not self.md[-1].endswith("\n") else ""
            trail = " " if data[-1:].isspace() else ""
            self.md.append(lead + " ".join(words) + trail)

    def _collect(self, tag: str, attrs: Mapping[str, str]) -> None:
        if tag == "html" and attrs.get("lang"):
            self.meta["language"] = attrs["lang"]
        elif tag == "title":
            self._in_title = True
        elif tag == "meta":
            self._collect_meta(attrs)
        elif tag == "a" and attrs.get("href"):
            _add_url(self.links, urljoin(self._base, attrs["href"]))
        elif tag == "img" and attrs.get("src"):
            _add_url(self.images, urljoin(self._base, attrs["src"]))

    def _collect_meta(self, attrs: Mapping[str, str]) -> None:
        key = (attrs.get("property") or attrs.get("name") or "").lower()
        content = attrs.get("content")
        if content is None:
            return
        if key in ("description", "keywords", "robots"):
            self.meta[key] = content
        elif key.startswith("og:"):
            self.meta["og" + "".join(part.capitalize() for part in key[3:].split("_"))] = content

    def _open_markdown(self, tag: str, attrs: Mapping[str, str]) -> None:
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.md.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.md.append("\n- ")
        elif tag == "br":
            self.md.append("\n")
        elif tag in _BLOCKS:
            self.md.append("\n\n")
        elif tag == "a":
            self._anchors.append((len(self.md), urljoin(self._base, attrs.get("href", ""))))
        elif tag == "img" and attrs.get("src"):
            self.md.append(f"![{attrs.get('alt', '')}]({urljoin(self._base, attrs['src'])})")

    def _close_markdown(self, tag: str) -> None:
        if tag == "a" and self._anchors:
            start, href = self._anchors.pop()
            label = "".join(self.md[start:]).strip()
            self.md[start:] = [f" [{label}]({href}) " if href else label]
        elif tag in _BLOCKS or (len(tag) == 2 and tag[0] == "h" and tag[1] in "123456"):
            self.md.append("\n\n")

    def result(self) -> PageDigest:
        lines = (line.strip() for line in "".join(self.md).splitlines())
        markdown = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
        markdown = re.sub(r"[ \t]{2,}", " ", markdown)
        return PageDigest(
            metadata=dict(self.meta),
            links=tuple(self.links),
            images=tuple(self.images),
            markdown=markdown,
            text=" ".join(self.words),
            html="".join(self.html).strip(),
        )


def _add_url(seen: list[str], url: str) -> None:
    if urlsplit(url).scheme in ("http", "https") and url not in seen:
        seen.append(url)
