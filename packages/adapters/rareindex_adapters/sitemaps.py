"""XML sitemaps and sitemap indexes (sitemaps.org protocol 0.9), read safely and within bounds.

* gzip is recognised by its magic bytes (``1f 8b``), not by the file name, and inflated at most to
  the protocol's 50 MB (52,428,800 bytes): a gzip bomb stops there with ``too_large``.
* More than 50,000 ``<url>`` (or ``<sitemap>``) entries is ``too_large``, as the protocol caps them.
* XML safety: parsed by ``defusedxml``'s expat parser with ``forbid_dtd=True``. A sitemap never
  needs a DOCTYPE, so any DOCTYPE is refused before an entity can be declared, let alone expanded
  (billion laughs) or fetched (XXE). Elements stream into a small target; no tree is built.
* Namespaces are matched by local name (sitemaps with the 0.9 namespace, the old Google one, or
  none all read); extension elements (``image:image``, ``xhtml:link``) are ignored. ``<loc>`` may be
  CDATA and padded with whitespace.

Nothing is dropped silently: an entry without a usable ``<loc>`` is listed in ``rejected``, and so
is a ``lastmod``/``changefreq``/``priority`` value that does not parse (its URL is kept without it).

Example:
    >>> sm = parse_sitemap(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    ...     b'<url><loc> https://x.example/a </loc><lastmod>2025-06-01</lastmod></url></urlset>')
    >>> sm.kind, sm.urls[0].loc, sm.urls[0].lastmod.isoformat()
    ('urlset', 'https://x.example/a', '2025-06-01T00:00:00+00:00')
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Literal, Protocol, TypeVar
from urllib.parse import urlsplit
from xml.etree.ElementTree import ParseError as XMLSyntaxError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import DefusedXMLParser

from rareindex_connectors.errors import ParseError, ParseReason

from ._rejected import Rejected

__all__ = [
    "MAX_SITEMAP_BYTES",
    "MAX_SITEMAP_URLS",
    "Sitemap",
    "SitemapRef",
    "SitemapUrl",
    "filter_since",
    "parse_sitemap",
]

MAX_SITEMAP_BYTES = 52_428_800
"""The protocol's limit on a sitemap's uncompressed size (50 MiB)."""
MAX_SITEMAP_URLS = 50_000
"""The protocol's limit on entries in one sitemap or sitemap index."""

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_TRUNCATED_XML = {3, 5, 6, 20}  # expat: no element found, unclosed token, partial char, CDATA
_YEAR_MONTH = re.compile(r"(\d{4})(?:-(\d{2}))?")


@dataclass(frozen=True, slots=True)
class SitemapUrl:
    """One ``<url>`` of a urlset. ``lastmod`` is timezone-aware (UTC when the file gave none)."""

    loc: str
    lastmod: datetime | None = None
    changefreq: str | None = None
    priority: Decimal | None = None


@dataclass(frozen=True, slots=True)
class SitemapRef:
    """One ``<sitemap>`` of a sitemap index: another sitemap to fetch."""

    loc: str
    lastmod: datetime | None = None


@dataclass(frozen=True, slots=True)
class Sitemap:
    """A parsed sitemap: ``urls`` for a urlset, ``sitemaps`` for an index, never both."""

    kind: Literal["urlset", "index"]
    urls: tuple[SitemapUrl, ...] = ()
    sitemaps: tuple[SitemapRef, ...] = ()
    rejected: tuple[Rejected, ...] = ()


class _Dated(Protocol):
    @property
    def lastmod(self) -> datetime | None: ...


_D = TypeVar("_D", bound=_Dated)


def filter_since(entries: Iterable[_D], since: datetime) -> list[_D]:
    """Entries modified at or after ``since`` (works on ``SitemapUrl`` and ``SitemapRef``).

    An entry **without** ``lastmod`` is kept: the sitemap does not say it is unchanged, and an
    incremental crawl would rather fetch a page twice than miss it. The boundary is inclusive.

    Raises:
        ValueError: ``since`` is naive.
    """
    if since.tzinfo is None or since.utcoffset() is None:
        raise ValueError("since must be timezone-aware")
    return [e for e in entries if e.lastmod is None or e.lastmod >= since]


def parse_sitemap(data: bytes) -> Sitemap:
    """Parse a sitemap (``<urlset>``) or sitemap index (``<sitemapindex>``), gzipped or not.

    Raises:
        ParseError: ``empty_payload``; ``too_large`` (over 50 MB inflated or 50,000 entries);
            ``truncated`` (cut-off gzip or XML); ``unexpected_shape`` (not XML, a DOCTYPE or
            entity declaration, or a root other than urlset/sitemapindex); ``invalid_value``
            (corrupt gzip).
    """
    if data[:2] == _GZIP_MAGIC:
        data = _gunzip(data)
    elif len(data) > MAX_SITEMAP_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"sitemap is {len(data)} bytes, over 50 MB")
    if not data.strip():
        raise ParseError(ParseReason.EMPTY_PAYLOAD, "empty sitemap")
    target = _Target()
    parser = DefusedXMLParser(target=target, forbid_dtd=True)
    try:
        for start in range(0, len(data), _CHUNK):
            parser.feed(data[start : start + _CHUNK])
        parser.close()
    except DefusedXmlException as exc:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            f"DOCTYPE/entity declarations are refused in sitemaps ({exc})",
            snippet=data[:200].decode("utf-8", "replace"),
        ) from None
    except XMLSyntaxError as exc:
        reason = (
            ParseReason.TRUNCATED if exc.code in _TRUNCATED_XML else ParseReason.UNEXPECTED_SHAPE
        )
        raise ParseError(
            reason, f"not well-formed XML: {exc}", snippet=data[:200].decode("utf-8", "replace")
        ) from None
    if target.kind is None:
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "no sitemap root element")
    return Sitemap(
        kind=target.kind,
        urls=tuple(target.urls),
        sitemaps=tuple(target.sitemaps),
        rejected=tuple(target.rejected),
    )


