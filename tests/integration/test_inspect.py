"""``rareindex inspect`` on the fake web's pages and on local files of each kind: what an
adapter makes of a document, as JSON lines; broken documents fail closed with the reason."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rareindex.inspecting import detect_kind, inspect_document
from rareindex.settings import REPO_ROOT
from rareindex_connectors import ParseError
from tests.cli_helpers import run_cli

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
    result = run_cli("inspect", str(ADAPTER_FIXTURES / path))
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
    result = run_cli("inspect", url, "--fake-web")
    assert result.returncode == 0, result.stderr
    lines = _lines(result.stdout)
    assert lines and f"from the {kind} adapter" in result.stderr
    assert any(expect in line for line in lines)
