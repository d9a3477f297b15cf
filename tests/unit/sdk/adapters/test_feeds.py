"""Feeds: RSS and Atom to NewsItems, each entry read or rejected; unsafe XML refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from rareindex_connectors._errors import ParseError, ParseReason
from rareindex_connectors._normalized import NewsItem
from rareindex_connectors.adapters.feeds import MAX_FEED_BYTES, parse_feed

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "adapters" / "feeds"


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


@pytest.mark.parametrize("name", ["not_a_feed.html", "json_feed.json"])
def test_a_payload_that_is_not_a_feed_fails_closed(name: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_feed(_fixture(name))

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert caught.value.snippet


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
