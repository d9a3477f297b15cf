"""What an adapter makes of a document: the connector author's magnifying glass.

:func:`inspect_document` runs the adapter for a document's kind (given, or detected from its
bytes) and returns JSON-ready lines: every extracted record, and every part it could not read
with the reason (adapters fail closed; nothing is silently skipped). ``rareindex inspect`` prints
the lines as JSON lines.

Example:
    >>> result = inspect_document(b'{"products": []}', source="page.json")
    >>> result.kind, result.lines
    ('shopify', [])
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

import rareindex_adapters as adapters
from rareindex_connectors.errors import ParseError, ParseReason  # each adapter loads on first use
from rareindex_connectors.runtime import RobotsRules

__all__ = ["KINDS", "InspectResult", "detect_kind", "inspect_document"]

KINDS = ("shopify", "woocommerce", "html", "pdf", "feed", "sitemap", "robots")


@dataclass(slots=True)
class InspectResult:
    """The detected (or requested) kind and the extracted lines."""

    kind: str
    lines: list[dict[str, Any]] = field(default_factory=list)


_HTML_MARKERS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<meta", b"<script", b"<div")


def _is_json_feed(head: bytes) -> bool:
    """A JSON Feed names its version URL at the top level (``"version":
    "https://jsonfeed.org/version/1.1"``); no store API answers with it."""
    return b"jsonfeed.org/version/" in head.replace(b"\\/", b"/")


def detect_kind(content: bytes, source: str) -> str:
    """Guess a document's kind from its first bytes (and its name for robots.txt).

    Raises:
        ParseError: ``unexpected_shape`` when the bytes look like none of :data:`KINDS` (a CSV
            that is no Merchant product feed, plain text …): guessing "html" there would print
            nothing. A Merchant TSV or CSV product feed (its header has Merchant's columns) is a
            ``feed``.
    """
    head = content[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    lowered = head.lower()
    name = urlsplit(source).path.rsplit("/", 1)[-1].lower() or source.lower()
    if head.startswith(b"%PDF"):
        return "pdf"
    if content[:2] == b"\x1f\x8b" or b"<urlset" in lowered or b"<sitemapindex" in lowered:
        return "sitemap"
    if b"<rss" in lowered or b"<feed" in lowered or b"<rdf:rdf" in lowered:
        return "feed"
    if head.startswith((b"{", b"[")):
        if head.startswith(b"{") and _is_json_feed(head):
            return "feed"
        return "woocommerce" if head.startswith(b"[") or b'"prices"' in head else "shopify"
    from rareindex_adapters.feeds import looks_like_merchant_table

    if looks_like_merchant_table(content):  # a Merchant TSV/CSV product feed: its header says so
        return "feed"
    if (
        name == "robots.txt"
        or lowered.startswith((b"user-agent", b"sitemap:", b"#"))
        or (name.endswith(".txt") and b"user-agent:" in lowered)
    ):
        return "robots"
    if any(marker in lowered for marker in _HTML_MARKERS):
        return "html"
    raise ParseError(
        ParseReason.UNEXPECTED_SHAPE,
        f"matches no adapter: not PDF, a sitemap, an RSS/Atom/JSON feed, a Merchant TSV/CSV"
        f" product feed, JSON, robots.txt or HTML (pass --as one of {', '.join(KINDS)})",
        snippet=head[:200].decode("utf-8", "replace"),
    )


def _dump(kind: str, value: object) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return json.loads(value.model_dump_json())  # type: ignore[no-any-return]
    data = {k: getattr(value, k) for k in getattr(value, "__slots__", ())}
    return {"kind": kind, **json.loads(json.dumps(data, default=_plain))}


def _plain(value: object) -> object:
    """JSON for what adapters return: ISO-8601 times, exact decimals as strings, models."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return json.loads(value.model_dump_json())
    return str(value)


def _rejected(items: object) -> list[dict[str, Any]]:
    return [{"rejected": _dump("rejected", item)} for item in items]  # type: ignore[attr-defined]


def _origin(source: str) -> str:
    parts = urlsplit(source)
    return (
        f"{parts.scheme}://{parts.netloc}"
        if parts.scheme and parts.netloc
        else "https://local.invalid"
    )


def _shopify(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    page = adapters.parse_shopify_products(
        content, base_url=_origin(source), currency=currency or "USD"
    )
    return [_dump("listing", r) for r in page.listings] + [
        {"note": _dump("note", n)} for n in page.notes
    ]


def _woo(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    page = adapters.parse_woo_products(content)
    return [_dump("listing", r) for r in page.listings] + [
        {"note": _dump("note", n)} for n in page.notes
    ]


def _html(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    data = adapters.extract_structured(content, base_url=source if "://" in source else None)
    found = adapters.read_products(data.products, url=source, default_currency=currency)
    lines = [_dump("listing", r) for r in found.listings]
    lines += [_dump("price_range", r) for r in found.ranges]
    if b"__NEXT_DATA__" in content:
        try:
            lines.append({"kind": "__NEXT_DATA__", "data": adapters.next_data(content)})
        except ParseError as exc:  # present but unreadable: shown, never skipped
            lines.append(
                {
                    "rejected": {
                        "reason": exc.reason.value,
                        "field": exc.field,
                        "snippet": exc.snippet,
                    }
                }
            )
    lines += _rejected(found.rejected) + _rejected(data.rejected)
    if not lines:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            "no schema.org Product (JSON-LD or microdata), Open Graph price or __NEXT_DATA__"
            " in this HTML",
            snippet=content[:200].decode("utf-8", "replace"),
        )
    return lines


def _pdf(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    result = adapters.parse_prices_realised(content, currency=currency)
    return [_dump("price_realised", r) for r in result.rows] + _rejected(result.rejected)


def _feed(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    result = adapters.parse_feed(
        content, base_url=source if "://" in source else None, currency=currency
    )
    return (
        [_dump("news_item", r) for r in result.items]
        + [_dump("listing", r) for r in result.listings]
        + _rejected(result.rejected)
    )


def _sitemap(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    result = adapters.parse_sitemap(content)
    return (
        [_dump("sitemap_url", u) for u in result.urls]
        + [_dump("sitemap", s) for s in result.sitemaps]
        + _rejected(result.rejected)
    )


def _robots(content: bytes, source: str, currency: str | None) -> list[dict[str, Any]]:
    rules = RobotsRules.parse(content)
    rate = rules.request_rate
    return [
        {
            "kind": "robots",
            "crawl_delay": rules.crawl_delay,
            "request_rate": None if rate is None else rate.interval,
            "sitemaps": list(rules.sitemaps),
            "can_fetch_root": rules.can_fetch(_origin(source) + "/"),
        }
    ]


_ADAPTERS: dict[str, Callable[[bytes, str, str | None], list[dict[str, Any]]]] = {
    "shopify": _shopify,
    "woocommerce": _woo,
    "html": _html,
    "pdf": _pdf,
    "feed": _feed,
    "sitemap": _sitemap,
    "robots": _robots,
}


def inspect_document(
    content: bytes, *, source: str, kind: str | None = None, currency: str | None = None
) -> InspectResult:
    """Run the adapter for ``kind`` (detected when None) on ``content``.

    Raises:
        ParseError: the document as a whole does not parse (the adapter fails closed), matches
            no adapter, or is HTML that states no product at all.
        ValueError: an unknown ``kind`` (the message lists the valid ones).
    """
    kind = kind or detect_kind(content, source)
    if kind not in _ADAPTERS:
        raise ValueError(f"unknown kind {kind!r}; valid: {', '.join(KINDS)}")
    return InspectResult(kind, _ADAPTERS[kind](content, source, currency))
