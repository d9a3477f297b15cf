"""RSS 0.9x/1.0/2.0 and Atom feeds to :class:`NewsItem` records, on feedparser.

* Every entry ends up in exactly one of ``FeedResult.items`` or ``FeedResult.rejected``. An entry
  with no date is **rejected** (``missing_field`` at ``published``), not given the fetch time: a
  made-up date would put old news at the top of the timeline. An unparseable date is
  ``invalid_value``; a second entry with an id already seen is ``invalid_value`` too.
* ``published_at`` is ``published`` (RSS ``pubDate``, Atom ``published``), else ``updated``, in UTC.
* Titles and summaries are plain text: feed HTML is stripped with selectolax and whitespace folded.
* Bozo feeds (not well-formed, but readable by feedparser's lenient parser) are read, and
  ``FeedResult.bozo`` says what was wrong. A payload that is not a feed at all (no feed version and
  no entries: HTML, JSON, garbage) raises ``ParseError(unexpected_shape)``.
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

import io
import xml.parsers.expat
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import feedparser
from selectolax.lexbor import LexborHTMLParser

from .._errors import ParseError, ParseReason
from .._normalized import NewsItem, parse_normalized
from ._rejected import Rejected

__all__ = ["MAX_FEED_BYTES", "FeedResult", "parse_feed"]

MAX_FEED_BYTES = 16 * 1024 * 1024
"""Feeds larger than this are refused (``too_large``); real feeds are well under 1 MB."""


@dataclass(frozen=True, slots=True)
class FeedResult:
    """A parsed feed: every entry is in ``items`` or in ``rejected``, in feed order."""

    items: tuple[NewsItem, ...]
    rejected: tuple[Rejected, ...]
    version: str
    """feedparser's name for the format: ``rss20``, ``atom10``, ``rss10`` …"""
    title: str | None = None
    bozo: str | None = None
    """Why the feed was not well-formed, when it was read anyway."""


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


def _url(entry: dict[str, Any]) -> str:
    link = _raw(entry, "link") or (_raw(entry, "id") if _raw(entry, "guidislink") else None)
    if not link:
        raise ParseError(ParseReason.MISSING_FIELD, "entry has no link", field="link")
    parts = urlsplit(link)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "link is not an absolute http(s) URL (pass base_url)",
            field="link",
            snippet=link,
        )
    return str(link)


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


def parse_feed(data: bytes, *, base_url: str | None = None) -> FeedResult:
    """Parse an RSS or Atom document into news items and rejected entries.

    Args:
        data: the feed body, as fetched.
        base_url: the feed's URL, to resolve relative links (``<link href="/news/1"/>``).

    Raises:
        ParseError: ``empty_payload``, ``too_large``, or ``unexpected_shape`` for a payload that
            is not a feed or declares entities.
    """
    if not data.strip():
        raise ParseError(ParseReason.EMPTY_PAYLOAD, "empty feed")
    if len(data) > MAX_FEED_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"feed is {len(data)} bytes")
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
            f"not an RSS or Atom feed ({bozo or 'no feed elements'})",
            snippet=data[:200].decode("utf-8", "replace"),
        )
    items: list[NewsItem] = []
    rejected: list[Rejected] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        where = f"entry {index}"
        try:
            item = _item(entry)
        except ParseError as exc:
            rejection = Rejected.from_error(exc, where=where)
            if rejection.snippet is None:  # show the operator which entry it was
                rejection = replace(rejection, snippet=_raw(entry, "title") or _raw(entry, "link"))
            rejected.append(rejection)
            continue
        if item.external_id in seen:
            rejected.append(
                Rejected(
                    ParseReason.INVALID_VALUE,
                    "duplicate entry id",
                    where=where,
                    field="id",
                    snippet=item.external_id,
                )
            )
            continue
        seen.add(item.external_id)
        items.append(item)
    title = _text(_raw(parsed, "feed") or {}, "title") or None
    return FeedResult(
        items=tuple(items),
        rejected=tuple(rejected),
        version=version,
        title=title,
        bozo=str(bozo) if bozo else None,
    )
