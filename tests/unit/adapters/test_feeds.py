"""Feeds: RSS, Atom and JSON Feed to NewsItems, Merchant product feeds to Listings, each entry
read or rejected; unsafe XML refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from rareindex_adapters._merchant import effective_interval
from rareindex_adapters.feeds import (
    MAX_FEED_BYTES,
    FeedResult,
    looks_like_merchant_table,
    parse_feed,
)
from rareindex_connectors._money import Money
from rareindex_connectors._normalized import NewsItem
from rareindex_connectors.errors import ParseError, ParseReason

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "feeds"


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def test_rss_items_are_read_with_utc_dates_and_plain_text() -> None:
    result = parse_feed(_fixture("rss20.xml"))

    assert result.version == "rss20"
    assert result.title == "Hobby Wire & Auction News"
    assert result.bozo is None
    assert result.items[0] == NewsItem(
        external_id="hw-2025-0601-mantle",
        title="1952 Topps Mantle sells for record $12.6M",
        url="https://hobbywire.example/news/mantle-record",
        published_at=datetime(2025, 6, 1, 12, 30, tzinfo=UTC),
        summary="The SGC 9.5 copy sold at Heritage for a record.",
        author="Jane Collector",
        categories=("Sports Cards", "Auctions"),
    )
    assert result.items[0].published_at.utcoffset() is not None


def test_every_rss_entry_is_either_an_item_or_rejected() -> None:
    result = parse_feed(_fixture("rss20.xml"))

    assert [i.external_id for i in result.items] == [
        "hw-2025-0601-mantle",
        "https://hobbywire.example/news/psa-label",
        "https://hobbywire.example/news/guid-only",  # a permalink guid is the URL too
    ]
    assert [(r.where, r.reason, r.field, r.snippet) for r in result.rejected] == [
        ("entry 3", ParseReason.MISSING_FIELD, "published", "Undated press release"),
        ("entry 4", ParseReason.INVALID_VALUE, "published", "sometime last week"),
        ("entry 5", ParseReason.MISSING_FIELD, "link", "No link and no guid"),
        ("entry 6", ParseReason.MISSING_FIELD, "title", "https://hobbywire.example/news/untitled"),
        ("entry 7", ParseReason.INVALID_VALUE, "id", "https://hobbywire.example/news/psa-label"),
    ]
    assert len(result.items) + len(result.rejected) == 8


def test_atom_relative_links_html_titles_and_updated_only_entries() -> None:
    result = parse_feed(_fixture("atom.xml"), base_url="https://coins.example/feed.xml")

    assert result.version == "atom10"
    assert result.title == "Coin World Daily"
    first, only_updated, plain = result.items
    assert first.url == "https://coins.example/articles/1804-dollar"
    assert first.title == "1804 dollar returns to auction"
    assert first.summary == "The King of Siam set"
    assert first.published_at == datetime(2025, 6, 1, 13, tzinfo=UTC)  # published, not updated
    assert (first.author, first.categories) == ("Sam Numis", ("coins", "auctions"))
    assert only_updated.published_at == datetime(2025, 6, 2, 7, 30, tzinfo=UTC)
    # A text/plain title keeps its "<" characters: it is not HTML.
    assert plain.title == "Plain <text> title with a less-than sign: 5 < 6"
    assert result.rejected == ()


def test_relative_links_without_a_base_url_are_rejected() -> None:
    result = parse_feed(_fixture("atom.xml"))

    assert [(r.where, r.reason, r.field) for r in result.rejected] == [
        ("entry 1", ParseReason.INVALID_VALUE, "link")
    ]
    assert len(result.items) == 2


def test_a_bozo_feed_is_read_and_says_why() -> None:
    result = parse_feed(_fixture("bozo.xml"))

    assert result.bozo is not None and "not well-formed" in result.bozo
    assert [i.title for i in result.items] == ["Spider-Man #1 CGC 9.8 & a Venom variant"]
    assert result.items[0].external_id == "https://comics.example/news/1"


def test_a_doctype_without_entities_is_fine() -> None:
    result = parse_feed(_fixture("rss091_doctype.xml"))

    assert result.version == "rss091n"
    assert [i.url for i in result.items] == ["https://stamps.example/jenny"]


def test_a_feed_without_entries_is_empty_not_an_error() -> None:
    result = parse_feed(_fixture("empty_channel.xml"))

    assert (result.items, result.rejected, result.title) == ((), (), "Quiet week")


@pytest.mark.parametrize("name", ["billion_laughs.xml", "xxe.xml"])
def test_entity_declarations_are_refused(name: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(_fixture(name))

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert "entity declaration" in str(caught.value)


@pytest.mark.parametrize(
    "data",
    [
        _fixture("not_a_feed.html"),
        b'{"products": [{"id": 1, "title": "Not a feed"}]}',  # a store response
        b'{"version": "https://jsonfeed.org/version/2", "items": []}',  # an unknown version
        b'{"version": "https://jsonfeed.org/version/1.1", "items": {"id": "1"}}',
    ],
)
def test_a_payload_that_is_not_a_feed_fails_closed(data: bytes) -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(data)

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert caught.value.snippet or caught.value.field


def test_json_feed_1_0_items_with_html_content_and_relative_urls() -> None:
    result = parse_feed(
        _fixture("json_feed_1_0.json"), base_url="https://slabreport.example/feed.json"
    )

    assert (result.version, result.title, result.listings) == ("json10", "The Slab Report", ())
    wagner, pop = result.items
    assert wagner == NewsItem(
        external_id="https://slabreport.example/2025/06/t206-wagner",
        title="T206 Honus Wagner SGC 3 brings $7.25M",
        url="https://slabreport.example/2025/06/t206-wagner",
        published_at=datetime(2025, 6, 3, 13, 15, tzinfo=UTC),  # -04:00, in UTC
        summary="The Wagner sold in a private sale.",  # content_html as plain text
        author="Ray Tobacco",  # 1.0's author object
        categories=("vintage", "private sales"),
    )
    assert pop.url == "https://slabreport.example/2025/06/psa-pop"
    assert pop.published_at == datetime(2025, 6, 2, 18, tzinfo=UTC)  # date_modified only
    assert [(r.where, r.reason, r.field) for r in result.rejected] == [
        ("entry 3", ParseReason.MISSING_FIELD, "date_published")
    ]


def test_json_feed_1_1_authors_external_url_and_every_item_accounted_for() -> None:
    result = parse_feed(_fixture("json_feed_1_1.json"))

    assert result.version == "json11"
    eagle, link_post = result.items
    assert (eagle.author, eagle.summary) == (
        "Ada Mint",
        "A court filing suggests a second coin could be monetised.",
    )
    assert eagle.published_at == datetime(2025, 6, 10, 7, tzinfo=UTC)
    assert link_post.url == "https://auctions.example/lots/1804-dollar"  # external_url
    assert [(r.where, r.reason, r.field) for r in result.rejected] == [
        ("entry 3", ParseReason.MISSING_FIELD, "title"),
        ("entry 4", ParseReason.INVALID_VALUE, "date_published"),  # no offset: not RFC 3339
    ]


def test_a_broken_json_feed_is_invalid_json() -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(b'{"version": "https://jsonfeed.org/version/1", "items": [')

    assert caught.value.reason is ParseReason.INVALID_JSON


def test_atom_self_only_links_and_urn_ids() -> None:
    result = parse_feed(
        _fixture("atom_self_and_urn_ids.xml"), base_url="https://toyvault.example/journal/atom.xml"
    )

    assert [(i.external_id, i.url) for i in result.items] == [
        (
            "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a",
            "https://toyvault.example/journal/entries/beach-bomb.atom",  # rel="self" only
        ),
        (
            "urn:uuid:2225c695-cfb8-4ebb-aaaa-80da344efa6a",
            "https://toyvault.example/journal/jawa-vinyl-cape",  # relative alternate, resolved
        ),
        (
            "urn:uuid:3225c695-cfb8-4ebb-aaaa-80da344efa6a",
            "https://toyvault.example/journal/both",  # alternate beats self
        ),
    ]
    (no_link,) = result.rejected
    assert (no_link.where, no_link.reason, no_link.field) == (
        "entry 4",
        ParseReason.MISSING_FIELD,
        "link",
    )
    # The urn:uuid id is named as what it is, never offered as a bad link.
    assert "is not a URL" in no_link.message and no_link.snippet == "No link at all"


def test_google_merchant_items_are_listings() -> None:
    result = parse_feed(_fixture("google_merchant.xml"))

    assert result.items == ()
    brown, brady, box = result.listings
    assert brown.external_id == brown.identifiers.sku == "GG-1958T-62"
    assert brown.title == "1958 Topps Jim Brown #62 Rookie PSA 6"
    assert brown.url == "https://gridirongrails.example/products/1958-topps-jim-brown-62-psa-6"
    assert (brown.price, brown.available, brown.condition) == (
        Money(amount="2450.00", currency="USD"),
        True,
        "used",
    )
    assert brown.image_urls == (
        "https://cdn.gridirongrails.example/img/brown-62.jpg",
        "https://cdn.gridirongrails.example/img/brown-62-back.jpg",
    )
    # RSS <title>/<link> when there is no g:title/g:link; a lower sale price is the price.
    assert brady.url == "https://gridirongrails.example/products/2000-bowman-chrome-brady-236"
    assert (brady.price, brady.compare_at_price) == (
        Money(amount="799.00", currency="USD"),
        Money(amount="899.00", currency="USD"),
    )
    assert (brady.available, brady.identifiers.ean) == (False, "0748214123456")
    # A sale limited by dates is not applied (no clock): the regular price stands.
    assert (box.price, box.compare_at_price) == (Money(amount="639.99", currency="USD"), None)
    assert (box.available, box.condition, box.identifiers.upc) == (True, "new", "012345678905")
    (no_price,) = result.rejected
    assert (no_price.where, no_price.reason, no_price.field, no_price.snippet) == (
        "entry 4",
        ParseReason.MISSING_FIELD,
        "g:price",
        "GG-MYSTERY",
    )


def test_merchant_fields_are_found_by_namespace_not_by_prefix() -> None:
    feed = (
        b'<rss version="2.0" xmlns:gm="http://base.google.com/ns/1.0"><channel><item>'
        b"<gm:id>X-1</gm:id><title>Card</title><link>https://s.example/x1</link>"
        b"<gm:price>12 EUR</gm:price></item><item><gm:id>X-2</gm:id><title>Card 2</title>"
        b"<link>https://s.example/x2</link><gm:price>5.00</gm:price></item></channel></rss>"
    )

    listings = parse_feed(feed, currency="CAD").listings

    assert [(x.external_id, x.price) for x in listings] == [
        ("X-1", Money(amount="12.00", currency="EUR")),
        ("X-2", Money(amount="5.00", currency="CAD")),  # no ISO code: the caller's currency
    ]


def test_bytes_that_look_like_a_path_are_never_opened(tmp_path: Path) -> None:
    # feedparser.parse(b"/some/file") would read that file; we hand it a stream instead.
    local = tmp_path / "feed.xml"
    local.write_bytes(_fixture("rss20.xml"))

    with pytest.raises(ParseError) as caught:
        parse_feed(str(local).encode())

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"", ParseReason.EMPTY_PAYLOAD), (b" \n", ParseReason.EMPTY_PAYLOAD)],
)
def test_empty_payloads(data: bytes, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(data)

    assert caught.value.reason is reason


def test_oversized_feeds_are_refused_unparsed() -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(b"<rss>" + b" " * MAX_FEED_BYTES + b"</rss>")

    assert caught.value.reason is ParseReason.TOO_LARGE


def test_a_leap_second_does_not_crash() -> None:
    feed = (
        b'<rss version="2.0"><channel><item><title>t</title><link>https://x.example/1</link>'
        b"<pubDate>2008-12-31T23:59:60Z</pubDate></item></channel></rss>"
    )

    (item,) = parse_feed(feed).items

    assert item.published_at == datetime(2009, 1, 1, tzinfo=UTC)


def test_the_minimal_json_feed_is_read_and_its_undated_item_rejected() -> None:
    result = parse_feed(_fixture("json_feed.json"))

    assert (result.version, result.title, result.items) == ("json11", "Hobby Wire", ())
    assert [(r.where, r.field, r.snippet) for r in result.rejected] == [
        ("entry 1", "date_published", "Mantle record")
    ]


def test_an_atom_merchant_feed_gives_listings_too() -> None:
    feed = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"'
        b' xmlns:g="http://base.google.com/ns/1.0"><title>Coins</title>'
        b"<entry><g:id>C-1881S</g:id><title>1881-S Morgan MS65</title>"
        b'<link href="https://coins.example/p/1881s"/><g:price>260.00 USD</g:price>'
        b"<g:availability>in stock</g:availability><g:condition>used</g:condition></entry>"
        b"</feed>"
    )

    result = parse_feed(feed)

    (morgan,) = result.listings
    assert (result.version, result.items, result.rejected) == ("atom10", (), ())
    assert (morgan.external_id, morgan.url, morgan.price, morgan.available) == (
        "C-1881S",
        "https://coins.example/p/1881s",
        Money(amount="260.00", currency="USD"),
        True,
    )


def _sale_prices(result: FeedResult) -> dict[str, tuple[str, str | None]]:
    return {
        x.external_id: (
            str(x.price.amount),
            None if x.compare_at_price is None else str(x.compare_at_price.amount),
        )
        for x in result.listings
    }


def test_a_dated_sale_price_applies_only_inside_its_interval() -> None:
    data = _fixture("google_merchant_sale_dates.xml")
    # No fetch time: each item's own date (Trout's pubDate), else the feed's lastBuildDate.
    at_feed_date = parse_feed(data)
    assert _sale_prices(at_feed_date) == {
        "DD-BF-ACUNA": ("359.00", "420.00"),  # 29 November: inside the Black Friday sale
        "DD-SUMMER-OHTANI": ("310.00", None),  # the July sale is over: the regular g:price
        "DD-CM-TROUT": ("999.00", "1150.00"),  # its pubDate, 22 December, starts the sale
    }
    (bad,) = at_feed_date.rejected
    assert (bad.where, bad.reason, bad.field) == (
        "entry 4",
        ParseReason.INVALID_VALUE,
        "g:sale_price_effective_date",
    )
    assert bad.snippet == "Black Friday weekend"
    # The fetch time, when the caller gives it, is what the interval is judged at.
    in_july = parse_feed(data, fetched_at=datetime(2025, 7, 15, 12, 0, tzinfo=UTC))
    assert _sale_prices(in_july) == {
        "DD-BF-ACUNA": ("420.00", None),
        "DD-SUMMER-OHTANI": ("275.00", "310.00"),
        "DD-CM-TROUT": ("1150.00", None),
    }
    # The interval's own offset: 23:59 -05:00 on 1 December is 04:59 UTC on the 2nd.
    last_minute = parse_feed(data, fetched_at=datetime(2025, 12, 2, 4, 59, tzinfo=UTC))
    after = parse_feed(data, fetched_at=datetime(2025, 12, 2, 5, 0, tzinfo=UTC))
    assert _sale_prices(last_minute)["DD-BF-ACUNA"] == ("359.00", "420.00")
    assert _sale_prices(after)["DD-BF-ACUNA"] == ("420.00", None)
    # A date-only end runs to the end of that day (UTC).
    boxing_day = parse_feed(data, fetched_at=datetime(2025, 12, 26, 23, 0, tzinfo=UTC))
    assert _sale_prices(boxing_day)["DD-CM-TROUT"] == ("999.00", "1150.00")
    assert _sale_prices(parse_feed(data, fetched_at=datetime(2025, 12, 27, tzinfo=UTC)))[
        "DD-CM-TROUT"
    ] == ("1150.00", None)


def test_a_dated_sale_without_any_time_keeps_the_regular_price() -> None:
    # google_merchant.xml has no channel or item date: no clock is read, the sale is not guessed.
    box = parse_feed(_fixture("google_merchant.xml")).listings[2]
    assert (box.price, box.compare_at_price) == (Money(amount="639.99", currency="USD"), None)
    during = parse_feed(
        _fixture("google_merchant.xml"), fetched_at=datetime(2025, 11, 30, 12, 0, tzinfo=UTC)
    ).listings[2]
    assert (during.price, during.compare_at_price) == (
        Money(amount="579.99", currency="USD"),
        Money(amount="639.99", currency="USD"),
    )


@pytest.mark.parametrize(
    "interval", ["2025-12-01", "2025-12-01/", "2025-12-05/2025-12-01", "soon/later"]
)
def test_an_unreadable_effective_date_is_refused(interval: str) -> None:
    with pytest.raises(ParseError) as refused:
        effective_interval(interval)
    assert refused.value.reason is ParseReason.INVALID_VALUE
    assert refused.value.field == "g:sale_price_effective_date"


def test_a_merchant_tsv_feed_gives_listings() -> None:
    data = _fixture("google_merchant.tsv")
    assert looks_like_merchant_table(data)

    result = parse_feed(data)

    assert result.version == "merchant-tsv" and result.items == () and result.rejected == ()
    brown, brady = result.listings
    assert (brown.external_id, brown.identifiers.sku, brown.price, brown.available) == (
        "GG-1958T-62",
        "GG-1958T-62",
        Money(amount="2450.00", currency="USD"),
        True,
    )
    assert brown.url == "https://gridirongrails.example/products/1958-topps-jim-brown-62-psa-6"
    assert brown.image_urls == ("https://cdn.gridirongrails.example/img/brown-62.jpg",)
    assert (brady.available, brady.identifiers.ean, brady.image_urls) == (
        False,
        "0748214123456",
        (),
    )


def test_a_merchant_csv_feed_gives_listings_and_rejects_a_row_alone() -> None:
    result = parse_feed(_fixture("google_merchant.csv"))

    assert result.version == "merchant-csv"
    jordan, box = result.listings
    assert jordan.title == "1986 Fleer Michael Jordan #57 RC, PSA 8"  # a quoted comma
    assert (jordan.price, jordan.available, jordan.condition) == (
        Money(amount="8950.00", currency="USD"),
        True,
        "used",
    )
    assert (box.price, box.compare_at_price, box.identifiers.upc) == (
        Money(amount="22999.00", currency="USD"),
        Money(amount="24999.00", currency="USD"),
        None,
    )
    (no_price,) = result.rejected
    assert (no_price.where, no_price.reason, no_price.field, no_price.snippet) == (
        "entry 3",
        ParseReason.MISSING_FIELD,
        "g:price",
        "TT-NO-PRICE",
    )


@pytest.mark.parametrize(
    "data",
    [
        b"id,title,price\nA1,Card,5.00 USD\n",  # no link, no Merchant column of its own
        b"sku,name,link,price,availability\nA1,Card,https://s.example/a,5 USD,in stock\n",
        b"id;title;link;price;availability\nA1;Card;https://s.example/a;5 USD;in stock\n",
        b"date,open,high,low,close\n2025-01-02,1,2,0.5,1.5\n",
        b'<rss version="2.0"><channel><title>id,title,link,price,condition</title></channel></rss>',
    ],
)
def test_other_csvs_are_no_merchant_feed(data: bytes) -> None:
    assert not looks_like_merchant_table(data)


def test_merchant_table_headers_as_merchants_write_them() -> None:
    data = (
        b"\xef\xbb\xbfID\tTitle\tLink\tPrice\tSale Price\tg:availability\t"
        b"sale price effective date\n"
        b"A-1\tCard\thttps://s.example/a\t10.00 EUR\t8.00 EUR\tin_stock\t"
        b"2025-11-28T00:00+0100/2025-11-30T23:59+0100\n"
    )
    during = parse_feed(data, fetched_at=datetime(2025, 11, 29, tzinfo=UTC)).listings[0]
    after = parse_feed(data, fetched_at=datetime(2025, 12, 29, tzinfo=UTC)).listings[0]
    assert (during.price, after.price) == (
        Money(amount="8.00", currency="EUR"),
        Money(amount="10.00", currency="EUR"),
    )


def test_a_parse_does_not_search_for_an_xml_parser_that_is_not_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """feedparser prefers drv_libxml2: xml.sax tried to import it on every parse, a search of
    sys.path each time when it is not installed (a quarter of a one-entry feed's CPU)."""
    import importlib.util
    import sys
    from importlib.machinery import ModuleSpec

    assert importlib.util.find_spec("drv_libxml2") is None  # this environment has none
    searched: list[str] = []

    class Spy:
        def find_spec(self, name: str, *_: object) -> ModuleSpec | None:
            searched.append(name)
            return None

    monkeypatch.setattr(sys, "meta_path", [Spy(), *sys.meta_path])
    result = parse_feed(_fixture("rss20.xml"))
    assert result.items
    assert "drv_libxml2" not in searched
