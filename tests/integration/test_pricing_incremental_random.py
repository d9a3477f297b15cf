"""Random resolve batches on a random stored market (category and set indices, GBP sales): after
each one, the tables :func:`update_after_batch` leaves are those a full :func:`rebuild` leaves,
row for row, on SQLite and PostgreSQL. Batches: the newest sales, late sales of an early week,
sales anywhere, and a sale flagged an anomaly (it leaves the index)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, insert

from rareindex.fx import load_ecb_rates
from rareindex.storage import upgrade
from rareindex.storage.pricing_store import rebuild, table_rows, update_after_batch
from rareindex.storage.schema import (
    asset_variants,
    assets,
    price_observations,
    sales,
    sets,
)
from tests.pricing_helpers import add_demo_connector
from tests.unit.rareindex.test_pricing_resume import START, WEEKS, market

BASE = START.date()


def _store(engine: Engine, seed: int) -> list[dict[str, Any]]:
    """A random market (:func:`market`) stored as sales; returns the sale rows."""
    rng = random.Random(seed)
    priced, refs = market(rng)
    load_ecb_rates(engine, currencies=["GBP", "USD"], since=BASE - timedelta(days=7))
    subject = {"source_id": "demo", "connector_id": "demo-cards"}
    rows = [
        {
            "id": s.sale_id,
            "sale_date": s.sold_at,
            "external_id": s.sale_id,
            "title": s.sale_id,
            "sale_type": "fixed",
            "price_basis": "sold_price",
            "price": s.price,
            "currency": s.currency,
            "asset_id": s.asset_id,
            "variant_id": s.variant_id,
            **subject,
        }
        for s in priced
    ]
    with engine.begin() as conn:
        add_demo_connector(conn)
        found = sorted({(r.set_id, r.category) for r in refs if r.set_id})
        conn.execute(
            insert(sets),
            [{"id": s, "category": c, "name": s, "normalized_name": s} for s, c in found],
        )
        items = sorted({(r.asset_id, r.category, r.set_id) for r in refs})
        conn.execute(
            insert(assets),
            [
                {"id": a, "asset_key": a, "category": c, "title": a, "set_id": s}
                for a, c, s in items
            ],
        )
        conn.execute(
            insert(asset_variants),
            [
                {
                    "id": r.variant_id,
                    "asset_id": r.asset_id,
                    "variant_key": r.variant_id,
                    "grader": None if r.grade == "raw" else "PSA",
                    "grade": None if r.grade == "raw" else r.grade.split()[1],
                }
                for r in refs
            ],
        )
    return rows


def _held(rng: random.Random, rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    ordered = sorted(rows, key=lambda r: (r["sale_date"], r["id"]))
    if kind == "newest":
        return ordered[-rng.randint(5, 40) :]
    if kind == "late":
        week = rng.randint(2, WEEKS - 10)
        return [r for r in ordered if (r["sale_date"] - START).days // 7 == week][:6]
    return rng.sample(ordered, rng.randint(1, 30))


@pytest.mark.parametrize("seed", [1, 2])
def test_random_batches_leave_the_tables_of_a_full_rebuild(any_engine: Engine, seed: int) -> None:
    engine = any_engine
    upgrade(engine)
    rng = random.Random(seed)
    rows = _store(engine, seed)
    batches: list[list[dict[str, Any]]] = []
    for kind in ("newest", "late", "anywhere", "newest"):  # disjoint batches, none empty
        taken = {r["id"] for held in batches for r in held}
        batches.append(_held(rng, [r for r in rows if r["id"] not in taken], kind))
    assert all(batches)
    waiting = {r["id"]: r for held in batches for r in held}
    with engine.begin() as conn:
        conn.execute(insert(sales), [r for r in rows if r["id"] not in waiting])
    rebuild(engine, base=BASE)
    resumed: list[dict[str, date]] = []
    for held in batches:
        arriving = [waiting.pop(r["id"]) for r in held]
        with engine.begin() as conn:
            conn.execute(insert(sales), arriving)
            summary = update_after_batch(conn, {r["variant_id"] for r in arriving})
        assert summary is not None and not summary.full
        assert summary.changed_sales == len(arriving)
        resumed.append(summary.resumed)
        _same_as_a_full_rebuild(engine)
    # a stored sale flagged an anomaly: it leaves the index, the same as in a full rebuild
    victim = rng.choice(rows)
    with engine.begin() as conn:
        conn.execute(
            insert(price_observations).values(
                id="obs_flagged",
                observation_date=victim["sale_date"],
                source_item_id="flagged",
                kind="sale",
                price=victim["price"],
                currency=victim["currency"],
                sale_id=victim["id"],
                anomaly_reason="modified_z",
                source_id="demo",
                connector_id="demo-cards",
                asset_id=victim["asset_id"],
                variant_id=victim["variant_id"],
            )
        )
        summary = update_after_batch(conn, {victim["variant_id"]})
    assert summary is not None and summary.changed_sales == 1
    _same_as_a_full_rebuild(engine)
    # the batches resumed set indices as well as category ones, from early weeks too
    assert any(key.startswith("set:") for found in resumed for key in found)
    assert min(week for found in resumed for week in found.values()) < BASE + timedelta(weeks=30)


def _same_as_a_full_rebuild(engine: Engine) -> None:
    with engine.connect() as conn:
        incremental = table_rows(conn)
    rebuild(engine, base=BASE)
    with engine.connect() as conn:
        full = table_rows(conn)
    assert incremental == full
    assert full["index_values"] and full["price_estimates"] and full["grade_curves"]
