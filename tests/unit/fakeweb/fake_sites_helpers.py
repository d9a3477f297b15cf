"""Helpers for ``test_fake_sites.py``: a Host-header client for the served fake web, parsers for
what the collectibles sites serve, and the data digest the determinism test runs in subprocesses."""

from __future__ import annotations

import gzip
import json
import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
from selectolax.lexbor import LexborHTMLParser

SHOP, COMICS, COINS = "cards-shop.fake.test", "comics-woo.fake.test", "coins-woo.fake.test"
AUCTION, MARKET, GRADER = "auction.fake.test", "market.fake.test", "grader.fake.test"
NEWS, TRAPS = "news.fake.test", "traps.fake.test"
WOO_API = "/wp-json/wc/store/v1/products"
LD_JSON = re.compile(r'<script type="application/ld\+json">(.*?)</script>', re.S)
# Generates every site's data from scratch and prints one digest (run here and in subprocesses).
DIGEST = """
import hashlib, json
from rareindex_fakeweb.sites import auction_data, grader, market_data, news
from rareindex_fakeweb.sites import shopify_data, woo_data, world
from rareindex_fakeweb.sites.auction_pdf import prices_realised_pdf
w = world.build_world({seed})
parts = [shopify_data.build_shop({seed}, w).products]
for host in (woo_data.COMICS_HOST, woo_data.COINS_HOST):
    parts.append(woo_data.build_woo({seed}, host, w).products)
sales = auction_data.build_auction({seed}, w).sales
parts.append([(x.path, x.title, x.realised, x.broken_jsonld) for s in sales for x in s.lots])
listings = market_data.build_market({seed}, w).listings
parts.append([(x.item_id, x.title, x.price, x.when.isoformat()) for x in listings])
g = grader.build_grader({seed}, w)
parts.append([(k, grader.cert_record(c, g.pops[c.spec_id])) for k, c in g.certs.items()])
parts.append(news.rss(news.build_articles({seed}, w), "http://news.fake.test"))
digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode())
for sale in sales:
    digest.update(prices_realised_pdf(sale))
print(digest.hexdigest())
"""


class Web:
    """A client for one served fake web: ``web.get(host, path)``; ``web.many`` in parallel."""

    def __init__(self, base: str) -> None:
        self.client = httpx.Client(
            base_url=base,
            transport=httpx.HTTPTransport(),
            timeout=10,
            headers={"connection": "close"},
        )

    def get(self, host: str, path: str, **headers: str) -> httpx.Response:
        return self.client.get(path, headers={"host": host, **headers})

    def many(self, host: str, paths: list[str]) -> dict[str, httpx.Response]:
        with ThreadPoolExecutor(8) as pool:
            return dict(zip(paths, pool.map(lambda p: self.get(host, p), paths), strict=True))


def next_data(html: str) -> dict[str, Any]:
    node = LexborHTMLParser(html).css_first("script#__NEXT_DATA__")
    assert node is not None and node.attributes["type"] == "application/json"
    return json.loads(node.text())["props"]["pageProps"]["listing"]


def woo_walk(web: Web, host: str) -> list[dict[str, Any]]:
    """Every product of a store, following ``Link: rel="next"``."""
    path: str | None = f"{WOO_API}?per_page=100"
    found: list[dict[str, Any]] = []
    while path:
        response = web.get(host, path)
        found += response.json()
        nxt = response.links.get("next", {}).get("url")
        path = f"{urlsplit(nxt).path}?{urlsplit(nxt).query}" if nxt else None
    return found


def sitemap(gzipped: bytes) -> ET.Element:
    return ET.fromstring(gzip.decompress(gzipped))  # noqa: S314 - our own fake server's XML


def parse_amount(text: str, currency: str) -> int:
    pattern = r"\d{1,3}(\.\d{3})*,\d\d €" if currency == "EUR" else r"\$\d{1,3}(,\d{3})*\.\d\d"
    assert re.fullmatch(pattern, text), text
    return int(re.sub(r"\D", "", text))
