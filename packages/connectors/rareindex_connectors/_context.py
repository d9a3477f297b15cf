"""What a running connector gets from the SDK: :class:`CrawlContext`.

The context hands a connector the router (``fetch``), its cursor, a progress callback, a bound
logger and the run's options. A connector never stores state anywhere else: the crawler commits
``ctx.cursor`` in the same transaction as the records yielded before ``set_cursor()`` was called,
so a crash re-fetches, never skips.

Example:
    >>> import asyncio
    >>> async def fetch(url, **kw):
    ...     return FetchResult(url=url, status=200, content=b'{"ok": true}', engine="api")
    >>> ctx = CrawlContext(connector_id="demo", fetch=fetch, cursor={"page": 3})
    >>> asyncio.run(ctx.fetch("https://x.example/p.json")).json()
    {'ok': True}
    >>> ctx.set_cursor({"page": 4}); ctx.cursor
    {'page': 4}
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlencode

import orjson
import structlog
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue

from ._raw import EngineName
from .errors import ParseError, ParseReason, PermanentFetchError, json_failure

if TYPE_CHECKING:
    from ._robots_rules import RobotsRules

__all__ = [
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "FetchResult",
    "Fetcher",
    "Progress",
    "ResponseKind",
]

CrawlMode = Literal["incremental", "backfill"]
ResponseKind = Literal["json", "text", "binary"]
Cursor = dict[str, JsonValue]


class CrawlOptions(BaseModel):
    """How this run should crawl: incremental (new since the cursor) or a backfill slice."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: CrawlMode = "incremental"
    since: AwareDatetime | None = None
    max_pages: int | None = Field(default=None, ge=1)
    deadline: AwareDatetime | None = None


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One response, whichever engine produced it."""

    url: str
    status: int
    content: bytes
    engine: EngineName
    headers: Mapping[str, str] = field(default_factory=dict)
    elapsed_ms: int = 0
    not_modified: bool = False
    credits: float = 0.0

    @property
    def text(self) -> str:
        """The body decoded as UTF-8, undecodable bytes replaced."""
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON.

        Raises:
            ParseError: ``truncated`` (the body ends mid-document), ``encoding_error`` (not
                UTF-8), ``too_deep`` (nested past 1,024 levels), ``invalid_json``, or
                ``empty_payload``, with a snippet of the body.
        """
        if not self.content.strip():
            raise ParseError(ParseReason.EMPTY_PAYLOAD, f"empty body from {self.url}")
        try:
            # ~3x json.loads on a product page; a UTF-8 BOM is allowed, as json.loads allows it
            return orjson.loads(self.content.removeprefix(b"\xef\xbb\xbf"))
        except (UnicodeDecodeError, json.JSONDecodeError):  # orjson's is a subclass
            reason, message = json_failure(self.content)
            raise ParseError(reason, f"{self.url}: {message}", snippet=self.text) from None


class Fetcher(Protocol):
    """The router's call signature, as connectors see it."""

    async def __call__(
        self,
        url: str,
        *,
        expect: ResponseKind = "text",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        conditional: bool = False,
    ) -> FetchResult: ...


def _always(url: str) -> bool:
    return True


def _never(url: str) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Progress:
    """What a connector reports about a long crawl; shown live and stored on the backfill."""

    pages: int = 0
    items: int = 0
    total_pages: int | None = None
    reached_date: datetime | None = None


def _ignore_progress(progress: Progress) -> None:
    return None


@dataclass(slots=True)
class CrawlContext:
    """Everything a connector may use while it runs. Built by the crawler, one per run."""

    connector_id: str
    fetch: Fetcher
    options: CrawlOptions = field(default_factory=CrawlOptions)
    cursor: Cursor | None = None
    on_progress: Callable[[Progress], None] = _ignore_progress
    log: Any = None
    due: Callable[[str], bool] = _always
    robots_source: Callable[[str], Awaitable[RobotsRules]] | None = None
    """The router's robots.txt cache (the crawler sets it); None: read through ``fetch``."""
    known: Callable[[str], bool] = _never
    """Whether the budget store holds a URL from a conditional fetch before (the crawler sets
    it)."""
    skipped: int = 0
    """Detail pages the connector skipped because :meth:`should_fetch` said they were not due."""
    on_cursor: Callable[[], None] | None = None
    """Called after each :meth:`set_cursor` (the crawler sets it: what was fetched before a
    cursor is committed with it, so a 304 never stands for records that were not stored)."""

    def __post_init__(self) -> None:
        self.cursor = copy.deepcopy(self.cursor)
        if self.log is None:
            self.log = structlog.get_logger("rareindex_connectors").bind(
                connector=self.connector_id
            )

    def set_cursor(self, cursor: Cursor) -> None:
        """Record how far the crawl got. Committed with the records yielded before this call."""
        self.cursor = copy.deepcopy(cursor)  # later mutation by the connector must not leak in
        if self.on_cursor is not None:
            self.on_cursor()

    def should_fetch(self, url: str) -> bool:
        """Whether ``url`` is due again, by the budget store's estimate of how often it changes
        (pages that never change are revisited less and less often, changing ones more). Use it
        for detail pages; fetch them with ``conditional=True`` so a 304 is a cheap "unchanged"
        and the estimate learns from every visit. A ``False`` is counted in the run
        (``skipped``)."""
        if self.due(url):
            return True
        self.skipped += 1
        return False

    def fetched_before(self, url: str, params: Mapping[str, str | int] | None = None) -> bool:
        """Whether a conditional fetch of ``url`` (with ``params``) was made before (an earlier
        run, or earlier in this one), so a 304 now means "as then". A pager answered 304 goes
        on to its next page only if that page was fetched before too: else the last walk
        stopped at this page, and so does this one."""
        return self.known(f"{url}?{urlencode(sorted(params.items()))}" if params else url)

    async def robots(self, url: str) -> RobotsRules:
        """The robots.txt rules of ``url``'s origin: its sitemaps, for connectors that discover
        URLs from them. The router already refuses disallowed URLs and applies ``Crawl-delay``
        on every fetch; this read is served from the same cache."""
        if self.robots_source is not None:
            return await self.robots_source(url)
        from urllib.parse import urlsplit

        from ._robots_rules import RobotsRules

        parts = urlsplit(url)
        try:
            result = await self.fetch(f"{parts.scheme}://{parts.netloc}/robots.txt")
        except PermanentFetchError as exc:  # 404: allow all; 401/403: disallow all
            return RobotsRules.from_status(exc.status or 404)
        return RobotsRules.from_status(result.status, result.content)

    def progress(
        self,
        *,
        pages: int = 0,
        items: int = 0,
        total_pages: int | None = None,
        reached_date: datetime | None = None,
    ) -> None:
        """Report progress; the CLI shows it with rate and ETA, backfills store it."""
        self.on_progress(Progress(pages, items, total_pages, reached_date))
