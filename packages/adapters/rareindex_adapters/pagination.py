"""An async pagination loop with safety nets, for any paged source.

:func:`paginate` asks ``fetch_page`` for one :class:`PageRequest` after another. A strategy
(:class:`PageNumber`, :class:`Offset`, :class:`Cursor`, :class:`LinkHeader`) builds the next
request, and an extractor (``FetchResult -> Extracted``) reads a page's items and the source's own
signals: ``has_more``, ``total`` (items), ``total_pages``, a cursor or a next URL.

After each fetch the loop decides, **in this order** (the first rule that fires names the reason in
the ``pagination.stopped`` log event, and the later rules are not consulted):

1. ``repeated_page`` — the page's items (canonical JSON; the body bytes when the items are not
   JSON) hash like a page already seen in this run. The page is *not* yielded: a source that loops
   (``page=999`` served as the last page again) would otherwise be crawled forever.
2. ``empty_page`` — no items. Always stops, even when ``has_more`` says ``True``; nothing is
   yielded. (Shopify's storefront ends this way.)
3. the page is yielded, then:
4. ``has_more_false`` — the source said ``has_more=False``. An explicit "done" beats any total.
5. ``total_reached`` — a known total is reached (items up to this page ≥ ``total``, or this page
   ≥ ``total_pages``), **even when** ``has_more`` says ``True``: counts are harder to get wrong than
   a flag, and stopping early loses one page at most while looping loses the crawl.
6. ``no_next`` — the strategy has no next request (no cursor, no ``Link: rel="next"``).
7. ``max_pages`` — ``max_pages`` pages were yielded. Checked last, so a run that ended exactly at
   the cap because the source was done reports the source's reason, and ``max_pages`` always means
   "there was more" (logged at warning level, as is ``repeated_page``).

Positions are the source's when the strategy knows them (the ``page`` parameter, the ``offset``),
so a run resumed at ``page=7`` compares ``total_pages`` with 7, not with 1.

Example:
    >>> pages = paginate(fetch, start="https://shop.example/products.json",   # doctest: +SKIP
    ...                  strategy=PageNumber(), extract=json_items("products"), max_pages=100)
    >>> async for page in pages:                                     # doctest: +SKIP
    ...     handle(page.items); ctx.set_cursor({"page": page.request.params["page"]})
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol
from urllib.parse import urljoin

import structlog

from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import content_hash

__all__ = [
    "Cursor",
    "Extracted",
    "Extractor",
    "LinkHeader",
    "Offset",
    "Page",
    "PageNumber",
    "PageRequest",
    "StopReason",
    "Strategy",
    "header_value",
    "json_items",
    "paginate",
    "parse_link_header",
]

log = structlog.get_logger(__name__)

StopReason = Literal[
    "repeated_page", "empty_page", "has_more_false", "total_reached", "no_next", "max_pages"
]


@dataclass(frozen=True, slots=True)
class PageRequest:
    """What to fetch: a URL and its query parameters."""

    url: str
    params: Mapping[str, str | int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Extracted:
    """What an extractor read from one page. ``None`` means the source did not say."""

    items: Sequence[Any]
    has_more: bool | None = None
    total: int | None = None
    total_pages: int | None = None
    next_cursor: str | None = None
    next_url: str | None = None


Extractor = Callable[[FetchResult], Extracted]


@dataclass(frozen=True, slots=True)
class Page:
    """One yielded page. ``number`` counts pages yielded in this run, from 1."""

    number: int
    request: PageRequest
    result: FetchResult
    items: tuple[Any, ...]
    has_more: bool | None
    total: int | None
    total_pages: int | None
    next_request: PageRequest | None
    """The request for the following page; ``None`` on the last page. Store it as the cursor."""


class Strategy(Protocol):
    """How one request leads to the next."""

    def first(self, start: PageRequest) -> PageRequest: ...

    def next(
        self, request: PageRequest, page: Extracted, result: FetchResult
    ) -> PageRequest | None: ...

    def position(self, request: PageRequest) -> tuple[int | None, int | None]:
        """``(page index from 1, item offset from 0)`` in the source, where known."""
        ...


def _with(request: PageRequest, name: str, value: str | int) -> PageRequest:
    return replace(request, params={**request.params, name: value})


def _int_param(request: PageRequest, name: str) -> int:
    value = request.params[name]
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        return int(value)
    raise ValueError(f"{name}={value!r} is not a whole number")


@dataclass(frozen=True, slots=True)
class PageNumber:
    """``?page=1, 2, 3…``. A ``page`` already in the start request resumes from there."""

    param: str = "page"
    first_page: int = 1

    def first(self, start: PageRequest) -> PageRequest:
        return start if self.param in start.params else _with(start, self.param, self.first_page)

    def next(self, request: PageRequest, page: Extracted, result: FetchResult) -> PageRequest:
        return _with(request, self.param, _int_param(request, self.param) + 1)

    def position(self, request: PageRequest) -> tuple[int | None, int | None]:
        return _int_param(request, self.param) - self.first_page + 1, None


@dataclass(frozen=True, slots=True)
class Offset:
    """``?offset=0, n, 2n…``; the step is the number of items the page actually had."""

    param: str = "offset"

    def first(self, start: PageRequest) -> PageRequest:
        return start if self.param in start.params else _with(start, self.param, 0)

    def next(self, request: PageRequest, page: Extracted, result: FetchResult) -> PageRequest:
        return _with(request, self.param, _int_param(request, self.param) + len(page.items))

    def position(self, request: PageRequest) -> tuple[int | None, int | None]:
        return None, _int_param(request, self.param)


@dataclass(frozen=True, slots=True)
class Cursor:
    """``?cursor=<opaque>`` taken from :attr:`Extracted.next_cursor`; none means done."""

    param: str = "cursor"

    def first(self, start: PageRequest) -> PageRequest:
        return start

    def next(
        self, request: PageRequest, page: Extracted, result: FetchResult
    ) -> PageRequest | None:
        return _with(request, self.param, page.next_cursor) if page.next_cursor else None

    def position(self, request: PageRequest) -> tuple[int | None, int | None]:
        return None, None


@dataclass(frozen=True, slots=True)
class LinkHeader:
    """Follow ``Link: <…>; rel="next"`` (or :attr:`Extracted.next_url`), relative URLs resolved."""

    rel: str = "next"

    def first(self, start: PageRequest) -> PageRequest:
        return start

    def next(
        self, request: PageRequest, page: Extracted, result: FetchResult
    ) -> PageRequest | None:
        target = page.next_url or parse_link_header(header_value(result.headers, "Link")).get(
            self.rel
        )
        return PageRequest(urljoin(result.url or request.url, target)) if target else None

    def position(self, request: PageRequest) -> tuple[int | None, int | None]:
        return None, None


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """A header's value, whatever the case of its name in ``headers``."""
    wanted = name.lower()
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


