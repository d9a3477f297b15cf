"""The world: which physical copies exist and which site offers or sold each one.

A :class:`Copy` is one physical collectible: an :class:`~.catalog.Item` plus its
:class:`~.grading.Grade` (and cert). :func:`build_world` draws every site's copies from one seeded
generator, then threads a few *shared* copies through three sites each (a slab sold at the auction
house, resold on the marketplace and now offered by a store, same cert everywhere) so entity
resolution has true matches to find. Sites render their copies with their own generators.

Example:
    >>> w = world(7)
    >>> len(w.shop) >= 600, all(c.grade.cert for c in w.shared)
    (True, True)
"""

from __future__ import annotations

import functools
import itertools
import random
from dataclasses import dataclass

from ._web import site_rng
from .catalog import Category, Item, build_items
from .grading import Grade, GradeMaker, grade_factor, normalize_cert

__all__ = ["Copy", "World", "build_world", "world"]

SHOP_COPIES = 640
COMIC_COPIES = 320
COIN_COPIES = 80
MARKET_COPIES = 480
SALES: tuple[tuple[Category, ...], ...] = (("sports", "tcg"), ("tcg", "comic"), ("coin",))
"""The auction house's three sales and what each offers."""
SALE_LOTS = (60, 45, 35)


@dataclass(frozen=True, slots=True)
class Copy:
    """One physical copy of an item, raw or graded."""

    key: str
    item: Item
    grade: Grade

    @property
    def cert(self) -> str | None:
        return self.grade.cert

    @property
    def title(self) -> str:
        """The canonical title followed by the grade phrase (``… PSA 10 GEM MINT``)."""
        return f"{self.item.title} {self.grade.phrase}"

    def value_cents(self, rng: random.Random | None = None, spread: float = 0.15) -> int:
        """A fair USD price in cents: item value x grade factor, jittered by ``rng``."""
        value = self.item.value_cents * grade_factor(self.item, self.grade)
        if rng is not None:
            value *= rng.uniform(1 - spread, 1 + spread)
        return max(99, int(value))


@dataclass(frozen=True, slots=True)
class World:
    """Every copy, by the site that lists it. Site lists keep their order on the site."""

    seed: int
    items: tuple[Item, ...]
    shop: tuple[Copy, ...]
    comics: tuple[Copy, ...]
    coins: tuple[Copy, ...]
    sales: tuple[tuple[Copy, ...], ...]
    market: tuple[Copy, ...]
    shared: tuple[Copy, ...]
    """Graded copies listed by a store, sold at auction and resold on the marketplace."""

    def certified(self) -> dict[str, Copy]:
        """Every graded copy by its cert without dashes (what the grader can look up)."""
        pools = (self.shop, self.comics, self.coins, self.market, *self.sales)
        return {normalize_cert(c.grade.cert): c for pool in pools for c in pool if c.grade.cert}


@functools.lru_cache(maxsize=4)
def world(seed: int) -> World:
    """The world for ``seed`` (cached: ground truth for tests)."""
    return build_world(seed)


def build_world(seed: int) -> World:
    """Generate the world for ``seed`` afresh."""
    rng = site_rng(seed, "world")
    items = build_items(seed)
    grades = GradeMaker(rng)
    by_category: dict[Category, list[Item]] = {"sports": [], "tcg": [], "comic": [], "coin": []}
    for item in items:
        by_category[item.category].append(item)
    counter = iter(range(1, 10**6))
    pools: dict[tuple[tuple[Category, ...], bool], tuple[list[Item], list[float]]] = {}

    def copy(categories: tuple[Category, ...], graded: float, *, pricey: bool = False) -> Copy:
        if (categories, pricey) not in pools:
            pool = [i for c in categories for i in by_category[c]]
            weights = [i.value_cents ** (0.5 if pricey else 0.15) for i in pool]
            pools[categories, pricey] = (pool, list(itertools.accumulate(weights)))
        pool, cumulative = pools[categories, pricey]
        item = rng.choices(pool, cum_weights=cumulative)[0]
        grade = grades.graded(item) if rng.random() < graded else grades.raw(item)
        return Copy(f"cp{next(counter):05d}", item, grade)

    shop = [copy(("sports", "tcg"), 0.6) for _ in range(SHOP_COPIES)]
    comics = [copy(("comic",), 0.5) for _ in range(COMIC_COPIES)]
    coins = [copy(("coin",), 0.85) for _ in range(COIN_COPIES)]
    sales = [
        [copy(cats, 0.97, pricey=True) for _ in range(n)]
        for cats, n in zip(SALES, SALE_LOTS, strict=True)
    ]
    market = [
        copy(rng.choices((("sports",), ("tcg",), ("comic",), ("coin",)), (45, 30, 15, 10))[0], 0.65)
        for _ in range(MARKET_COPIES)
    ]

    shared: list[Copy] = []
    for store, sale, count in ((shop, 0, 12), (shop, 1, 4), (comics, 1, 6), (coins, 2, 6)):
        wanted = {"sports", "tcg"} if sale == 0 else {"tcg"} if store is shop else None
        picks = [
            c
            for c in store
            if c.grade.graded and c not in shared and (wanted is None or c.item.category in wanted)
        ]
        for chosen in rng.sample(picks, count):
            shared.append(chosen)
            sales[sale].insert(rng.randrange(len(sales[sale]) + 1), chosen)
            market.insert(rng.randrange(len(market) + 1), chosen)

    return World(
        seed=seed,
        items=items,
        shop=tuple(shop),
        comics=tuple(comics),
        coins=tuple(coins),
        sales=tuple(tuple(s) for s in sales),
        market=tuple(market),
        shared=tuple(shared),
    )
