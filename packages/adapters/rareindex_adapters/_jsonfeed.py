"""JSON Feed 1.0 and 1.1 (https://jsonfeed.org/version/1.1) items to :class:`NewsItem` records.
Private to ``feeds``, which keeps every item in ``items`` or ``rejected`` as it does for RSS.

An item's URL is ``url``, else ``external_url``; its date ``date_published``, else
``date_modified`` (RFC 3339, and an offset is required); its summary ``summary``, else
``content_text``, else ``content_html`` as plain text; its author the first of ``authors``
(1.1) or ``author`` (1.0). ``id`` is required by the spec and becomes ``external_id``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import NewsItem, parse_normalized

__all__ = ["JsonFeed", "looks_like_json_feed", "news_item", "read_json_feed"]

_VERSIONS = {
    "https://jsonfeed.org/version/1": "json10",
    "https://jsonfeed.org/version/1.1": "json11",
}


def looks_like_json_feed(data: bytes) -> bool:
    """A JSON object naming a jsonfeed.org version near its top (the spec puts it first)."""
    head = data[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    return head.startswith(b"{") and b"jsonfeed.org/version/" in head.replace(b"\\/", b"/")


JsonFeed = tuple[str, str | None, list[Any]]
"""``(version, title, items)``: ``json10``/``json11``, the feed's title, its raw items."""


def read_json_feed(data: bytes) -> JsonFeed:
    """The version, title and raw items of a JSON Feed.

    Raises:
        ParseError: ``invalid_json``, or ``unexpected_shape`` for an unknown version or
            ``items`` that is not a list.
    """
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(
            ParseReason.INVALID_JSON,
            f"JSON Feed: {exc}",
            snippet=data[:200].decode("utf-8", "replace"),
        ) from None
    if not isinstance(document, dict):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "JSON Feed is not an object")
    raw_version = str(document.get("version") or "").replace("http://", "https://", 1)
    version = _VERSIONS.get(raw_version.rstrip("/"))
    if version is None:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            "not a JSON Feed version this adapter reads (1 or 1.1)",
            field="version",
            snippet=str(document.get("version")),
        )
    items = document.get("items")
    if not isinstance(items, list):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "JSON Feed has no items list", field="items")
    title = document.get("title")
    return version, " ".join(title.split()) if isinstance(title, str) else None, items


def _text(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    return " ".join(value.split()) or None if isinstance(value, str) else None


def _date(item: dict[str, Any]) -> datetime:
    for key in ("date_published", "date_modified"):
        raw = item.get(key)
        if raw in (None, ""):
            continue
        try:
            stamp = datetime.fromisoformat(str(raw))
        except ValueError:
            stamp = None
        if stamp is None or stamp.utcoffset() is None:
            raise ParseError(
                ParseReason.INVALID_VALUE,
                "date is not RFC 3339 with an offset",
                field=key,
                snippet=str(raw),
            )
        return stamp.astimezone(UTC)
    raise ParseError(ParseReason.MISSING_FIELD, "item has no date", field="date_published")


def _author(item: dict[str, Any]) -> str | None:
    authors = item.get("authors")
    first = authors[0] if isinstance(authors, list) and authors else item.get("author")
    return _text(first, "name") if isinstance(first, dict) else None


def news_item(item: Any, base_url: str | None, plain: Callable[[str], str]) -> NewsItem:
    """One JSON Feed item as a :class:`NewsItem`; ``plain`` turns ``content_html`` into text.

    Raises:
        ParseError: the field to blame in ``field`` (``id``, ``url``, ``title``,
            ``date_published`` …).
    """
    if not isinstance(item, dict):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "item is not an object", snippet=repr(item))
    item_id = item.get("id")
    if item_id in (None, "") or isinstance(item_id, dict | list | bool):
        raise ParseError(ParseReason.MISSING_FIELD, "item has no id", field="id")
    title = _text(item, "title")
    if title is None:
        raise ParseError(ParseReason.MISSING_FIELD, "item has no title", field="title")
    link = _text(item, "url") or _text(item, "external_url")
    if link is None:
        raise ParseError(ParseReason.MISSING_FIELD, "item has no url", field="url")
    url = urljoin(base_url, link) if base_url else link
    if not url.startswith(("http://", "https://")):
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "url is not an absolute http(s) URL (pass base_url)",
            field="url",
            snippet=link,
        )
    html = item.get("content_html")
    summary = (
        _text(item, "summary")
        or _text(item, "content_text")
        or (plain(html) or None if isinstance(html, str) else None)
    )
    tags = item.get("tags")
    record = parse_normalized(
        {
            "kind": "news_item",
            "external_id": str(item_id),
            "title": title,
            "url": url,
            "published_at": _date(item),
            "summary": summary,
            "author": _author(item),
            "categories": tuple(str(t) for t in tags if t) if isinstance(tags, list) else (),
        }
    )
    if not isinstance(record, NewsItem):  # pragma: no cover - kind is fixed above
        raise TypeError(type(record).__name__)
    return record
