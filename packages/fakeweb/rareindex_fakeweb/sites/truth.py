"""Ground truth across sites: where every copy appears, which certs exist, what is shared.

Tests of adapters and entity resolution compare what they extracted with these answers:

* :func:`appearances` — every (host, path) that offers or sold a copy, with its price.
* :func:`cert_numbers` — every cert number of a copy any site offers or sold, as the grader
  prints it (each one has a ``grader.fake.test/cert/<number>`` page).
* :func:`shared_copies` — the same physical slab (same cert) on a store, the auction house and
  the marketplace.
* :func:`shared_items` — item identities (grade aside) offered by two or more hosts.
* :func:`price_truth` — what every copy is truly worth in any week: each category's weekly index
  path (drift, noise, one shock) that the marketplace's and the auction house's prices scatter
  around (:mod:`.prices`).

Example:
    >>> from rareindex_fakeweb.sites import truth
    >>> slab = truth.shared_copies(7)[0]
    >>> sorted({a.host for a in slab.appearances})              # doctest: +SKIP
    ['auction.fake.test', 'cards-shop.fake.test', 'market.fake.test']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from .auction_data import HOST as AUCTION_HOST
from .auction_data import auction_data
from .market_data import HOST as MARKET_HOST
from .market_data import market_data
from .prices import PriceTruth, price_truth
from .shopify_data import HOST as SHOP_HOST
from .shopify_data import shop_data
from .woo_data import COINS_HOST, COMICS_HOST, woo_data
from .world import Copy, world

__all__ = [
    "Appearance",
    "PriceTruth",
    "SharedCopy",
    "appearances",
    "cert_numbers",
    "price_truth",
    "shared_copies",
    "shared_items",
]


@dataclass(frozen=True, slots=True)
class Appearance:
    """One copy on one page. ``amount`` is in minor units of ``currency`` (``None``: unsold)."""

    host: str
    path: str
    copy: Copy
    kind: Literal["ask", "sold", "active", "unsold"]
    amount: int | None
    currency: str
    minor_unit: int = 2


@dataclass(frozen=True, slots=True)
class SharedCopy:
    copy: Copy
    appearances: tuple[Appearance, ...]

    @property
    def cert(self) -> str:
        return self.copy.grade.cert or ""


@functools.lru_cache(maxsize=4)
def appearances(seed: int) -> tuple[Appearance, ...]:
    """Every copy on every collectibles site for ``seed``, site by site, in feed order."""
    found: list[Appearance] = []
    shop = shop_data(seed)
    for product in shop.products:
        copy = shop.copies.get(product["handle"])
        if copy is not None:
            cents = int(product["variants"][0]["price"].replace(".", ""))
            path = f"/products/{product['handle']}"
            found.append(Appearance(SHOP_HOST, path, copy, "ask", cents, "USD"))
    for host in (COMICS_HOST, COINS_HOST):
        store = woo_data(seed, host)
        for product in store.products:
            # a variable product asks nothing itself: each of its variations does
            children = [store.variations[v["id"]] for v in product["variations"]]
            for offer in children or [product]:
                prices = offer["prices"]
                found.append(
                    Appearance(
                        host,
                        f"/wp-json/wc/store/v1/products/{offer['id']}",
                        store.copies[offer["id"]],
                        "ask",
                        int(prices["price"]),
                        prices["currency_code"],
                        prices["currency_minor_unit"],
                    )
                )
    for lot in auction_data(seed).lots():
        kind: Literal["sold", "unsold"] = "sold" if lot.sold else "unsold"
        for n, copy in enumerate(lot.copies):
            amount = lot.shares[n] if lot.shares else lot.realised
            found.append(Appearance(AUCTION_HOST, lot.path, copy, kind, amount, lot.currency))
    for listing in market_data(seed).listings:
        status: Literal["sold", "active"] = listing.status
        found.append(
            Appearance(
                MARKET_HOST, listing.path, listing.copy, status, listing.price, listing.currency
            )
        )
    return tuple(found)


def cert_numbers(seed: int) -> tuple[str, ...]:
    """Every cert number on any site for ``seed``, as printed, sorted."""
    return tuple(sorted({a.copy.grade.cert for a in appearances(seed) if a.copy.grade.cert}))


def shared_copies(seed: int) -> tuple[SharedCopy, ...]:
    """The slabs a store offers that were also sold at auction and on the marketplace."""
    by_copy: dict[str, list[Appearance]] = {}
    for appearance in appearances(seed):
        by_copy.setdefault(appearance.copy.key, []).append(appearance)
    return tuple(SharedCopy(c, tuple(by_copy[c.key])) for c in world(seed).shared)


def shared_items(seed: int) -> dict[str, tuple[str, ...]]:
    """Item key -> the hosts (sorted) offering or selling some copy of it, for items on two or
    more hosts."""
    hosts: dict[str, set[str]] = {}
    for appearance in appearances(seed):
        hosts.setdefault(appearance.copy.item.key, set()).add(appearance.host)
    return {key: tuple(sorted(found)) for key, found in sorted(hosts.items()) if len(found) > 1}
