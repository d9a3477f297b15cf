"""The auction house's sales and lots (:mod:`.auction` serves them): hammer, premium, realised.

Three closed sales: ``7041`` (sports and TCG, New York, USD, 20% buyer's premium), ``7042`` (TCG and
comics, Paris, EUR, 25%) and ``7043`` (US coins, Dallas, USD, 20%). Hammer prices fall on bid
increments; the premium is a percentage of the hammer; the price realised is their sum
(docs/domain.md#observations-and-prices). A few lots pass unsold. One lot of sale 7041 is a *group
lot* of three slabs (:attr:`Lot.is_group`), marked up as an ``AggregateOffer`` with one offer per
slab; three lot pages carry JSON-LD with a trailing comma (:attr:`Lot.broken_jsonld`), and the
broken pages and every third page repeat the offer as microdata (:attr:`Lot.microdata`).

A lot's fair value is its copies' true value in the week the sale closed
(:func:`.prices.price_truth`); the estimate brackets it and the hammer falls around it.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ._web import site_rng
from .prices import price_truth
from .world import Copy, World, world

__all__ = ["HOST", "AuctionData", "Lot", "Sale", "auction_data", "build_auction", "lot_title"]

HOST = "auction.fake.test"
USD_PER_EUR = 1.09
BROKEN_JSONLD = {"7041": 2, "7042": 1, "7043": 0}
# (sale id, title, city, currency, premium %, closing date)
SALES = (
    ("7041", "Sports & Trading Card Signature Auction", "New York", "USD", 20, (2026, 2, 21)),
    ("7042", "Cartes à collectionner & Bandes dessinées", "Paris", "EUR", 25, (2026, 3, 14)),
    ("7043", "U.S. Coins Showcase Auction", "Dallas", "USD", 20, (2026, 4, 11)),
)


@dataclass(frozen=True, slots=True)
class Lot:
    """One lot. Amounts are in the sale's currency, minor units (cents); ``None`` when unsold."""

    sale_id: str
    number: int
    title: str
    copies: tuple[Copy, ...]
    currency: str
    estimate_low: int
    estimate_high: int
    hammer: int | None
    premium: int | None
    realised: int | None
    shares: tuple[int, ...]
    """Group lots: each copy's part of the price realised (what the ``AggregateOffer`` lists)."""
    lastmod: datetime
    broken_jsonld: bool = False
    microdata: bool = False

    @property
    def path(self) -> str:
        return f"/lots/{self.sale_id}/{self.number}"

    @property
    def is_group(self) -> bool:
        return len(self.copies) > 1

    @property
    def sold(self) -> bool:
        return self.hammer is not None


@dataclass(frozen=True, slots=True)
class Sale:
    sale_id: str
    title: str
    city: str
    currency: str
    premium_pct: int
    closed: datetime
    lots: tuple[Lot, ...]

    @property
    def path(self) -> str:
        return f"/sales/{self.sale_id}"


@dataclass(frozen=True, slots=True)
class AuctionData:
    sales: tuple[Sale, ...]

    def lots(self) -> tuple[Lot, ...]:
        return tuple(lot for sale in self.sales for lot in sale.lots)

    def sale(self, sale_id: str) -> Sale | None:
        return next((s for s in self.sales if s.sale_id == sale_id), None)


@functools.lru_cache(maxsize=4)
def auction_data(seed: int) -> AuctionData:
    """The auction house for ``seed`` (ground truth for tests)."""
    return build_auction(seed, world(seed))


def lot_title(copy: Copy) -> str:
    """Catalogue style: grader before label and grade (``PSA NM-MT 8``, ``MS63 PCGS``)."""
    item, grade = copy.item, copy.grade
    if item.category == "coin":
        base = item.title.replace(f" {item.set_name}", "") if item.variant else item.title
        return f"{base} {grade.grade}{grade.designation} {grade.grader}" if grade.graded else base
    if item.category == "comic":
        variant = f" {item.variant}" if item.variant else ""
        head = f"{item.set_name} #{item.number} ({item.brand}, {item.year}){variant}"
        if grade.graded:
            return f"{head} CGC {grade.label} {grade.grade} {grade.page_quality}"
        return f"{head} Condition: {grade.label}"
    if not grade.graded:
        return f"{item.title} (Ungraded)"
    if grade.grader in ("BGS", "CGC", "SGC"):
        return f"{item.title} {grade.grader} {grade.grade} {grade.label}"
    qualifier = f" ({grade.qualifier})" if grade.qualifier else ""
    return f"{item.title} PSA {grade.label} {grade.grade}{qualifier}"


