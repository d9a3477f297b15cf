"""The price index built from stored sales, on SQLite and PostgreSQL: what enters it, what it
publishes, and that a second build (a replay) writes identical rows."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from rareindex.storage import upgrade
from rareindex.storage.pricing_store import (
    asset_estimates,
    index_ids,
    index_series,
    rebuild,
    sale_records,
    stored_estimate,
    table_rows,
)
from tests.pricing_helpers import seed_market


@pytest.fixture
def market(any_engine: Engine) -> tuple[Engine, dict[str, str]]:
    upgrade(any_engine)
    return any_engine, seed_market(any_engine)


def test_two_builds_write_identical_tables(market: tuple[Engine, dict[str, str]]) -> None:
    engine, _ = market
    first = rebuild(engine)
    with engine.connect() as conn:
        before = table_rows(conn)
    second = rebuild(engine)
    with engine.connect() as conn:
        after = table_rows(conn)
    assert first == second
    assert before == after
    assert before["index_values"] and before["price_estimates"] and before["grade_curves"]


def test_what_a_build_publishes(market: tuple[Engine, dict[str, str]]) -> None:
    """One build, read three ways (one test: each database's setup costs seconds)."""
    engine, ids = market
    summary = rebuild(engine)
    # lots and flagged outliers stay out; the hammer price gets its premium
    assert summary.dropped == {"anomaly": 1, "lot": 1}
    with engine.connect() as conn:
        est = stored_estimate(conn, ids["busy"])
        records = sale_records(conn, variant_id=ids["busy"])
        ladder = dict(asset_estimates(conn, ids["asset"]))
        derived = stored_estimate(conn, ids["thin"])
        assert [i[0] for i in index_ids(conn)] == ["category:sports"]
        series = index_series(conn, "category:sports")
    (hammer,) = [r for r in records if r.sale_id == ids["hammer"]]
    assert hammer.premium_rate is not None and float(hammer.premium_rate) == pytest.approx(0.2)
    assert est is not None
    assert est.n_sales == 9  # eight weekly sales and the auction-house one, not the lot or outlier
    assert 500 < est.value_usd < 700  # the outlier at 99,999 did not move it

    # a never-sold grade is derived, marked and wider
    assert derived is not None and derived.basis == "derived" and derived.confidence == "low"
    assert list(ladder) == ["raw", "PSA 9", "PSA 10"]
    source = ladder["PSA 9"] if derived.derived_from == "var_0_PSA9" else ladder["raw"]
    assert derived.high_usd / derived.low_usd > source.high_usd / source.low_usd
    assert derived.value_usd == pytest.approx(100 * 7 * 1.14, rel=0.1)

    # the category index follows the weekly trend, each point with its pairs
    assert len(series) == 8
    assert series[0].level == 100 and series[0].method == "base"
    levels = [float(p.level) / 100 for p in series]
    assert levels == pytest.approx([1 + 0.02 * w for w in range(8)], rel=0.02)
    assert all(p.pairs >= 16 for p in series[1:])


def test_sqlite_and_postgresql_publish_the_same_rows(
    sqlite_engine: Engine, pg_engine: Engine
) -> None:
    tables = []
    for engine in (sqlite_engine, pg_engine):
        upgrade(engine)
        seed_market(engine)
        rebuild(engine)
        with engine.connect() as conn:
            tables.append(table_rows(conn))
    assert tables[0] == tables[1]