def _gunzip(data: bytes) -> bytes:
    out = bytearray()
    while data[:2] == _GZIP_MAGIC:
        inflater = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
        try:
            out += inflater.decompress(data, MAX_SITEMAP_BYTES + 1 - len(out))
        except zlib.error as exc:
            raise ParseError(ParseReason.INVALID_VALUE, f"corrupt gzip stream: {exc}") from None
        if len(out) > MAX_SITEMAP_BYTES:
            raise ParseError(ParseReason.TOO_LARGE, "sitemap inflates to more than 50 MB")
        if not inflater.eof:
            raise ParseError(ParseReason.TRUNCATED, "gzip stream ends early")
        data = inflater.unused_data  # a further gzip member, if any (RFC 1952 allows several)
    return bytes(out)


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _parse_lastmod(text: str) -> datetime:
    """A W3C datetime (``2025``, ``2025-06``, ``2025-06-01``, ``2025-06-01T10:00:00+02:00``) as an
    aware UTC datetime. Dates and times without an offset are taken as UTC.

    Raises:
        ValueError: not a W3C datetime.
    """
    text = text.strip()
    short = _YEAR_MONTH.fullmatch(text)
    if short:
        value = datetime(int(short[1]), int(short[2] or 1), 1)
    else:
        value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class _Target:
    """Receives parser events; keeps only direct children of each entry."""

    def __init__(self) -> None:
        self.kind: Literal["urlset", "index"] | None = None
        self.urls: list[SitemapUrl] = []
        self.sitemaps: list[SitemapRef] = []
        self.rejected: list[Rejected] = []
        self._depth = 0
        self._entry: dict[str, str] | None = None
        self._field: str | None = None
        self._text: list[str] = []
        self._count = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._depth += 1
        name = _local(tag)
        if self._depth == 1:
            if name == "urlset":
                self.kind = "urlset"
            elif name == "sitemapindex":
                self.kind = "index"
            else:
                raise ParseError(
                    ParseReason.UNEXPECTED_SHAPE, f"root <{name}> is not urlset or sitemapindex"
                )
        elif self._depth == 2:
            self._count += 1
            if self._count > MAX_SITEMAP_URLS:
                raise ParseError(ParseReason.TOO_LARGE, "more than 50,000 entries in one sitemap")
            expected = "url" if self.kind == "urlset" else "sitemap"
            if name == expected:
                self._entry = {}
            else:
                self.rejected.append(
                    Rejected(
                        ParseReason.UNEXPECTED_FIELD,
                        f"<{name}> in a {self.kind}",
                        where=f"entry {self._count}",
                    )
                )
        elif self._depth == 3 and self._entry is not None:
            self._field = name
            self._text = []

    def data(self, text: str) -> None:
        if self._field is not None:
            self._text.append(text)

    def end(self, tag: str) -> None:
        if self._depth == 3 and self._field is not None and self._entry is not None:
            self._entry.setdefault(self._field, "".join(self._text).strip())
            self._field = None
        elif self._depth == 2 and self._entry is not None:
            self._finish(self._entry)
            self._entry = None
        self._depth -= 1

    def close(self) -> None:
        return None

    def _reject(self, reason: ParseReason, message: str, where: str, field: str, raw: str) -> None:
        self.rejected.append(Rejected(reason, message, where=where, field=field, snippet=raw))

    def _finish(self, entry: dict[str, str]) -> None:
        where = f"entry {self._count}"
        loc = entry.get("loc", "")
        parts = urlsplit(loc)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            reason = ParseReason.INVALID_VALUE if loc else ParseReason.MISSING_FIELD
            self._reject(reason, "no absolute http(s) <loc>", where, "loc", loc)
            return
        lastmod = None
        if entry.get("lastmod"):
            try:
                lastmod = _parse_lastmod(entry["lastmod"])
            except ValueError:
                self._reject(
                    ParseReason.INVALID_VALUE,
                    "not a W3C datetime",
                    loc,
                    "lastmod",
                    entry["lastmod"],
                )
        if self.kind == "index":
            self.sitemaps.append(SitemapRef(loc, lastmod))
            return
        changefreq = entry.get("changefreq", "").lower() or None
        if changefreq is not None and changefreq not in _CHANGEFREQ:
            self._reject(
                ParseReason.INVALID_VALUE, "unknown changefreq", loc, "changefreq", changefreq
            )
            changefreq = None
        priority = None
        if entry.get("priority"):
            try:
                priority = Decimal(entry["priority"])
            except InvalidOperation:
                priority = None
            if priority is None or not (priority.is_finite() and 0 <= priority <= 1):
                self._reject(
                    ParseReason.INVALID_VALUE,
                    "priority is not 0.0-1.0",
                    loc,
                    "priority",
                    entry["priority"],
                )
                priority = None
        self.urls.append(SitemapUrl(loc, lastmod, changefreq, priority))
