"""Sitemaps: urlsets and indexes, gzip by magic bytes, protocol limits, XML attacks refused."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from rareindex_adapters import sitemaps
from rareindex_adapters.sitemaps import (
    MAX_SITEMAP_BYTES,
    MAX_SITEMAP_URLS,
    SitemapRef,
    SitemapUrl,
    filter_since,
    parse_sitemap,
)
from rareindex_connectors.errors import ParseError, ParseReason

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "sitemaps"


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _urlset(n: int) -> bytes:
    body = "".join(f"<url><loc>https://x.example/p/{i}</loc></url>" for i in range(n))
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>'.encode()


def test_urlset_reads_every_field_and_ignores_extensions() -> None:
    sitemap = parse_sitemap(_fixture("urlset.xml"))

    assert sitemap.kind == "urlset"
    assert sitemap.sitemaps == ()
    assert sitemap.urls[0] == SitemapUrl(
        loc="https://cards.example/products/1986-fleer-michael-jordan-57-psa-8",
        lastmod=datetime(2025, 6, 1, 8, 15, tzinfo=UTC),
        changefreq="daily",
        priority=Decimal("0.8"),
    )
    # CDATA, padding and a query string survive; changefreq is case-folded.
    assert sitemap.urls[1].loc == "https://cards.example/products/search?set=base&grade=10"
    assert sitemap.urls[1].changefreq == "weekly"
    assert sitemap.urls[1].lastmod == datetime(2025, 5, 20, tzinfo=UTC)
    assert sitemap.urls[2].loc == (
        "https://cards.example/products/pokemon-base-set-charizard-4-cgc-9"
    )
    assert [u.loc.rsplit("/", 1)[-1] for u in sitemap.urls] == [
        "1986-fleer-michael-jordan-57-psa-8",
        "search?set=base&grade=10",
        "pokemon-base-set-charizard-4-cgc-9",
        "1909-s-vdb-lincoln-cent",
        "2018-prizm-luka-doncic-280",
    ]
    assert all(u.lastmod is None or u.lastmod.tzinfo is not None for u in sitemap.urls)


def test_bad_values_and_entries_are_rejected_not_dropped() -> None:
    sitemap = parse_sitemap(_fixture("urlset.xml"))
    coin = next(u for u in sitemap.urls if u.loc.endswith("lincoln-cent"))

    # The URL is kept (an incremental crawl fetches it); its unreadable values are reported.
    assert (coin.lastmod, coin.changefreq, coin.priority) == (None, None, None)
    assert [(r.reason, r.field, r.snippet) for r in sitemap.rejected] == [
        (ParseReason.INVALID_VALUE, "lastmod", "last tuesday"),
        (ParseReason.INVALID_VALUE, "changefreq", "sometimes"),
        (ParseReason.INVALID_VALUE, "priority", "1.5"),
        (ParseReason.MISSING_FIELD, "loc", ""),
        (ParseReason.INVALID_VALUE, "loc", "/products/relative-only"),
    ]
    assert sitemap.rejected[3].where == "entry 5"


def test_gzip_is_detected_by_magic_bytes_not_the_name() -> None:
    gzipped = _fixture("products_gzipped.xml")
    assert gzipped[:2] == b"\x1f\x8b"

    assert parse_sitemap(gzipped) == parse_sitemap(_fixture("urlset.xml"))


def test_several_gzip_members_are_concatenated() -> None:
    head = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    tail = b"<url><loc>https://x.example/a</loc></url></urlset>"

    sitemap = parse_sitemap(gzip.compress(head) + gzip.compress(tail))

    assert [u.loc for u in sitemap.urls] == ["https://x.example/a"]


def test_index_lists_sitemaps() -> None:
    sitemap = parse_sitemap(_fixture("index.xml"))

    assert sitemap.kind == "index"
    assert sitemap.urls == ()
    assert sitemap.sitemaps == (
        SitemapRef(
            "https://cards.example/sitemap_products_1.xml?from=1&to=5000",
            datetime(2025, 6, 2, 4, tzinfo=UTC),
        ),
        SitemapRef(
            "https://cards.example/sitemap_collections_1.xml", datetime(2025, 1, 15, tzinfo=UTC)
        ),
        SitemapRef("https://cards.example/sitemap_blogs_1.xml", None),
    )


def test_a_url_entry_inside_an_index_is_rejected() -> None:
    data = (
        b"<sitemapindex><sitemap><loc>https://x.example/s1.xml</loc></sitemap>"
        b"<url><loc>https://x.example/p</loc></url></sitemapindex>"
    )

    sitemap = parse_sitemap(data)

    assert [s.loc for s in sitemap.sitemaps] == ["https://x.example/s1.xml"]
    assert [(r.reason, r.where) for r in sitemap.rejected] == [
        (ParseReason.UNEXPECTED_FIELD, "entry 2")
    ]


def test_no_namespace_and_w3c_year_month_dates() -> None:
    sitemap = parse_sitemap(_fixture("no_namespace.xml"))

    assert [u.lastmod for u in sitemap.urls] == [
        datetime(2024, 12, 1, tzinfo=UTC),
        datetime(2024, 1, 1, tzinfo=UTC),
    ]


@pytest.mark.parametrize("name", ["billion_laughs.xml", "xxe.xml"])
def test_entity_attacks_are_refused_before_expansion(name: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_sitemap(_fixture(name))

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert "DOCTYPE" in str(caught.value)


def test_a_gzip_bomb_stops_at_the_protocol_limit() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * (MAX_SITEMAP_BYTES + 10), compresslevel=9)
    assert len(bomb) < 200_000

    with pytest.raises(ParseError) as caught:
        parse_sitemap(bomb)

    assert caught.value.reason is ParseReason.TOO_LARGE


def test_a_gzip_bomb_is_never_inflated_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sitemaps, "MAX_SITEMAP_BYTES", 1_000_000)
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    chunk = b"\0" * (1 << 20)
    bomb = b"".join(packer.compress(chunk) for _ in range(256)) + packer.flush()  # 256 MiB

    tracemalloc.start()
    try:
        with pytest.raises(ParseError) as caught:
            parse_sitemap(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert caught.value.reason is ParseReason.TOO_LARGE
    assert peak < 16_000_000  # bounded by the limit, not by the 256 MiB the bomb holds


def test_a_plain_file_over_50_mb_is_refused_unread() -> None:
    with pytest.raises(ParseError) as caught:
        parse_sitemap(b" " * (MAX_SITEMAP_BYTES + 1))

    assert caught.value.reason is ParseReason.TOO_LARGE


def test_exactly_50000_urls_pass_and_one_more_is_too_large() -> None:
    assert len(parse_sitemap(_urlset(MAX_SITEMAP_URLS)).urls) == MAX_SITEMAP_URLS

    with pytest.raises(ParseError) as caught:
        parse_sitemap(_urlset(MAX_SITEMAP_URLS + 1))

    assert caught.value.reason is ParseReason.TOO_LARGE


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", ParseReason.EMPTY_PAYLOAD),
        (b"  \n ", ParseReason.EMPTY_PAYLOAD),
        (_fixture("truncated.xml"), ParseReason.TRUNCATED),
        (gzip.compress(_urlset(3))[:-12], ParseReason.TRUNCATED),
        (b"\x1f\x8b" + b"\x00" * 40, ParseReason.INVALID_VALUE),
        (_fixture("not_a_sitemap.html"), ParseReason.UNEXPECTED_SHAPE),
        (_fixture("feed_not_sitemap.xml"), ParseReason.UNEXPECTED_SHAPE),
        (b'{"urls": []}', ParseReason.UNEXPECTED_SHAPE),
    ],
    ids=["empty", "blank", "truncated", "truncated-gzip", "corrupt-gzip", "html", "rss", "json"],
)
def test_unreadable_input_fails_closed(data: bytes, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as caught:
        parse_sitemap(data)

    assert caught.value.reason is reason


def test_filter_since_keeps_newer_and_undated_entries() -> None:
    urls = parse_sitemap(_fixture("urlset.xml")).urls

    kept = filter_since(urls, datetime(2025, 5, 20, tzinfo=UTC))

    assert [u.loc.rsplit("/", 1)[-1] for u in kept] == [
        "1986-fleer-michael-jordan-57-psa-8",  # newer
        "search?set=base&grade=10",  # exactly on the boundary: kept
        "pokemon-base-set-charizard-4-cgc-9",  # no lastmod: kept
        "1909-s-vdb-lincoln-cent",  # unreadable lastmod: kept
    ]


def test_filter_since_works_on_index_entries_and_refuses_naive_datetimes() -> None:
    refs = parse_sitemap(_fixture("index.xml")).sitemaps

    assert [r.loc for r in filter_since(refs, datetime(2025, 3, 1, tzinfo=UTC))] == [
        "https://cards.example/sitemap_products_1.xml?from=1&to=5000",
        "https://cards.example/sitemap_blogs_1.xml",
    ]
    with pytest.raises(ValueError, match="aware"):
        filter_since(refs, datetime(2025, 3, 1))