def _increment(amount: int) -> int:
    """Bid increments in whole currency units."""
    for ceiling, step in ((100, 5), (1_000, 10), (5_000, 50), (10_000, 100), (50_000, 500)):
        if amount < ceiling:
            return step
    return 1_000


def _on_increment(amount: float) -> int:
    step = _increment(int(amount))
    return max(step, int(amount) // step * step)


def build_auction(seed: int, world_: World) -> AuctionData:
    """Build every sale from the world's auction copies (uncached)."""
    rng = site_rng(seed, HOST)
    shared = {c.key for c in world_.shared}
    sales = []
    for (sale_id, title, city, currency, pct, ymd), copies in zip(SALES, world_.sales, strict=True):
        closed = datetime(*ymd, 22, 0, tzinfo=UTC)
        groups = _group(list(copies), shared, first_sale=sale_id == "7041")
        unsold = set(rng.sample([i for i, g in enumerate(groups) if g[0].key not in shared], 2))
        singles = [i for i, g in enumerate(groups) if len(g) == 1 and i not in unsold]
        broken = set(rng.sample(singles, BROKEN_JSONLD[sale_id]))
        lots = [
            _lot(
                rng,
                seed,
                sale_id,
                n,
                group,
                currency,
                pct,
                closed,
                n - 1 in unsold,
                n - 1 in broken,
            )
            for n, group in enumerate(groups, start=1)
        ]
        sales.append(Sale(sale_id, title, city, currency, pct, closed, tuple(lots)))
    return AuctionData(tuple(sales))


def _group(copies: list[Copy], shared: set[str], first_sale: bool) -> list[tuple[Copy, ...]]:
    groups: list[tuple[Copy, ...]] = [(c,) for c in copies]
    if first_sale:  # one group lot of three slabs, none of them shared
        start = next(
            i
            for i in range(2, len(copies) - 3)
            if all(c.key not in shared and c.grade.graded for c in copies[i : i + 3])
        )
        groups[start : start + 3] = [tuple(copies[start : start + 3])]
    return groups


def _lot(
    rng: random.Random,
    seed: int,
    sale_id: str,
    number: int,
    copies: tuple[Copy, ...],
    currency: str,
    pct: int,
    closed: datetime,
    unsold: bool,
    broken: bool,
) -> Lot:
    rate = 1 / USD_PER_EUR if currency == "EUR" else 1.0
    truth = price_truth(seed)
    values = [
        c.value_cents(rng, 0.3) * truth.level(c.item.category, closed) * rate / 100 for c in copies
    ]
    fair = sum(values)
    low, high = _on_increment(fair * 0.7), _on_increment(fair * 1.1)
    hammer = premium = realised = None
    shares: tuple[int, ...] = ()
    if not unsold:
        hammer_units = _on_increment(fair * rng.uniform(0.8, 1.3))
        hammer = hammer_units * 100
        premium = hammer * pct // 100
        realised = hammer + premium
        if len(copies) > 1:
            parts = [int(realised * v / fair) for v in values]
            parts[0] += realised - sum(parts)
            shares = tuple(parts)
    title = lot_title(copies[0])
    if len(copies) > 1:
        title = f"Group lot of {len(copies)} graded cards: " + "; ".join(
            lot_title(c) for c in copies
        )
    return Lot(
        sale_id=sale_id,
        number=number,
        title=title,
        copies=copies,
        currency=currency,
        estimate_low=low * 100,
        estimate_high=high * 100,
        hammer=hammer,
        premium=premium,
        realised=realised,
        shares=shares,
        lastmod=closed + timedelta(days=rng.randint(1, 9), seconds=rng.randrange(86400)),
        broken_jsonld=broken,
        microdata=broken or number % 3 == 0,
    )
