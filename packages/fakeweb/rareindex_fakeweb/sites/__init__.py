"""The fake web's collectibles sites, generated reproducibly from a seed.

:func:`build_sites` returns ``{host: handler}``; :class:`~rareindex_fakeweb.FakeWeb`
mounts every site next to its misbehaving hosts. :data:`SITE_HOSTS` lists the host names:

=========================  =====================================================================
``cards-shop.fake.test``   Shopify storefront, 656 products (:mod:`.shopify`)
``comics-woo.fake.test``   WooCommerce Store API, comics in GBP (:mod:`.woo`)
``coins-woo.fake.test``    WooCommerce Store API, coins in KWD, minor unit 3 (:mod:`.woo`)
``auction.fake.test``      auction house: robots, gzipped sitemaps, lot pages, PDFs
``market.fake.test``       marketplace: noisy sold/active search results, ``__NEXT_DATA__`` items
``grader.fake.test``       cert lookup and population reports (:mod:`.grader`)
``news.fake.test``         RSS and Atom feeds and their articles (:mod:`.news`)
``traps.fake.test``        endless pager, challenge pages, broken JSON, bad encoding, slow page
=========================  =====================================================================

Same seed, same bytes: every site draws from its own ``random.Random`` seeded with ``seed`` and its
name (:func:`site_rng`, which generators beside the fake web, such as ``bench/scale``, use too), and
each builds its data on its first request (building all of them takes well under a second). Absolute
URLs follow the ``Host`` header the client sent.

Ground truth for tests (each function cached per seed):

* :func:`.catalog.items` — item identities; :func:`.world.world` — every copy, by site, and the
  slabs shared across sites;
* :func:`.shopify_data.shop_data`, :func:`.woo_data.woo_data`, :func:`.auction_data.auction_data`,
  :func:`.market_data.market_data`, :func:`.grader.grader_data`, :func:`.news.articles`;
* :mod:`.truth` — :func:`~.truth.appearances`, :func:`~.truth.cert_numbers`,
  :func:`~.truth.shared_copies`, :func:`~.truth.shared_items`;
* :mod:`.prices` — :func:`~.prices.price_truth`: each category's weekly index path and shock
  week, and every copy's true value in any week (the market's and the auction house's prices
  scatter around it).

Example:
    >>> from rareindex_fakeweb.sites import truth
    >>> certs = truth.cert_numbers(7)                 # each has a page on grader.fake.test
    >>> handlers = build_sites(7)
    >>> sorted(handlers) == sorted(SITE_HOSTS)
    True
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from ._web import Lazy, site_rng
from .auction import AuctionHouse
from .grader import GraderSite
from .market import Marketplace
from .news import NewsSite
from .shopify import ShopifyStore
from .traps import Traps
from .woo import WooStore
from .woo_data import COINS_HOST, COMICS_HOST
from .world import World, build_world

__all__ = ["SITE_HOSTS", "SiteHandler", "build_sites", "site_rng"]

SiteHandler = Callable[[Request], Awaitable[Response]]

SITE_HOSTS: tuple[str, ...] = (
    "cards-shop.fake.test",
    COMICS_HOST,
    COINS_HOST,
    "auction.fake.test",
    "market.fake.test",
    "grader.fake.test",
    "news.fake.test",
    "traps.fake.test",
)


def build_sites(seed: int = 7) -> dict[str, SiteHandler]:
    """Every collectibles site, its data generated from ``seed`` (same seed, same pages).

    Nothing is generated here: the world and each site's pages are built on first use, once
    per call of this function.
    """
    world: Lazy[World] = Lazy(lambda: build_world(seed))
    return {
        "cards-shop.fake.test": ShopifyStore(seed, world),
        COMICS_HOST: WooStore(seed, COMICS_HOST, world),
        COINS_HOST: WooStore(seed, COINS_HOST, world),
        "auction.fake.test": AuctionHouse(seed, world),
        "market.fake.test": Marketplace(seed, world),
        "grader.fake.test": GraderSite(seed, world),
        "news.fake.test": NewsSite(seed, world),
        "traps.fake.test": Traps(),
    }
