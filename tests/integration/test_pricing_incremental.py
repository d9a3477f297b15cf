"""The price index updated after a resolve batch equals a full rebuild on the same sales, on
SQLite and PostgreSQL: new sales in the newest week, an old sale in an early week, a sale that
leaves the index (flagged an anomaly), and a new unsold variant."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, insert, select, update

from rareindex.pricing import week_of
from rareindex.storage import upgrade
from rareindex.storage.pricing_store import rebuild, table_rows, update_after_batch
from rareindex.storage.schema import asset_variants, price_observations, sales
from tests.pricing_helpers import seed_market

WEEKS = 12


def _held_out(engine: Engine, ids: list[str]) -> list[dict[str, Any]]:
    """Take the sales ``ids`` out of the database (to come back as a batch)."""
    with engine.begin() as conn:
        rows = [dict(r._mapping) for r in conn.execute(select(sales).where(sales.c.id.in_(ids)))]
        conn.execute(delete(sales).where(sales.c.id.in_(ids)))
    return rows


def _incremental_then_full(engine: Engine, variants: set[str]) -> tuple[Any, Any, Any]:
    with engine.begin() as conn:
        summary = update_after_batch(conn, variants)
    with engine.connect() as conn:
        incremental = table_rows(conn)
    rebuild(engine, base=date(2025, 1, 6))
    with engine.connect() as conn:
        full = table_rows(conn)
    return summary, incremental, full


def test_incremental_update_equals_a_full_rebuild(any_engine: Engine) -> None:
    engine = any_engine
    upgrade(engine)
    seed_market(engine, weeks=WEEKS)
    with engine.connect() as conn:
        chain = conn.execute(
            select(sales.c.id, sales.c.variant_id, sales.c.sale_date).order_by(
                sales.c.sale_date, sales.c.id
            )
        ).all()
    plain = [r for r in chain if r.id.startswith("sal_0")]  # not the lot, outlier or hammer
    newest = [r.id for r in plain[-9:]]  # the newest week's last sales
    early = [r.id for r in chain if r.variant_id == "var_2_PSA9"][3]  # week 3 of twelve
    held = _held_out(engine, [*newest, early])
    rebuild(engine, base=date(2025, 1, 6))

    # 1. a batch of the newest sales: only the newest week is recomputed
    late = [r for r in held if r["id"] in newest]
    with engine.begin() as conn:
        conn.execute(insert(sales), late)
    summary, incremental, full = _incremental_then_full(engine, {r["variant_id"] for r in late})
    assert summary is not None and not summary.full and summary.changed_sales == len(late)
    assert summary.resumed == {"category:sports": week_of(min(r["sale_date"] for r in late))}
    assert incremental == full
    assert incremental["index_values"] and incremental["priced_sales"]

    # 2. an old sale arriving late (a backfill): recomputed from its week on, the same as full
    old = [r for r in held if r["id"] == early]
    with engine.begin() as conn:
        conn.execute(insert(sales), old)
    summary, incremental, full = _incremental_then_full(engine, {"var_2_PSA9"})
    assert summary is not None and summary.resumed == {"category:sports": date(2025, 1, 27)}
    assert incremental == full

    # 3. a sale flagged an anomaly leaves the index
    with engine.begin() as conn:
        victim = conn.execute(
            select(sales.c.id, sales.c.sale_date, sales.c.price).where(
                sales.c.variant_id == "var_3_raw"
            )
        ).all()[5]
        conn.execute(
            insert(price_observations).values(
                id="obs_flagged",
                observation_date=victim.sale_date,
                source_item_id="flagged",
                kind="sale",
                price=victim.price,
                currency="USD",
                sale_id=victim.id,
                anomaly_reason="modified_z",
                source_id="demo",
                connector_id="demo-cards",
                asset_id="ast_3",
                variant_id="var_3_raw",
            )
        )
    summary, incremental, full = _incremental_then_full(engine, {"var_3_raw"})
    assert summary is not None and summary.changed_sales == 1
    assert victim.id not in {row[0] for row in incremental["priced_sales"]}
    assert incremental == full

    # 4. a new variant with no sale: no sale changed, yet it gets its derived estimate
    with engine.begin() as conn:
        conn.execute(
            insert(asset_variants).values(
                id="var_4_PSA10x",
                asset_id="ast_4",
                variant_key="card-4|PSA|10|x",
                grader="PSA",
                grade="10",
                qualifier="x",
            )
        )
    summary, incremental, full = _incremental_then_full(engine, {"var_4_PSA10x"})
    assert summary is not None and summary.changed_sales == 0
    assert incremental == full

    # nothing new: nothing to do
    with engine.begin() as conn:
        summary = update_after_batch(conn, {"var_4_PSA10x"})
    assert summary is not None and summary.changed_sales == 0 and summary.resumed == {}


def test_no_update_before_a_first_build(any_engine: Engine) -> None:
    upgrade(any_engine)
    seed_market(any_engine, weeks=4)
    with any_engine.begin() as conn:
        assert update_after_batch(conn, {"var_1_PSA9"}) is None
        assert conn.execute(select(sales.c.id).limit(1)).first() is not None
    with any_engine.connect() as conn:
        assert not any(table_rows(conn).values())


def test_rows_from_before_the_exact_state_trigger_one_full_rebuild(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    upgrade(engine)
    seed_market(engine, weeks=6)
    rebuild(engine)
    with engine.connect() as conn:
        full = table_rows(conn)
    with engine.begin() as conn:  # as a build before migration 0014 left them
        from rareindex.storage.schema import index_values, priced_sales

        conn.execute(update(index_values).values(log_level=None, se=None))
        conn.execute(delete(priced_sales))
        summary = update_after_batch(conn, {"var_1_PSA9"})
    assert summary is not None and summary.full
    with engine.connect() as conn:
        assert table_rows(conn) == full


def test_a_sale_moved_to_another_variant_leaves_its_old_one(sqlite_engine: Engine) -> None:
    engine = sqlite_engine
    upgrade(engine)
    seed_market(engine, weeks=WEEKS)
    rebuild(engine)
    with engine.begin() as conn:  # re-resolved: the batch only knows the variant it moved to
        moved = conn.execute(select(sales.c.id).where(sales.c.variant_id == "var_5_raw")).all()[4]
        conn.execute(update(sales).where(sales.c.id == moved.id).values(variant_id="var_5_PSA9"))
        summary = update_after_batch(conn, {"var_5_PSA9"})
    assert summary is not None and summary.variants == 2
    with engine.connect() as conn:
        incremental = table_rows(conn)
    rebuild(engine)
    with engine.connect() as conn:
        assert table_rows(conn) == incremental


def test_the_resolve_stage_updates_a_built_index(any_engine: Engine, tmp_path: Path) -> None:
    """Through the pipeline: a resolve batch of new sales after a build leaves the tables a full
    rebuild would (the call at the end of indexer._resolve_batch); before any build, nothing."""
    from rareindex.indexer import resolve_pending
    from rareindex.normalizer import normalize_raw
    from rareindex.storage import BlobStore, RawRecordStore
    from tests.integration.test_pipeline_statements import (
        REGISTRY,
        ZARD,
        _raw,
        _sale,
        _seen,
        _setup,
        _store,
    )

    engine = any_engine
    _setup(engine)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    grades = ("PSA 8", "PSA 9", "PSA 10")

    def sales_of(week: int) -> list[dict[str, Any]]:
        return [
            _sale(
                f"w{week}-{g}", f"{ZARD} {g}", f"{(100 + 10 * n) * (1 + 0.02 * week):.2f}", 7 * week
            )
            for n, g in enumerate(grades)
        ]

    def ingest(name: str, weeks: range) -> None:
        records = [s for w in weeks for s in sales_of(w)]
        raw_ids = _store(engine, store, [_raw(name, _seen(7 * weeks.stop), records)])
        normalize_raw(engine, REGISTRY, raw_ids, blobs=store.blobs)
        resolve_pending(engine)

    ingest("first", range(0, 6))
    with engine.connect() as conn:
        assert not any(table_rows(conn).values())  # no build yet: the resolve stage built nothing
    rebuild(engine)
    ingest("later", range(6, 8))  # two more weeks, resolved after the build
    with engine.connect() as conn:
        incremental = table_rows(conn)
        later = {
            r[0] for r in conn.execute(select(sales.c.id).where(sales.c.external_id.like("w7-%")))
        }
    assert later and later <= {row[0] for row in incremental["priced_sales"]}
    rebuild(engine)
    with engine.connect() as conn:
        assert table_rows(conn) == incremental
