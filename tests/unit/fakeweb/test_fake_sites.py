"""The fake web's collectibles sites over real loopback sockets, checked against their ground truth.

One ``FakeWeb`` (seed 7) serves the module; every request goes to 127.0.0.1 with the site's
``Host`` header and ``Connection: close`` (a keep-alive request to ``serve_asgi`` stalls ~40 ms on
loopback, and these tests make about two thousand requests).
"""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import extruct
import feedparser
import pdfplumber
import pytest
from selectolax.lexbor import LexborHTMLParser

from rareindex_connectors.runtime import RobotsRules, is_challenge_page
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb.fake_web import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites import SITE_HOSTS, build_sites, truth, world
from rareindex_fakeweb.sites.auction_data import auction_data, build_auction
from rareindex_fakeweb.sites.catalog import upc_check_digit
from rareindex_fakeweb.sites.grader import build_grader, grader_data
from rareindex_fakeweb.sites.market_data import build_market, market_data
from rareindex_fakeweb.sites.news import build_articles
from rareindex_fakeweb.sites.shopify_data import build_shop, shop_data
from rareindex_fakeweb.sites.woo_data import build_woo, woo_data
from tests.subprocess_env import subprocess_env
from tests.unit.fakeweb.fake_sites_helpers import (
    AUCTION,
    COINS,
    COMICS,
    DIGEST,
    GRADER,
    LD_JSON,
    MARKET,
    NEWS,
    SHOP,
    TRAPS,
    WOO_API,
    Web,
    next_data,
    parse_amount,
    sitemap,
    woo_walk,
)

SEED = 7


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    with serve_asgi(FakeWeb(seed=SEED).app) as base:
        client = Web(base)
        yield client
        client.client.close()


@pytest.fixture(scope="module")
def shop_products(web: Web) -> list[dict]:
    products: list[dict] = []
    for number in range(1, 50):
        page = web.get(SHOP, f"/products.json?limit=250&page={number}").json()["products"]
        if not page:
            return products
        products += page
    raise AssertionError("the Shopify feed never ended")


@pytest.fixture(scope="module")
def lot_pages(web: Web) -> dict[str, str]:
    return {p: r.text for p, r in web.many(AUCTION, [x.path for x in truth_lots()]).items()}


@pytest.fixture(scope="module")
def item_pages(web: Web) -> dict[str, dict]:
    listings = market_data(SEED).listings
    pages = web.many(MARKET, [x.path for x in listings])
    return {x.item_id: next_data(pages[x.path].text) for x in listings}


def truth_lots() -> tuple:
    return auction_data(SEED).lots()


# --- hosts ------------------------------------------------------------------------------------
@pytest.mark.serial  # asserts build times
def test_hosts_are_distinct_and_mounted_and_build_fast() -> None:
    assert len(set(SITE_HOSTS)) == len(SITE_HOSTS) == 8
    assert all(h.endswith(".fake.test") for h in SITE_HOSTS) and set(SITE_HOSTS) <= set(FAKE_HOSTS)
    start = time.perf_counter()
    assert sorted(build_sites(SEED)) == sorted(SITE_HOSTS)
    assert time.perf_counter() - start < 0.1  # nothing is generated before the first request
    start = time.perf_counter()
    built = world.build_world(SEED)
    for build in (build_shop, build_auction, build_market, build_grader, build_articles):
        build(SEED, built)
    for host in (COMICS, COINS):
        build_woo(SEED, host, built)
    assert time.perf_counter() - start < 1.0  # every site's data (the PDFs are built on demand)


# --- Shopify ----------------------------------------------------------------------------------
def test_shopify_pages_until_an_empty_page(web: Web, shop_products: list[dict]) -> None:
    assert len(shop_products) >= 600 and len({p["id"] for p in shop_products}) == len(shop_products)
    assert [p["handle"] for p in shop_products] == [p["handle"] for p in shop_data(SEED).products]
    assert len(web.get(SHOP, "/products.json").json()["products"]) == 30
    assert len(web.get(SHOP, "/products.json?limit=1000").json()["products"]) == 250
    assert web.get(SHOP, "/products.json?limit=250&page=9").content == b'{"products":[]}'


