"""An incremental build (``build_pricing(previous=Resume(...))``) equals a full build on the same
sales to the last bit, on random markets and random batches: new sales in the newest weeks, late
sales in early weeks, sales taken out, with category and set indices. And the pairs an update
forms as cells are those of :func:`sale_pairs`, in the same order."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest

from rareindex.pricing import PricedSale, VariantRef, build_pricing, week_of
from rareindex.pricing.build import Resume
from rareindex.pricing.repeat_sales import (
    pair_cells,
    sale_pairs,
    variant_weeks,
    weekly_cells,
    weekly_pairs,
)

START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)  # a Monday
WEEKS = 40
GRADES = {"raw": 1.0, "PSA 9": 2.5, "PSA 10": 7.0}


def market(rng: random.Random) -> tuple[list[PricedSale], list[VariantRef]]:
    """Two categories of random assets in three grades, some in sets, each variant selling a
    random number of times over :data:`WEEKS` weeks (fat-tailed noise, some in GBP)."""
    sales: list[PricedSale] = []
    refs: list[VariantRef] = []
    for category in ("coin", "sports"):
        levels = [1.0]
        for _ in range(WEEKS):
            levels.append(levels[-1] * math.exp(rng.gauss(0.002, 0.02)))
        for a in range(rng.randint(8, 14)):
            asset = f"ast_{category}_{a}"
            set_id = f"set_{category}_{a % 2}" if a % 3 else None
            value = rng.uniform(20, 2000)
            for grade, ratio in GRADES.items():
                if rng.random() < 0.15:
                    continue  # never sold: a derived estimate, if the curve allows
                variant = f"var_{asset}_{grade.replace(' ', '')}"
                refs.append(VariantRef(variant, asset, category, grade, set_id))
                for n in range(rng.randint(1, 45)):
                    when = START + timedelta(seconds=rng.randrange(WEEKS * 7 * 86_400))
                    noise = rng.gauss(0, 0.6 if rng.random() < 0.1 else 0.12)
                    usd = value * ratio * levels[(when - START).days // 7] * math.exp(noise)
                    gbp = rng.random() < 0.1
                    sales.append(
                        PricedSale(
                            sale_id=f"sal_{variant}_{n}",
                            variant_id=variant,
                            asset_id=asset,
                            category=category,
                            sold_at=when,
                            price_usd=usd,
                            price=Decimal(f"{usd * (0.79 if gbp else 1):.2f}"),
                            currency="GBP" if gbp else "USD",
                            sale_type="fixed",
                            set_id=set_id,
                        )
                    )
    return sales, refs


def changed_from(before: list[PricedSale], after: list[PricedSale]) -> dict[str, date]:
    """Index id -> the week of its earliest sale added, changed or removed (what the store's
    update hands the build)."""
    weeks: dict[str, date] = {}
    for sale in set(before) ^ set(after):
        keys = [f"category:{sale.category}"] + ([f"set:{sale.set_id}"] if sale.set_id else [])
        for key in keys:
            weeks[key] = min(weeks.get(key, week_of(sale.sold_at)), week_of(sale.sold_at))
    return weeks


def batch(rng: random.Random, sales: list[PricedSale]) -> tuple[list[PricedSale], str]:
    """Sales held out of the build that came before, and what kind of batch brings them."""
    kind = rng.choice(("newest", "late", "anywhere", "removed"))
    ordered = sorted(sales, key=lambda s: (s.sold_at, s.sale_id))
    if kind == "newest":
        return ordered[-rng.randint(1, 60) :], kind
    if kind == "late":  # a backfill of an early week
        week = week_of(START) + timedelta(weeks=rng.randint(2, WEEKS - 10))
        return [s for s in ordered if week_of(s.sold_at) == week][: rng.randint(1, 8)], kind
    return rng.sample(ordered, rng.randint(1, 40)), kind


@pytest.mark.parametrize("seed", range(12))
def test_a_resumed_build_equals_a_full_build_to_the_last_bit(seed: int) -> None:
    rng = random.Random(seed)
    sales, refs = market(rng)
    base = week_of(START) + timedelta(weeks=rng.choice((0, 3)))
    held, kind = batch(rng, sales)
    if kind == "removed":  # published with them, then they leave the index
        before, after = sales, [s for s in sales if s not in set(held)]
    else:
        before, after = [s for s in sales if s not in set(held)], sales
    if rng.random() < 0.3 and kind != "removed":  # one old sale re-priced in the same batch
        moved = rng.choice(before)
        after = [replace(s, price_usd=s.price_usd * 1.3) if s == moved else s for s in after]
    published = build_pricing(before, refs, base=base, min_set_pairs=30)
    resume = Resume(published.indices, changed_from(before, after))
    incremental = build_pricing(after, refs, base=base, min_set_pairs=30, previous=resume)
    full = build_pricing(after, refs, base=base, min_set_pairs=30)
    assert incremental.indices == full.indices
    assert incremental.estimates == full.estimates
    assert incremental.curves == full.curves
    assert incremental.as_of == full.as_of
    assert any(key.startswith("set:") for key in full.indices)
    # the batch changed something the resume had to recompute
    assert resume.changed_from and incremental.indices != published.indices


@pytest.mark.parametrize("seed", range(6))
def test_cells_hold_the_pairs_of_sale_pairs_in_their_order(seed: int) -> None:
    rng = random.Random(100 + seed)
    sales, _ = market(rng)
    rng.shuffle(sales)
    since = week_of(START) + timedelta(weeks=rng.randint(0, WEEKS))
    for cut in (None, since):
        grouped = variant_weeks(sales)
        pairs = weekly_pairs(grouped, since=cut)
        assert pairs == sale_pairs(sales, since=cut)
        cells = weekly_cells(grouped, since=cut)
        assert cells == pair_cells(pairs)
        flat = [
            (cell.second, cell.first, y, w)
            for second in sorted(cells)
            for cell in cells[second]
            for y, w in zip(cell.ys, cell.weights, strict=True)
        ]
        assert flat == [(p.second, p.first, p.log_ratio, p.weight) for p in pairs]
