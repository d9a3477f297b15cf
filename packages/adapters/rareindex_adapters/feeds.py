"""RSS 0.9x/1.0/2.0, Atom and JSON Feed 1.0/1.1 to :class:`NewsItem` records (feedparser for the
XML formats), and Google Merchant product feeds to :class:`Listing` records.

* Every entry ends up in exactly one of ``FeedResult.items`` or ``FeedResult.rejected``. An entry
  with no date is **rejected** (``missing_field`` at ``published``), not given the fetch time: a
  made-up date would put old news at the top of the timeline. An unparseable date is
  ``invalid_value``; a second entry with an id already seen is ``invalid_value`` too.
* ``published_at`` is ``published`` (RSS ``pubDate``, Atom ``published``), else ``updated``, in UTC.
* An entry's link is its ``rel="alternate"`` link (RSS ``<link>``, or a permalink ``<guid>``),
  else its ``rel="self"`` link. An id that is not a URL (Atom's ``urn:uuid:…``) is never taken as
  the link: it stays the ``external_id``, and an entry with no link at all is rejected
  (``missing_field`` at ``link``).
* JSON Feed (``{"version": "https://jsonfeed.org/version/1.1", "items": [...]}``) follows the same
  rules with its own field names (``url``, ``date_published``, ``content_text`` …).
* An RSS or Atom entry with Merchant Center fields (``g:id``, ``g:price``, ``g:gtin``,
  ``g:availability``, ``g:condition``) is a product: it becomes a :class:`Listing` in
  ``FeedResult.listings`` and needs no date. ``currency`` is used only for a ``g:price`` written
  without an ISO code.
* A Merchant Center product feed as the **TSV or CSV file** merchants upload (header row
  ``id<TAB>title<TAB>…<TAB>price``, ``price`` as ``15.00 USD``) is read the same way, row by row,
  into listings (``FeedResult.version`` ``merchant-tsv`` or ``merchant-csv``). Only a header
  with Merchant's columns (``id``, ``title``, ``link``, ``price`` and one of ``availability``,
  ``image_link``, ``condition``: :func:`looks_like_merchant_table`) makes a file one; other CSVs
  are not feeds.
* Titles and summaries are plain text: feed HTML is stripped with selectolax and whitespace folded.
* Bozo feeds (not well-formed, but readable by feedparser's lenient parser) are read, and
  ``FeedResult.bozo`` says what was wrong. A payload that is not a feed at all (no feed version and
  no entries: HTML, JSON that is not a JSON Feed, garbage) raises ``ParseError(unexpected_shape)``.
* Safety: the payload goes to feedparser as a stream, never as a string (feedparser would treat a
  string as a URL to fetch or a file name to open). An internal DTD subset declaring entities is
  refused before parsing (billion laughs, XXE); expat fetches no external DTD.

Example:
    >>> result = parse_feed(b'<rss version="2.0"><channel><item>'
    ...     b'<title>New &lt;b&gt;record&lt;/b&gt;</title><link>https://news.example/1</link>'
    ...     b'<pubDate>Tue, 10 Jun 2025 04:00:00 GMT</pubDate></item><item><title>Undated</title>'
    ...     b'<link>https://news.example/2</link></item></channel></rss>')
    >>> [i.title for i in result.items], [r.field for r in result.rejected]
    (['New record'], ['published'])
"""

from __future__ import annotations

import calendar
import importlib.util
import io
import xml.parsers.expat
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import feedparser
from selectolax.lexbor import LexborHTMLParser

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Listing, NewsItem, parse_normalized

from . import _jsonfeed, _merchant, _merchant_table
from ._merchant_table import looks_like_merchant_table
from ._rejected import Rejected

__all__ = ["MAX_FEED_BYTES", "FeedResult", "looks_like_merchant_table", "parse_feed"]

MAX_FEED_BYTES = 16 * 1024 * 1024
"""Feeds larger than this are refused (``too_large``); real feeds are well under 1 MB."""

# feedparser asks xml.sax for its preferred parser (drv_libxml2) before expat on every parse, and
# a module that is not installed is searched for along sys.path each time: a quarter of the CPU
# of a one-entry feed. The preferred parsers that cannot be imported are dropped once, here; the
# parser used is the same (expat, unless drv_libxml2 is installed).
feedparser.api.PREFERRED_XML_PARSERS = [
    name for name in feedparser.api.PREFERRED_XML_PARSERS if importlib.util.find_spec(name)
]


@dataclass(frozen=True, slots=True)
class FeedResult:
    """A parsed feed: every entry is in ``items``, ``listings`` or ``rejected``, in feed order."""

    items: tuple[NewsItem, ...]
    rejected: tuple[Rejected, ...]
    version: str
    """feedparser's name for the format: ``rss20``, ``atom10``, ``rss10`` …; ``json10`` and
    ``json11`` for JSON Feed."""
    title: str | None = None
    bozo: str | None = None
    """Why the feed was not well-formed, when it was read anyway."""
    listings: tuple[Listing, ...] = ()
    """Merchant Center product entries (``g:price`` …), as listings."""


