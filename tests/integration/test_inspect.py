"""``rareindex inspect`` on the fake web's pages and on local files of each kind: what an
adapter makes of a document, as JSON lines; broken documents fail closed with the reason.

The command runs in this process through its entry point (invoke_cli): the two one-line error
tests run it as a user does, in a subprocess (run_cli)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rareindex.inspecting import detect_kind, inspect_document
from rareindex.settings import REPO_ROOT
from rareindex_connectors.errors import ParseError
from tests.cli_helpers import invoke_cli, run_cli

ADAPTER_FIXTURES = REPO_ROOT / "fixtures" / "adapters"


def _lines(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("shopify/products_page1.json", "shopify"),
        ("woocommerce/products_page1.json", "woocommerce"),
        ("woocommerce/store_minor_unit_3.json", "woocommerce"),
        ("feeds/rss20.xml", "feed"),
        ("feeds/atom.xml", "feed"),
        ("sitemaps/urlset.xml", "sitemap"),
        ("sitemaps/index.xml", "sitemap"),
        ("robots/groups.txt", "robots"),
    ],
)
def test_local_files_of_each_kind(path: str, kind: str) -> None:
    result = invoke_cli("inspect", str(ADAPTER_FIXTURES / path))
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    assert lines and f"from the {kind} adapter" in result.stderr


def test_a_gzipped_sitemap_and_a_pdf_are_detected(tmp_path: Path) -> None:
    xml = (ADAPTER_FIXTURES / "sitemaps" / "urlset.xml").read_bytes()
    assert detect_kind(gzip.compress(xml), "x.xml.gz") == "sitemap"
    assert detect_kind(b"%PDF-1.7 ...", "x") == "pdf"
    assert inspect_document(gzip.compress(xml), source="sitemap.xml.gz").lines


def test_broken_documents_fail_closed_with_the_reason() -> None:
    with pytest.raises(ParseError) as excinfo:
        inspect_document(
            (ADAPTER_FIXTURES / "shopify" / "broken_truncated.json").read_bytes(),
            source="broken.json",
            kind="shopify",
        )
    assert excinfo.value.reason.value == "truncated"
    result = run_cli("inspect", str(ADAPTER_FIXTURES / "sitemaps" / "xxe.xml"))
    assert result.returncode == 2 and result.stderr.startswith("error: unexpected_shape")


def test_unknown_kind_and_missing_file_are_one_line_errors(tmp_path: Path) -> None:
    bad_kind = run_cli("inspect", str(ADAPTER_FIXTURES / "feeds" / "rss20.xml"), "--as", "xml")
    assert bad_kind.returncode == 2 and "valid: shopify, woocommerce, html" in bad_kind.stderr
    missing = run_cli("inspect", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "neither a file nor an http(s) URL" in missing.stderr


@pytest.mark.parametrize(
    ("url", "kind", "expect"),
    [
        ("http://cards-shop.fake.test/products.json?limit=3", "shopify", "external_id"),
        (
            "http://comics-woo.fake.test/wp-json/wc/store/v1/products?per_page=3",
            "woocommerce",
            "external_id",
        ),
        ("http://auction.fake.test/robots.txt", "robots", "sitemaps"),
        ("http://auction.fake.test/sitemap_index.xml.gz", "sitemap", "loc"),
        ("http://news.fake.test/feed.rss", "feed", "published_at"),
        ("http://news.fake.test/feed.atom", "feed", "published_at"),
        ("http://auction.fake.test/sales/7041/prices-realised.pdf", "pdf", "lot_number"),
    ],
)
def test_fake_web_pages(url: str, kind: str, expect: str) -> None:
    result = invoke_cli("inspect", url, "--fake-web")
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    assert lines and f"from the {kind} adapter" in result.stderr
    assert any(expect in line for line in lines)


@pytest.mark.parametrize(
    ("path", "kinds"),
    [
        # Two Offers and an AggregateOffer summary: two listings, no phantom third.
        ("structured/microdata_offers_and_aggregate.html", ["listing", "listing"]),
        ("structured/jsonld_offers_and_aggregate.html", ["listing", "listing"]),
        # An AggregateOffer alone is a price range, not a listing at its low price.
        ("structured/aggregate_offer_low_price_only.html", ["price_range"]),
        # An offer without a price is rejected alone; the rest of the page still reads.
        (
            "structured/offer_without_price.html",
            ["listing", "listing", "listing", "rejected", "rejected"],
        ),
        ("feeds/json_feed_1_0.json", ["news_item", "rejected", "rejected"]),
        ("feeds/json_feed_1_1.json", ["news_item", "news_item", "rejected", "rejected"]),
        ("feeds/atom_self_and_urn_ids.xml", ["news_item", "news_item", "rejected", "rejected"]),
        ("feeds/google_merchant.xml", ["listing", "listing", "listing", "rejected"]),
        ("feeds/google_merchant_sale_dates.xml", ["listing", "listing", "listing", "rejected"]),
        ("feeds/google_merchant.tsv", ["listing", "listing"]),
        ("feeds/google_merchant.csv", ["listing", "listing", "rejected"]),
    ],
)
def test_offer_and_feed_fixtures_through_the_cli(path: str, kinds: list[str]) -> None:
    result = invoke_cli("inspect", str(ADAPTER_FIXTURES / path))

    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    assert [str(line.get("kind", "rejected")) for line in lines] == kinds
    family = "feed" if path.startswith("feeds/") else "html"
    assert f"{len(kinds)} lines from the {family} adapter" in result.stderr


def test_the_cli_shows_why_an_offer_or_entry_was_rejected() -> None:
    offers = _lines(
        invoke_cli("inspect", str(ADAPTER_FIXTURES / "structured/offer_without_price.html")).stdout
    )
    assert offers[3]["rejected"] == {
        "kind": "rejected",
        "reason": "missing_field",
        "message": "offer has no price",
        "where": "products[0]",
        "field": "products[0].offers[1].price",
        "snippet": "Amazing Spider-Man #300 (1988)",
    }
    (price_range,) = _lines(
        invoke_cli(
            "inspect", str(ADAPTER_FIXTURES / "structured/aggregate_offer_low_price_only.html")
        ).stdout
    )
    assert (price_range["low"], price_range["high"], price_range["offer_count"]) == (
        {"amount": "189.50", "currency": "USD"},
        {"amount": "260.00", "currency": "USD"},
        7,
    )
    atom = _lines(
        invoke_cli("inspect", str(ADAPTER_FIXTURES / "feeds/atom_self_and_urn_ids.xml")).stdout
    )
    assert atom[0]["url"] == "https://toyvault.example/journal/entries/beach-bomb.atom"
    assert "is not a URL" in atom[3]["rejected"]["message"]
    merchant = _lines(
        invoke_cli("inspect", str(ADAPTER_FIXTURES / "feeds/google_merchant.xml")).stdout
    )
    assert (merchant[1]["price"], merchant[1]["compare_at_price"]) == (
        {"amount": "799.00", "currency": "USD"},
        {"amount": "899.00", "currency": "USD"},
    )


@pytest.mark.parametrize("name", ["json_feed.json", "json_feed_1_0.json", "json_feed_1_1.json"])
def test_a_json_feed_is_sniffed_as_a_feed_never_as_a_store_response(name: str) -> None:
    content = (ADAPTER_FIXTURES / "feeds" / name).read_bytes()

    assert detect_kind(content, name) == "feed"
    assert (
        detect_kind(content.replace(b"https://jsonfeed.org", b"https:\\/\\/jsonfeed.org"), name)
        == "feed"
    )
    forced = invoke_cli("inspect", str(ADAPTER_FIXTURES / "feeds" / name), "--as", "feed")
    assert forced.returncode == 0 and "from the feed adapter" in forced.stderr


@pytest.mark.parametrize(
    ("path", "code", "message"),
    [
        # A CSV that is no Merchant product feed matches no adapter: an error, not "0 lines".
        ("feeds/not_merchant.csv", 2, "error: unexpected_shape: matches no adapter"),
        # HTML that states no product: an error with the reason.
        ("structured/no_structured_data.html", 2, "error: unexpected_shape: no schema.org Product"),
        # A readable feed with no entries: nothing printed, exit 1.
        ("feeds/empty_channel.xml", 1, "0 lines from the feed adapter: the document holds no"),
        ("shopify/products_page2_empty.json", 1, "0 lines from the shopify adapter"),
    ],
)
def test_inspect_never_succeeds_with_nothing(path: str, code: int, message: str) -> None:
    result = invoke_cli("inspect", str(ADAPTER_FIXTURES / path))

    assert result.returncode == code, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith(message)


def test_detect_kind_refuses_bytes_that_match_no_adapter() -> None:
    with pytest.raises(ParseError) as excinfo:
        detect_kind(b"id,title,price\nA1,Card,5.00 USD\n", "feed.csv")

    assert excinfo.value.reason.value == "unexpected_shape"
    assert "--as" in str(excinfo.value)
    assert detect_kind(b"<!DOCTYPE html><title>x</title>", "page") == "html"


def test_merchant_tsv_and_csv_feeds_are_sniffed_as_feeds_and_other_csvs_are_not() -> None:
    for name in ("google_merchant.tsv", "google_merchant.csv"):
        assert detect_kind((ADAPTER_FIXTURES / "feeds" / name).read_bytes(), name) == "feed"
    with pytest.raises(ParseError) as excinfo:
        detect_kind((ADAPTER_FIXTURES / "feeds/not_merchant.csv").read_bytes(), "not_merchant.csv")
    assert excinfo.value.reason.value == "unexpected_shape"
    assert "Merchant TSV/CSV" in str(excinfo.value)
    forced = invoke_cli("inspect", str(ADAPTER_FIXTURES / "feeds/not_merchant.csv"), "--as", "feed")
    assert forced.returncode == 2 and "nor a Merchant TSV/CSV product feed" in forced.stderr
    assert len(forced.stderr.strip().splitlines()) == 1
