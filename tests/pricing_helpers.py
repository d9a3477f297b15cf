"""Synthetic sales with a known answer for the pricing tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from rareindex.pricing import PricedSale

MONDAY = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def sale(
    variant: str,
    when: datetime,
    usd: float,
    *,
    asset: str | None = None,
    category: str = "sports",
    currency: str = "USD",
    local: float | None = None,
    n: int = 0,
) -> PricedSale:
    return PricedSale(
        sale_id=f"sal_{variant}_{when.isoformat()}_{n}",
        variant_id=variant,
        asset_id=asset or f"ast_{variant}",
        category=category,
        sold_at=when,
        price_usd=usd,
        price=Decimal(f"{local if local is not None else usd:.2f}"),
        currency=currency,
        sale_type="fixed",
    )


def trending_sales(
    weekly: list[float], *, variants: int = 60, per_week: int = 1, noise: float = 0.0, seed: int = 1
) -> list[PricedSale]:
    """Every variant sells ``per_week`` times a week at ``value * level[week]`` (times
    ``exp(noise)``); the true index is ``100 * weekly[w] / weekly[0]``."""
    rng = random.Random(seed)
    out = []
    for v in range(variants):
        value = 100 * (1 + v)
        for week, level in enumerate(weekly):
            for k in range(per_week):
                when = MONDAY + timedelta(weeks=week, hours=rng.randrange(0, 120))
                price = value * level * (2.718281828 ** rng.gauss(0, noise) if noise else 1.0)
                out.append(sale(f"var_{v:03d}", when, price, n=k))
    return out
