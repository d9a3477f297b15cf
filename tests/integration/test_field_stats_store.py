"""Field-presence counters on both dialects: adding a batch sums into the day's counters, and the
history loads back in the shape drift detection reads."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from sqlalchemy import Engine, func, insert, select

from rareindex.quality import detect_drift
from rareindex.storage import upgrade
from rareindex.storage.field_stats import (
    FieldStatsRow,
    add_field_stats,
    field_presence,
    load_field_history,
)
from rareindex.storage.schema import connector_field_stats, connectors, sources

DAY = date(2026, 11, 30)
UPC = ("sale", "identifiers.upc")
GRADE = ("sale", "grading.grade")


@pytest.fixture
def db(any_engine: Engine) -> Engine:
    upgrade(any_engine)
    with any_engine.begin() as conn:
        conn.execute(insert(sources).values(id="demo", name="Demo"))
        for connector_id in ("demo-cards", "other-cards"):
            conn.execute(
                insert(connectors).values(
                    id=connector_id,
                    source_id="demo",
                    version="1",
                    parser_version="1",
                    refresh_class="ACTIVE",
                    meta={},
                )
            )
    return any_engine


def test_two_adds_sum_the_counters(db: Engine) -> None:
    with db.begin() as conn:
        assert add_field_stats(conn, "demo-cards", DAY, {UPC: (9, 10), GRADE: (4, 10)}) == 2
    with db.begin() as conn:
        add_field_stats(conn, "demo-cards", DAY, {UPC: (1, 5), ("listing", "seller"): (3, 3)})
        add_field_stats(conn, "other-cards", DAY, {UPC: (7, 7)})

    with db.connect() as conn:
        rows = field_presence(conn, "demo-cards", DAY)
        stored = conn.execute(select(func.count()).select_from(connector_field_stats)).scalar()
    assert rows == [
        FieldStatsRow(DAY, "listing", "seller", 3, 3),
        FieldStatsRow(DAY, "sale", "grading.grade", 4, 10),
        FieldStatsRow(DAY, "sale", "identifiers.upc", 10, 15),
    ]
    assert stored == 4  # one row per (connector, day, kind, field): sums, not appends


def test_bad_counters_write_nothing(db: Engine) -> None:
    with db.begin() as conn:  # the transaction commits: nothing of the batch may be in it
        with pytest.raises(ValueError, match=r"identifiers\.upc"):
            add_field_stats(conn, "demo-cards", DAY, {GRADE: (1, 1), UPC: (11, 10)})
        with pytest.raises(ValueError, match="present=-1"):
            add_field_stats(conn, "demo-cards", DAY, {GRADE: (-1, 1)})
    with db.connect() as conn:
        assert field_presence(conn, "demo-cards", DAY) == []
    with db.begin() as conn:
        assert add_field_stats(conn, "demo-cards", DAY, {}) == 0


def test_the_history_loads_back_for_drift_detection(db: Engine) -> None:
    with db.begin() as conn:
        for back in range(1, 8):
            add_field_stats(conn, "demo-cards", DAY - timedelta(days=back), {UPC: (95, 100)})
        add_field_stats(conn, "demo-cards", DAY - timedelta(days=30), {UPC: (0, 100)})
        add_field_stats(conn, "demo-cards", DAY, {UPC: (10, 50)})
        add_field_stats(conn, "demo-cards", DAY, {UPC: (10, 50)})
        add_field_stats(conn, "other-cards", DAY, {GRADE: (1, 1)})

    with db.connect() as conn:
        history = load_field_history(conn, "demo-cards", DAY - timedelta(days=7))
    assert sorted(history) == [DAY - timedelta(days=back) for back in range(7, -1, -1)]
    assert history[DAY] == {UPC: (20, 100)}
    assert history[DAY - timedelta(days=3)] == {UPC: (95, 100)}

    [signal] = detect_drift(history, DAY)
    assert (signal.record_kind, signal.field) == UPC
    assert (signal.baseline_ratio, signal.today_ratio) == (0.95, 0.2)


def test_many_fields_in_one_add(db: Engine) -> None:
    counts = {("sale", f"field_{i:03d}"): (i % 3, 3) for i in range(400)}
    with db.begin() as conn:
        assert add_field_stats(conn, "demo-cards", DAY, counts) == 400
        add_field_stats(conn, "demo-cards", DAY, counts)
    with db.connect() as conn:
        history = load_field_history(conn, "demo-cards", DAY)
    assert history[DAY] == {key: (2 * present, 6) for key, (present, _) in counts.items()}