def test_shopify_fields_titles_and_barcodes(shop_products: list[dict]) -> None:
    product_keys = {"id", "title", "handle", "body_html", "published_at", "created_at"}
    product_keys |= {
        "updated_at",
        "vendor",
        "product_type",
        "tags",
        "variants",
        "images",
        "options",
    }
    variant_keys = {"id", "product_id", "title", "option1", "option2", "option3", "sku", "price"}
    variant_keys |= {"compare_at_price", "available", "grams", "position", "created_at"}
    barcodes = []
    for product in shop_products:
        assert product_keys <= set(product) and isinstance(product["tags"], list)
        datetime.fromisoformat(product["created_at"])
        for variant in product["variants"]:
            assert variant_keys <= set(variant) and re.fullmatch(r"\d+\.\d\d", variant["price"])
            barcodes += [variant["barcode"]] if "barcode" in variant else []
    assert barcodes and all(upc_check_digit(b[:-1]) == b[-1] for b in barcodes)
    assert {len(b) for b in barcodes} == {12, 13}  # UPC-A; EAN-13, JAN, ISBN-13
    assert any(b.startswith("978") for b in barcodes) and any(
        b[:2] in ("45", "49") for b in barcodes
    )
    titles = " | ".join(p["title"] for p in shop_products)
    for phrase in ("PSA 10 GEM MINT", "BGS 9.5", "Raw NM", "Near Mint", "LP", "CGC", "SGC"):
        assert phrase in titles
    assert any(p["options"][0]["name"] == "Condition" for p in shop_products)


def test_shopify_collections_and_product_pages(web: Web, shop_products: list[dict]) -> None:
    handles = [c["handle"] for c in web.get(SHOP, "/collections.json").json()["collections"]]
    assert {"pokemon", "sports", "graded", "sealed"} <= set(handles)
    every = {p["id"] for p in shop_products}
    graded = web.get(SHOP, "/collections/graded/products.json?limit=250").json()["products"]
    assert graded and {p["id"] for p in graded} <= every
    assert all(p["product_type"] == "Graded Card" for p in graded)
    assert web.get(SHOP, "/collections/nope/products.json").status_code == 404
    product = graded[0]
    assert web.get(SHOP, f"/products/{product['handle']}.json").json() == {"product": product}
    page = web.get(SHOP, f"/products/{product['handle']}").text
    ld = json.loads(LD_JSON.search(page).group(1))
    assert ld["@type"] == "Product" and ld["offers"][0]["price"] == product["variants"][0]["price"]
    assert '<meta property="og:price:currency" content="USD">' in page