class _PrologRead(Exception):
    """The root element started: the DTD, if any, is behind us."""


def _refuse_entity_declarations(data: bytes) -> None:
    """Parse up to the root element with expat and refuse any entity declaration."""

    def on_entity(name: str, *_: object) -> None:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            f"entity declaration {name!r} refused (entity expansion / XXE)",
            snippet=data[:200].decode("utf-8", "replace"),
        )

    def on_start(*_: object) -> None:
        raise _PrologRead

    parser = xml.parsers.expat.ParserCreate()
    parser.EntityDeclHandler = on_entity
    parser.UnparsedEntityDeclHandler = on_entity
    parser.StartElementHandler = on_start
    try:
        parser.Parse(data, True)
    except (_PrologRead, xml.parsers.expat.ExpatError):
        # An XML error before the root leaves the file to feedparser's lenient parser, which
        # does not expand declared entities.
        return


def _plain(html: str) -> str:
    if "<" not in html and "&" not in html:
        return " ".join(html.split())
    return " ".join(LexborHTMLParser(html).text(separator=" ").split())


def _text(entry: dict[str, Any], key: str) -> str:
    """An entry's text field as plain text; HTML only when the feed says it is HTML."""
    value = str(_raw(entry, key) or "")
    if (_raw(entry, f"{key}_detail") or {}).get("type", "text/html") == "text/plain":
        return " ".join(value.split())
    return _plain(value)


def _raw(entry: dict[str, Any], key: str) -> Any:
    """``entry[key]`` as feedparser stored it. ``FeedParserDict.get("updated…")`` would fall back
    to ``published…`` with a DeprecationWarning (feedparser issue 310); plain ``dict.get`` reads
    the stored key and warns about nothing."""
    return dict.get(entry, key)


def _published(entry: dict[str, Any]) -> datetime:
    for key in ("published", "updated"):
        parsed = _raw(entry, f"{key}_parsed")
        if parsed is not None:
            year, month, day, hour, minute, second = parsed[:6]
            # struct_time allows leap seconds (60, 61); datetime does not
            return datetime(year, month, day, hour, minute, min(second, 59), tzinfo=UTC)
    raw = _raw(entry, "published") or _raw(entry, "updated")
    if raw:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "date is not one feedparser reads",
            field="published",
            snippet=str(raw),
        )
    raise ParseError(ParseReason.MISSING_FIELD, "entry has no date", field="published")


def _dated(entry: dict[str, Any]) -> datetime | None:
    """An entry's (or the feed's) ``updated``, else ``published``, in UTC; None without one."""
    for key in ("updated_parsed", "published_parsed"):
        value = dict.get(entry, key)
        if value is not None:
            return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    return None


def _is_web_url(link: object) -> bool:
    parts = urlsplit(str(link or ""))
    return parts.scheme in {"http", "https"} and bool(parts.netloc)


def _link(entry: dict[str, Any]) -> str | None:
    """The entry's page: its alternate link (feedparser's ``link``, which for RSS may be a
    permalink guid), else its ``rel="self"`` link. feedparser also puts an Atom ``id`` such as
    ``urn:uuid:…`` into ``link`` when the entry has no alternate link: that is not a page."""
    by_rel: dict[str, str] = {}
    for link in _raw(entry, "links") or ():
        if link.get("href"):
            by_rel.setdefault(link.get("rel") or "alternate", str(link["href"]))
    link = by_rel.get("alternate") or _raw(entry, "link")
    if link and link == _raw(entry, "id") and not _is_web_url(link):
        link = None  # the id feedparser copied, not a link the entry states
    return str(link) if link else by_rel.get("self")


def _url(entry: dict[str, Any]) -> str:
    link = _link(entry)
    if not link:
        entry_id = _raw(entry, "id")
        also = f" (its id {entry_id} is not a URL)" if entry_id else ""
        raise ParseError(
            ParseReason.MISSING_FIELD, f"entry has no alternate or self link{also}", field="link"
        )
    if not _is_web_url(link):
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "link is not an absolute http(s) URL (pass base_url)",
            field="link",
            snippet=link,
        )
    return link


def _item(entry: dict[str, Any]) -> NewsItem:
    title = _text(entry, "title")
    if not title:
        raise ParseError(ParseReason.MISSING_FIELD, "entry has no title", field="title")
    url = _url(entry)
    summary = _text(entry, "summary") or None
    record = parse_normalized(
        {
            "kind": "news_item",
            "external_id": _raw(entry, "id") or url,
            "title": title,
            "url": url,
            "published_at": _published(entry),
            "summary": summary,
            "author": (_raw(entry, "author") or "").strip() or None,
            "categories": tuple(t["term"] for t in _raw(entry, "tags") or () if t.get("term")),
        }
    )
    if not isinstance(record, NewsItem):  # pragma: no cover - kind is fixed above
        raise TypeError(type(record).__name__)
    return record