_LINK = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,]+)*)")


def parse_link_header(value: str | None) -> dict[str, str]:
    """``rel → URL`` from an RFC 8288 ``Link`` header (``rel="next prev"`` gives both)."""
    links: dict[str, str] = {}
    for url, params in _LINK.findall(value or ""):
        for param in params.split(";"):
            key, _, raw = param.strip().partition("=")
            if key.strip().lower() == "rel":
                for rel in raw.strip().strip('"').lower().split():
                    links.setdefault(rel, url.strip())
    return links


def json_items(key: str | None = None) -> Extractor:
    """An extractor for a JSON body that is a list, or an object holding one under ``key``.

    Raises (from the extractor):
        ParseError: ``invalid_json``; ``unexpected_shape``/``missing_field``/``invalid_type``
            when the list is not where ``key`` says.
    """

    def extract(result: FetchResult) -> Extracted:
        body = result.json()
        if key is not None:
            if not isinstance(body, dict):
                raise ParseError(ParseReason.UNEXPECTED_SHAPE, "not a JSON object", field=key)
            if key not in body:
                raise ParseError(ParseReason.MISSING_FIELD, f"no {key!r}", field=key)
            body = body[key]
        if not isinstance(body, list):
            raise ParseError(ParseReason.INVALID_TYPE, "not a list", field=key)
        return Extracted(items=body)

    return extract


def _digest(items: Sequence[Any], content: bytes) -> str:
    try:
        return content_hash(list(items))
    except (TypeError, ValueError):  # items that are not JSON: the body has to do
        return hashlib.sha256(content).hexdigest()


def _verdict(
    page: Extracted, position: tuple[int | None, int | None], pages: int, items: int
) -> StopReason | None:
    """Rules 4 and 5: the source's own signals. ``pages``/``items`` count this run so far."""
    index, offset = position
    if page.has_more is False:
        return "has_more_false"
    through = offset + len(page.items) if offset is not None else items
    if page.total is not None and through >= page.total:
        return "total_reached"
    if page.total_pages is not None and (index or pages) >= page.total_pages:
        return "total_reached"
    return None


async def paginate(
    fetch_page: Callable[[PageRequest], Awaitable[FetchResult]],
    *,
    start: str | PageRequest,
    strategy: Strategy,
    extract: Extractor,
    max_pages: int,
) -> AsyncIterator[Page]:
    """Yield pages until the source is done or a safety net trips (see the module docstring).

    Raises:
        ValueError: ``max_pages`` < 1.
        FetchError, ParseError: from ``fetch_page`` and ``extract``, unchanged.
    """
    if max_pages < 1:
        raise ValueError(f"max_pages must be >= 1, got {max_pages}")
    request = strategy.first(start if isinstance(start, PageRequest) else PageRequest(start))
    seen: set[str] = set()
    yielded = items = 0
    while True:
        result = await fetch_page(request)
        page = extract(result)
        digest = _digest(page.items, result.content)
        reason: StopReason | None = None
        if digest in seen:
            reason = "repeated_page"
        elif not page.items:
            reason = "empty_page"
        if reason is not None:
            _stopped(reason, yielded, items, request)
            return
        seen.add(digest)
        yielded += 1
        items += len(page.items)
        position = strategy.position(request)
        reason = _verdict(page, position, yielded, items)
        following = None if reason else strategy.next(request, page, result)
        if reason is None and following is None:
            reason = "no_next"
        if reason is None and yielded >= max_pages:
            reason = "max_pages"
        if reason is not None:
            following = None
            _stopped(reason, yielded, items, request)  # logged before the consumer may stop
        yield Page(
            number=yielded,
            request=request,
            result=result,
            items=tuple(page.items),
            has_more=page.has_more,
            total=page.total,
            total_pages=page.total_pages,
            next_request=following,
        )
        if following is None:
            return
        request = following


def _stopped(reason: StopReason, pages: int, items: int, request: PageRequest) -> None:
    level = log.warning if reason in {"repeated_page", "max_pages"} else log.info
    level(
        "pagination.stopped",
        reason=reason,
        pages=pages,
        records=items,
        url=request.url,
        params=dict(request.params),
    )