# --- WooCommerce ------------------------------------------------------------------------------
def test_woo_headers_links_and_minor_units(web: Web) -> None:
    response = web.get(COMICS, f"{WOO_API}?per_page=7&page=2")
    total = len(woo_data(SEED, COMICS).products)
    assert total >= 300 and response.headers["x-wp-total"] == str(total)
    assert response.headers["x-wp-totalpages"] == str(-(-total // 7))
    assert "page=1" in response.links["prev"]["url"] and "page=3" in response.links["next"]["url"]
    assert len(web.get(COMICS, WOO_API).json()) == 10
    for host, code, unit, count in ((COMICS, "GBP", 2, total), (COINS, "KWD", 3, 80)):
        products = woo_walk(web, host)
        assert len(products) == count == len({p["id"] for p in products})
        for product in products:
            prices = product["prices"]
            assert (prices["currency_code"], prices["currency_minor_unit"]) == (code, unit)
            assert prices["price"].isdigit() and prices["regular_price"].isdigit()
            units, rest = divmod(int(prices["price"]), 10**unit)
            assert f"{units:,}.{rest:0{unit}d}" in product["price_html"]
    coin = web.get(COINS, f"{WOO_API}?per_page=1").json()[0]
    assert int(coin["prices"]["price"]) % 500 == 0  # KWD to the half dinar: "125500" = 125.500


def test_woo_rejects_bad_paging_and_unknown_ids(web: Web) -> None:
    for query in ("per_page=0", "per_page=101", "page=0", "per_page=ten"):
        response = web.get(COINS, f"{WOO_API}?{query}")
        assert response.status_code == 400 and response.json()["code"] == "rest_invalid_param"
    past = web.get(COMICS, f"{WOO_API}?page=999")
    assert past.json() == [] and past.headers["x-wp-total"] == str(
        len(woo_data(SEED, COMICS).products)
    )
    first = web.get(COMICS, WOO_API).json()[0]
    assert web.get(COMICS, f"{WOO_API}/{first['id']}").json() == first
    page = web.get(COMICS, urlsplit(first["permalink"]).path).text
    assert json.loads(LD_JSON.search(page).group(1))["offers"][0]["priceCurrency"] == "GBP"
    missing = web.get(COMICS, f"{WOO_API}/1")
    assert (
        missing.status_code == 404
        and missing.json()["code"] == "woocommerce_rest_product_invalid_id"
    )


# --- auction house ----------------------------------------------------------------------------
def test_auction_robots_to_gzipped_sitemaps_to_lots(web: Web) -> None:
    robots = RobotFileParser()
    robots.parse(web.get(AUCTION, "/robots.txt").text.splitlines())
    # a fractional Crawl-delay: protego (the SDK's parser) reads it, the stdlib only integers
    assert RobotsRules.parse(web.get(AUCTION, "/robots.txt").content).crawl_delay == 0.02
    assert not robots.can_fetch("anybot", "http://auction.fake.test/admin/users")
    assert robots.site_maps() == ["http://auction.fake.test/sitemap_index.xml.gz"]
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    index = web.get(AUCTION, "/sitemap_index.xml.gz")
    assert (
        index.headers["content-type"] == "application/x-gzip" and index.content[:2] == b"\x1f\x8b"
    )
    locs = [e.text or "" for e in sitemap(index.content).findall(".//s:loc", ns)]
    seen, raw = [], b""
    for loc in locs:
        body = web.get(AUCTION, urlsplit(loc).path).content
        raw += gzip.decompress(body)
        for url in sitemap(body).findall("s:url", ns):
            datetime.fromisoformat(url.findtext("s:lastmod", namespaces=ns) or "")
            seen.append(urlsplit((url.findtext("s:loc", namespaces=ns) or "").strip()).path)
    assert b"<![CDATA[" in raw
    assert {p for p in seen if p.startswith("/lots/")} == {lot.path for lot in truth_lots()}
    assert web.get(AUCTION, "/admin/").status_code == 403


def test_lot_pages_carry_json_ld_open_graph_and_microdata(lot_pages: dict[str, str]) -> None:
    lots = {lot.path: lot for lot in truth_lots()}
    assert sum(lot.broken_jsonld for lot in lots.values()) == 3
    aggregate = 0
    for path, html in lot_pages.items():
        lot, text = lots[path], LD_JSON.search(html).group(1)
        assert '<meta property="og:title" content="' in html
        if lot.broken_jsonld:
            with pytest.raises(json.JSONDecodeError):
                json.loads(text)
            continue
        offers = json.loads(text)["offers"]
        assert offers["priceCurrency"] == lot.currency
        if offers["@type"] == "AggregateOffer":
            aggregate += 1
            cents = [int(o["price"].replace(".", "")) for o in offers["offers"]]
            assert offers["offerCount"] == len(cents) == 3 and sum(cents) == lot.realised
        elif lot.sold:
            assert int(offers["price"].replace(".", "")) == lot.realised
            assert offers["availability"] == "https://schema.org/SoldOut"
        else:
            assert "price" not in offers and offers["availability"].endswith("OutOfStock")
        if lot.microdata and lot.sold:
            data = extruct.extract(html, syntaxes=["microdata"], uniform=True)["microdata"]
            assert int(data[0]["offers"]["price"].replace(".", "")) == lot.realised
    assert aggregate == 1


def test_prices_realised_pdfs(web: Web) -> None:
    for sale in auction_data(SEED).sales:
        response = web.get(AUCTION, f"/sales/{sale.sale_id}/prices-realised.pdf")
        assert response.headers["content-type"] == "application/pdf"
        with pdfplumber.open(io.BytesIO(response.content)) as pdf:
            text = pdf.pages[0].extract_text()
            rows = [r for p in pdf.pages for t in p.extract_tables() for r in t if r[0] != "Lot"]
        assert f"Buyer's premium: {sale.premium_pct}%" in text
        assert [int(r[0]) for r in rows] == [lot.number for lot in sale.lots]
        for row, lot in zip(rows, sale.lots, strict=True):
            if not lot.sold:
                assert row[2] == "Unsold"
                continue
            hammer, premium, realised = (parse_amount(c, sale.currency) for c in row[2:])
            assert (hammer, premium, realised) == (lot.hammer, lot.premium, lot.realised)
            assert hammer * sale.premium_pct == premium * 100 and hammer + premium == realised
        sale_page = web.get(AUCTION, sale.path).text
        assert all(f"href='{lot.path}'" in sale_page for lot in sale.lots)


# --- marketplace ------------------------------------------------------------------------------
def test_market_search_pages_cover_the_sold_listings(web: Web) -> None:
    ids, number = [], 1
    while True:
        tree = LexborHTMLParser(web.get(MARKET, f"/search?q=&sold=1&page={number}").text)
        items = tree.css("li.s-item")
        assert "data-listingid" not in items[0].attributes  # the ghost result
        ids += [li.attributes["data-listingid"] for li in items[1:]]
        assert len(items) - 1 <= 50
        if "href" not in tree.css_first("a.pagination__next").attributes:
            break
        number += 1
    assert ids == [x.item_id for x in market_data(SEED).sold()]
    titles = [x.title for x in market_data(SEED).sold() if "charizard" in x.title.casefold()]
    found = LexborHTMLParser(web.get(MARKET, "/search?q=CHARIZARD&sold=1").text)
    shown = [n.text() for n in found.css("li.s-item[data-listingid] span[role=heading]")]
    assert shown == titles[:50] and titles


def test_market_titles_and_prices_carry_real_world_noise(web: Web) -> None:
    pages = [web.get(MARKET, f"/search?sold=1&page={n}").text for n in range(1, 9)]
    pages += [web.get(MARKET, f"/search?page={n}").text for n in range(1, 4)]
    html = "".join(pages)
    titles = " | ".join(
        n.text() for p in pages for n in LexborHTMLParser(p).css("span[role=heading]")
    )
    for noise in ("🔥", "💎", "NOT PSA", "PSA 10?", "comp", " RC", "Cert# "):
        assert noise in titles, noise
    assert re.search(r"L@@K|INVEST|HOF|MUST SEE", titles)
    assert re.search(r"(?i)\blot of \d+|\(\d+\)|\bx\d+\b", titles)
    assert re.search(r"PSA 10 GEM MINT #\d{8,9}\b", titles)
    assert re.search(r"BGS \d+(\.5)? 00\d{8}\b", titles)
    assert re.search(r"CGC \d+(\.\d)? \d{7}-\d{3}\b", titles)
    assert re.search(r"#'d \d+/\d+", titles) and re.search(r"\b\d{12}\b", titles)
    assert re.search(r">\$\d{1,3}(,\d{3})+\.\d\d<", html) and ">US $" in html and ">£" in html
    assert 'class="STRIKETHROUGH POSITIVE"' in html and "Best offer accepted" in html


def test_market_item_pages_carry_next_data(item_pages: dict[str, dict]) -> None:
    for listing in market_data(SEED).listings:
        record = item_pages[listing.item_id]
        assert record["title"] == listing.title and record["price"]["currency"] == listing.currency
        assert int(record["price"]["value"].replace(".", "")) == listing.price
        if listing.status == "sold":
            assert datetime.fromisoformat(record["soldDate"]).utcoffset() is not None
        assert record["seller"]["username"] and record["images"]
        assert record["bestOfferAccepted"] == (listing.sale_type == "best_offer")


# --- grader -----------------------------------------------------------------------------------
def test_grader_has_a_page_for_every_cert_used_elsewhere(
    web: Web,
    shop_products: list[dict],
    lot_pages: dict[str, str],
    item_pages: dict[str, dict],
) -> None:
    printed = set(re.findall(r"Cert #: ([\d-]+)<", " ".join(p["body_html"] for p in shop_products)))
    printed |= set(re.findall(r"certification #([\d-]+)<", " ".join(lot_pages.values())))
    printed |= {
        r["itemSpecifics"]["Certification Number"]
        for r in item_pages.values()
        if "Certification Number" in r["itemSpecifics"]
    }
    for host in (COMICS, COINS):
        for product in woo_walk(web, host):
            printed |= {
                a["terms"][0]["name"]
                for a in product["attributes"]
                if a["name"] == "Certification Number"
            }
    every = set(truth.cert_numbers(SEED))
    assert printed <= every and len(printed) > 900
    pages = web.many(GRADER, [f"/cert/{c}" for c in sorted(every)])
    for path, response in pages.items():
        assert response.status_code == 200 and path.removeprefix("/cert/") in response.text
    assert web.get(GRADER, "/cert/99999999999").status_code == 404


def test_grader_records_and_population_reports(web: Web) -> None:
    registry = grader_data(SEED)
    dashed = next(c.cert for c in registry.certs.values() if "-" in c.cert)
    assert web.get(GRADER, f"/cert/{dashed.replace('-', '')}").status_code == 200
    for cert in list(registry.certs.values())[::97]:
        record = web.get(GRADER, f"/cert/{cert.cert}.json").json()["Cert"]
        assert record["Grade"] == cert.copy.grade.grade and record["Population"] >= 1
        pop = web.get(GRADER, f"/pop/{record['SpecID']}.json").json()
        assert pop["Total"] == sum(pop["Population"].values())
        assert pop["Population"][record["Grade"].rstrip("+")] == record["Population"]
        assert f"<td>{pop['Total']}</td>" in web.get(GRADER, f"/pop/{record['SpecID']}").text


def test_shared_slabs_appear_on_three_sites_under_one_cert() -> None:
    shared = truth.shared_copies(SEED)
    assert len(shared) >= 20
    for slab in shared:
        hosts = {a.host for a in slab.appearances}
        assert AUCTION in hosts and MARKET in hosts and hosts & {SHOP, COMICS, COINS}
    assert len(truth.shared_items(SEED)) > 100


# --- news -------------------------------------------------------------------------------------
def test_feeds_parse_and_link_to_articles(web: Web) -> None:
    rss = feedparser.parse(web.get(NEWS, "/feed.rss").content)
    atom = feedparser.parse(web.get(NEWS, "/feed.atom").content)
    assert not rss.bozo and not atom.bozo and rss.version == "rss20" and atom.version == "atom10"
    assert len(rss.entries) == len(atom.entries) == 30
    assert [e.title for e in rss.entries] == [e.title for e in atom.entries]
    assert all(e.published_parsed for e in rss.entries) and all(
        e.id.startswith("tag:") for e in atom.entries
    )
    assert any("<p>" in e.summary for e in rss.entries) and any("&" in e.title for e in rss.entries)
    pages = web.many(NEWS, [urlsplit(e.link).path for e in rss.entries])
    assert all(r.status_code == 200 and 'property="og:title"' in r.text for r in pages.values())


# --- traps ------------------------------------------------------------------------------------
def test_trap_pager_returns_its_last_page_forever(web: Web) -> None:
    pages = [web.get(TRAPS, f"/products.json?page={n}").content for n in (1, 2, 3, 4, 50)]
    assert len(set(pages[:3])) == 3 and pages[2] == pages[3] == pages[4]
    assert all(json.loads(p)["products"] for p in pages)


@pytest.mark.parametrize(
    ("path", "accept", "vendor"),
    [
        ("/px", "text/html", "perimeterx"),
        ("/px", "application/json", "perimeterx"),
        ("/akamai", "text/html", "akamai"),
        ("/datadome", "text/html", "datadome"),
        ("/cloudflare", "text/html", "cloudflare"),
    ],
)
def test_trap_challenge_pages_are_detected(web: Web, path: str, accept: str, vendor: str) -> None:
    response = web.get(TRAPS, path, accept=accept)
    verdict = is_challenge_page(response.status_code, response.headers, response.content)
    assert response.status_code == 403 and verdict.blocked and verdict.vendor == vendor


def test_trap_robots_broken_json_and_bad_encoding(web: Web) -> None:
    robots = RobotFileParser()
    robots.parse(web.get(TRAPS, "/robots.txt").text.splitlines())
    assert not robots.can_fetch("anybot", "http://traps.fake.test/private/x")
    for path in ("/malformed.json", "/truncated.json"):
        response = web.get(TRAPS, path)
        assert response.headers["content-type"] == "application/json"
        with pytest.raises(json.JSONDecodeError):
            json.loads(response.content)
    response = web.get(TRAPS, "/mis-encoded")
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    with pytest.raises(UnicodeDecodeError):
        response.content.decode("utf-8")
    assert "Pokémon" in response.content.decode("latin-1")


@pytest.mark.serial  # asserts a duration
def test_trap_slow_page_takes_two_seconds(web: Web) -> None:
    start = time.perf_counter()
    assert web.get(TRAPS, "/slow").json()["slow"] is True
    assert 1.9 <= time.perf_counter() - start < 5


# --- determinism ------------------------------------------------------------------------------
def test_same_seed_serves_the_same_bytes_and_another_seed_differs(web: Web) -> None:
    item = market_data(SEED).listings[0].path
    paths = [
        (SHOP, "/products.json?limit=250&page=2"),
        (COMICS, f"{WOO_API}?per_page=100"),
        (COINS, f"{WOO_API}?per_page=100"),
        (AUCTION, "/sitemaps/lots-1.xml.gz"),
        (AUCTION, "/lots/7042/5"),
        (AUCTION, "/sales/7042/prices-realised.pdf"),
        (MARKET, "/search?q=&sold=1&page=2"),
        (MARKET, item),
        (GRADER, f"/cert/{truth.cert_numbers(SEED)[0]}"),
        (NEWS, "/feed.atom"),
    ]
    with serve_asgi(FakeWeb(seed=SEED).app) as same, serve_asgi(FakeWeb(seed=8).app) as other:
        twin, stranger = Web(same), Web(other)
        for host, path in paths:
            mine = web.get(host, path).content
            assert twin.get(host, path).content == mine, path
            assert stranger.get(host, path).content != mine, path


def test_generation_does_not_depend_on_the_hash_seed() -> None:
    """Set iteration order changes with ``PYTHONHASHSEED``; the generated data must not."""
    digests = []
    for seed, hash_seed in ((SEED, "0"), (SEED, "4242"), (8, "0")):
        run = subprocess.run(
            [sys.executable, "-c", DIGEST.format(seed=seed)],
            env=subprocess_env({"PYTHONHASHSEED": hash_seed}),
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        digests.append(run.stdout.strip())
    assert digests[0] == digests[1] != digests[2] and len(digests[0]) == 64
