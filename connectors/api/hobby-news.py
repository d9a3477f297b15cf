"""``hobby-news``: Hobby Wire (``news.fake.test``), its RSS feed as news items.

Crawl: ``/feed.rss`` is checked whole by the feed adapter (it refuses entity declarations and
non-feeds), then split into entries: one raw record per ``<item>`` (RSS 2.0) or ``<entry>``
(Atom), payload = the entry's own XML and the feed URL, ``external_id`` = its ``guid``/``id``
(else its link). Every entry is yielded, the ones the adapter rejects too.

Normalize: the entry is parsed by the same adapter, alone in a one-entry feed, so a raw record
gives exactly one :class:`NewsItem` or raises the adapter's ``ParseError`` (an undated entry:
``missing_field`` at ``published``): the crawler keeps and counts it, and a better parser can
re-read it later. A feed that is not well-formed XML cannot be split and fails the run with
``ParseError(unexpected_shape)`` rather than being read partly.

Cursor: ``{"sweeps": n}``, set once every entry of the feed is yielded. A feed is one small
page, so each run reads it whole and unchanged entries are dupes; ``since`` is not applied (an
undated entry has no date to compare, and must stay visible). ``lookup()`` is unsupported.

Usage: ``rareindex connectors check hobby-news --fake-web``
"""

from __future__ import annotations

import hashlib
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from typing import Any

from rareindex_adapters import parse_feed
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.errors import FetchError, ParseError, ParseReason
from rareindex_connectors.records import NormalizedRecord, RawRecord, RawRecordInput

ORIGIN = "http://news.fake.test"
FEEDS = (f"{ORIGIN}/feed.rss",)
ATOM = "http://www.w3.org/2005/Atom"
# A lone entry goes back into the smallest document of its format that the adapter reads.
_WRAP = {
    "rss": '<rss version="2.0"><channel>{}</channel></rss>',
    "atom": f'<feed xmlns="{ATOM}">{{}}</feed>',
}


def _entries(data: bytes) -> tuple[str, list[ET.Element]]:
    """The feed's format and its entry elements, in feed order."""
    try:
        root = ET.fromstring(data)  # noqa: S314 - parse_feed refused entity declarations first
    except ET.ParseError as exc:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE, f"feed is not well-formed XML, cannot split it: {exc}"
        ) from None
    if root.tag == "rss":
        return "rss", root.findall("./channel/item")
    if root.tag == f"{{{ATOM}}}feed":
        return "atom", root.findall(f"{{{ATOM}}}entry")
    raise ParseError(ParseReason.UNEXPECTED_SHAPE, f"<{root.tag}> is neither RSS 2.0 nor Atom")


def _entry_id(entry: ET.Element, xml: str) -> str:
    """``guid``/``id``, else the link, else a hash of the entry (never empty)."""
    for tag in ("guid", f"{{{ATOM}}}id", "link"):
        if (text := (entry.findtext(tag) or "").strip()) != "":
            return text[:512]
    link = entry.find(f"{{{ATOM}}}link")
    if link is not None and link.get("href"):
        return str(link.get("href"))[:512]
    return "sha256:" + hashlib.sha256(xml.encode()).hexdigest()


class HobbyNewsConnector:
    """Hobby Wire: RSS entries -> news items, rejected entries kept visible."""

    meta = ConnectorMeta(
        id="hobby-news",
        source="Hobby Wire",
        engines=("api",),
        categories=("sports_card", "tcg_card", "comic", "coin", "other"),
        capabilities=("news_item",),
        refresh_class="ACTIVE",
    )
    version = "1"
    parser_version = "1"

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        sweeps = int(str((ctx.cursor or {}).get("sweeps", 0)))
        for feed_url in FEEDS:
            result = await ctx.fetch(feed_url, expect="binary")
            whole = parse_feed(result.content, base_url=feed_url)  # validates, refuses entities
            kind, entries = _entries(result.content)
            if len(entries) != len(whole.items) + len(whole.rejected):
                raise ParseError(
                    ParseReason.UNEXPECTED_SHAPE,
                    f"split {len(entries)} entries, the adapter read "
                    f"{len(whole.items) + len(whole.rejected)}",
                )
            for entry in entries:
                xml = ET.tostring(entry, encoding="unicode")
                yield RawRecordInput(
                    external_id=_entry_id(entry, xml),
                    url=feed_url,
                    payload={"feed_url": feed_url, "format": kind, "entry": xml},
                    engine=result.engine,
                    http_status=result.status,
                )
            ctx.progress(pages=1, items=len(entries))
        ctx.set_cursor({"sweeps": sweeps + 1})

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        payload: dict[str, Any] = raw.payload if isinstance(raw.payload, dict) else {}
        wrap = _WRAP.get(str(payload.get("format")))
        if wrap is None or not isinstance(payload.get("entry"), str):
            raise ParseError(ParseReason.UNEXPECTED_SHAPE, "payload has no feed entry")
        result = parse_feed(
            wrap.format(payload["entry"]).encode(), base_url=payload.get("feed_url")
        )
        if result.rejected:
            raise result.rejected[0].to_error()
        if len(result.items) != 1:
            raise ParseError(ParseReason.UNEXPECTED_SHAPE, f"{len(result.items)} items in entry")
        return [result.items[0]]

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        try:
            result = await ctx.fetch(FEEDS[0], expect="binary")
            feed = parse_feed(result.content, base_url=FEEDS[0])
        except (FetchError, ParseError) as exc:
            return ConnectorHealth(status="BROKEN", message=f"{type(exc).__name__}: {exc}"[:300])
        status = "UP" if feed.items else "DEGRADED"
        message = f"{len(feed.items)} items, {len(feed.rejected)} rejected"
        return ConnectorHealth(status=status, latency_ms=result.elapsed_ms, message=message)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []  # a news site has no item to look up by URL; articles arrive through the feed


connector = HobbyNewsConnector()
