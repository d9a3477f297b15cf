"""Synthetic sales with a known answer for the pricing tests."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

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


def add_demo_connector(conn: Any) -> dict[str, str]:
    """The source ``demo`` and its connector ``demo-cards``, which the stored sales of the pricing
    tests name; returns those two columns, as a sale row holds them."""
    from sqlalchemy import insert

    from rareindex.storage.schema import connectors, sources

    conn.execute(insert(sources).values(id="demo", name="Demo"))
    conn.execute(
        insert(connectors).values(
            id="demo-cards",
            source_id="demo",
            version="1",
            parser_version="1",
            refresh_class="ACTIVE",
            meta={},
        )
    )
    return {"source_id": "demo", "connector_id": "demo-cards"}


def seed_market(engine: Any, *, weeks: int = 8) -> dict[str, str]:
    """A small stored market: six sports cards in raw, PSA 9 and PSA 10, each variant sold once a
    week (USD, prices following ``1 + 0.02 * week``), plus the odd sales the index must handle.
    Returns the ids the tests look at."""
    from sqlalchemy import insert

    from rareindex.storage.schema import (
        asset_variants,
        assets,
        auction_lots,
        auctions,
        price_observations,
        sales,
    )

    start = datetime(2025, 1, 6, 15, 0, tzinfo=UTC)  # a Monday
    ratios = {("", ""): 1.0, ("PSA", "9"): 2.5, ("PSA", "10"): 7.0}
    with engine.begin() as conn:
        subject = add_demo_connector(conn)
        n = 0
        for a in range(6):
            asset = f"ast_{a}"
            conn.execute(
                insert(assets).values(
                    id=asset, asset_key=f"card-{a}", category="sports", title=f"Card {a}"
                )
            )
            for (grader, grade), ratio in ratios.items():
                variant = f"var_{a}_{grader or 'raw'}{grade}"
                conn.execute(
                    insert(asset_variants).values(
                        id=variant,
                        asset_id=asset,
                        variant_key=f"card-{a}|{grader}|{grade}",
                        grader=grader or None,
                        grade=grade or None,
                    )
                )
                if a == 0 and grade == "10":
                    continue  # never sold: derived from its asset's other grades
                for week in range(weeks):
                    n += 1
                    price = 100 * (a + 1) * ratio * (1 + 0.02 * week) * (1 + 0.01 * (n % 3))
                    conn.execute(
                        insert(sales).values(
                            id=f"sal_{n:04d}",
                            sale_date=start + timedelta(weeks=week, hours=a),
                            external_id=f"x{n}",
                            title=f"Card {a} {grader} {grade}",
                            sale_type="fixed" if n % 2 else "auction",
                            price_basis="sold_price",
                            price=Decimal(f"{price:.2f}"),
                            currency="USD",
                            asset_id=asset,
                            variant_id=variant,
                            **subject,
                        )
                    )
        odd = {"asset_id": "ast_1", "variant_id": "var_1_PSA9", **subject}
        last = start + timedelta(weeks=weeks - 1, hours=12)
        conn.execute(  # an outlier the anomaly detector flagged
            insert(sales).values(
                id="sal_outlier",
                sale_date=last,
                external_id="out",
                title="Card 1 PSA 9",
                sale_type="fixed",
                price_basis="sold_price",
                price=Decimal("99999.00"),
                currency="USD",
                **odd,
            )
        )
        conn.execute(
            insert(price_observations).values(
                id="obs_outlier",
                observation_date=last,
                source_item_id="out",
                kind="sale",
                price=Decimal("99999.00"),
                currency="USD",
                sale_id="sal_outlier",
                anomaly_reason="modified_z",
                **odd,
            )
        )
        conn.execute(  # a lot of ten
            insert(sales).values(
                id="sal_lot",
                sale_date=last,
                external_id="lot",
                title="Lot of 10 Card 1 PSA 9",
                sale_type="auction",
                price_basis="sold_price",
                price=Decimal("5000.00"),
                currency="USD",
                is_lot=True,
                flags=["lot"],
                **odd,
            )
        )
        conn.execute(insert(auctions).values(id="auc_1", source_id="demo", external_id="a1"))
        conn.execute(  # an auction-house hammer price: premium added back from the lot's rate
            insert(auction_lots).values(
                id="lot_1",
                auction_id="auc_1",
                lot_number="7",
                external_id="lot-7",
                title="Card 1 PSA 9",
                status="sold",
                currency="USD",
                hammer_price=Decimal("500.00"),
                buyer_premium_rate=Decimal("0.20"),
                **odd,
            )
        )
        conn.execute(
            insert(sales).values(
                id="sal_hammer",
                sale_date=last,
                external_id="lot-7",
                title="Card 1 PSA 9",
                sale_type="auction_house",
                price_basis="hammer",
                price=Decimal("500.00"),
                currency="USD",
                **odd,
            )
        )
    return {"thin": "var_0_PSA10", "busy": "var_1_PSA9", "asset": "ast_0", "hammer": "sal_hammer"}