def _plain_html(html: str) -> str:
    return _plain(html)


def parse_feed(
    data: bytes,
    *,
    base_url: str | None = None,
    currency: str | None = None,
    fetched_at: datetime | None = None,
) -> FeedResult:
    """Parse an RSS, Atom or JSON Feed document into news items, listings and rejected entries.

    Args:
        data: the feed body, as fetched.
        base_url: the feed's URL, to resolve relative links (``<link href="/news/1"/>``).
        currency: for Merchant ``g:price`` values written without an ISO code.
        fetched_at: when the feed was fetched (``RawRecord.fetched_at``): a Merchant
            ``g:sale_price`` limited by ``g:sale_price_effective_date`` is the price only when
            this time is inside the interval. None: the item's date, else the feed's; with none
            of them the regular ``g:price`` stands (the adapter reads no clock).

    Raises:
        ParseError: ``empty_payload``, ``too_large``, ``invalid_json`` (a broken JSON Feed), or
            ``unexpected_shape`` for a payload that is not a feed or declares entities.
    """
    if not data.strip():
        raise ParseError(ParseReason.EMPTY_PAYLOAD, "empty feed")
    if len(data) > MAX_FEED_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"feed is {len(data)} bytes")
    if _jsonfeed.looks_like_json_feed(data):
        version, title, raw_items = _jsonfeed.read_json_feed(data)
        return _collect(
            raw_items,
            lambda item: _jsonfeed.news_item(item, base_url, _plain_html),
            lambda item: (
                str(item.get("title") or item.get("url") or "") or None
                if isinstance(item, dict)
                else None
            ),
            version=version,
            title=title,
        )
    if looks_like_merchant_table(data):  # the TSV or CSV files merchants upload
        version, entries = _merchant_table.rows(data)
        return _collect(
            entries,
            lambda entry: _merchant.listing(
                entry, _merchant_table.PREFIX, link=None, currency=currency, at=fetched_at
            ),
            lambda entry: dict.get(entry, "g_title") or dict.get(entry, "g_id"),
            version=version,
            title=None,
        )
    _refuse_entity_declarations(data)
    headers = {"content-type": "application/xml"}
    if base_url:
        headers["content-location"] = base_url
    parsed = feedparser.parse(io.BytesIO(data), response_headers=headers)
    bozo = parsed.get("bozo_exception") if parsed.get("bozo") else None
    version = parsed.get("version") or ""
    entries = parsed.get("entries") or []
    if not version and not entries:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            f"not an RSS, Atom or JSON feed, nor a Merchant TSV/CSV product feed (a header with"
            f" id, title, link, price and availability, image_link or condition)"
            f" ({bozo or 'no feed elements'})",
            snippet=data[:200].decode("utf-8", "replace"),
        )
    prefix = _merchant.merchant_prefix(dict(parsed.get("namespaces") or {}))
    feed_date = _dated(_raw(parsed, "feed") or {})

    def read(entry: dict[str, Any]) -> NewsItem | Listing:
        if _merchant.is_product(entry, prefix):
            assert prefix is not None  # is_product says so
            at = fetched_at or _dated(entry) or feed_date
            return _merchant.listing(entry, prefix, link=_link(entry), currency=currency, at=at)
        return _item(entry)

    return _collect(
        entries,
        read,
        lambda entry: _raw(entry, "title") or _raw(entry, "link"),
        version=version,
        title=_text(_raw(parsed, "feed") or {}, "title") or None,
        bozo=str(bozo) if bozo else None,
    )


def _collect(
    entries: list[Any],
    read: Callable[[Any], NewsItem | Listing],
    snippet_of: Callable[[Any], str | None],
    *,
    version: str,
    title: str | None,
    bozo: str | None = None,
) -> FeedResult:
    """Every entry read, or rejected with the reason; a repeated id is rejected too."""
    items: list[NewsItem] = []
    listings: list[Listing] = []
    rejected: list[Rejected] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        where = f"entry {index}"
        try:
            record = read(entry)
        except ParseError as exc:
            rejection = Rejected.from_error(exc, where=where)
            if rejection.snippet is None:  # show the operator which entry it was
                rejection = replace(rejection, snippet=snippet_of(entry))
            rejected.append(rejection)
            continue
        if record.external_id in seen:
            rejected.append(
                Rejected(
                    ParseReason.INVALID_VALUE,
                    "duplicate entry id",
                    where=where,
                    field="id",
                    snippet=record.external_id,
                )
            )
            continue
        seen.add(record.external_id)
        if isinstance(record, Listing):
            listings.append(record)
        else:
            items.append(record)
    return FeedResult(
        items=tuple(items),
        rejected=tuple(rejected),
        version=version,
        title=title,
        bozo=bozo,
        listings=tuple(listings),
    )
