"""The schema on both dialects: migrations round-trip, match the models, and hold the invariants
the database itself enforces (insert-only raw records, partitioned big tables on PostgreSQL)."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, ForeignKeyConstraint, insert, inspect, text, update
from sqlalchemy.exc import DBAPIError

from rareindex.storage import current_revision, downgrade, head_revision, upgrade
from rareindex.storage.census import ensure_partitions, partitions
from rareindex.storage.schema import (
    CHECKED_BY_TRIGGERS,
    PARTITIONED_TABLES,
    VIEWS,
    asset_variants,
    assets,
    connectors,
    fx_rates,
    metadata,
    raw_record_keys,
    raw_records,
    sales,
    sources,
)
from rareindex.storage.schema.fx import (
    exact_convert,
    sqlite_exact_convert_sql,
    sqlite_exact_layers,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def test_upgrade_downgrade_upgrade_round_trip(any_engine: Engine) -> None:
    upgrade(any_engine)
    assert current_revision(any_engine) == head_revision()
    assert set(metadata.tables) <= _tables(any_engine)
    assert set(VIEWS) <= set(inspect(any_engine).get_view_names())

    downgrade(any_engine, "base")
    assert current_revision(any_engine) is None
    assert _tables(any_engine) == set()
    assert inspect(any_engine).get_view_names() == []

    upgrade(any_engine)
    assert set(metadata.tables) <= _tables(any_engine)


def test_migrations_match_the_models(any_engine: Engine) -> None:
    upgrade(any_engine)
    partitions_of = {f"{t}_" for t in PARTITIONED_TABLES}

    def include(obj: object, name: str | None, type_: str, reflected: bool, _: object) -> bool:
        # Partitions are created by ri_ensure_partitions, not by the models.
        if type_ == "table" and name and name.startswith(tuple(partitions_of)):
            return False
        # PostgreSQL checks these keys with triggers, once a statement (migration 0020).
        return not (
            type_ == "foreign_key_constraint"
            and any_engine.dialect.name == "postgresql"
            and isinstance(obj, ForeignKeyConstraint)
            and any(CHECKED_BY_TRIGGERS in key.info for key in obj.elements)
        )

    with any_engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_object": include, "compare_type": False}
        )
        diff = compare_metadata(context, metadata)
    assert diff == []


def _seed_connector(engine: Engine) -> None:
    with engine.begin() as conn:
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


def _raw_row(raw_id: str, fetched_at: datetime) -> dict[str, object]:
    return {
        "id": raw_id,
        "fetched_at": fetched_at,
        "connector_id": "demo-cards",
        "external_id": "x",
        "url": "https://x.example/",
        "payload": {"a": 1},
        "engine": "api",
        "content_hash": "0" * 64,
        "connector_version": "1",
        "parser_version": "1",
    }


def test_raw_records_refuse_update_and_delete(any_engine: Engine) -> None:
    upgrade(any_engine)
    _seed_connector(any_engine)
    with any_engine.begin() as conn:
        conn.execute(insert(raw_records).values(_raw_row("raw_1", NOW)))
        conn.execute(
            insert(raw_record_keys).values(
                connector_id="demo-cards",
                external_id="x",
                content_hash="0" * 64,
                raw_id="raw_1",
                fetched_at=NOW,
            )
        )
    for statement in (
        update(raw_records).values(url="https://evil.example/"),
        raw_records.delete(),
        update(raw_record_keys).values(raw_id="raw_2"),
        raw_record_keys.delete(),
    ):
        with pytest.raises(DBAPIError, match="insert-only"), any_engine.begin() as conn:
            conn.execute(statement)
    with any_engine.connect() as conn:
        assert (
            conn.execute(text("SELECT url FROM raw_records")).scalar_one() == "https://x.example/"
        )


def test_multi_currency_views_use_the_rate_on_or_before_the_sale_date(any_engine: Engine) -> None:
    upgrade(any_engine)
    _seed_connector(any_engine)
    friday, sunday = date(2026, 11, 27), datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
    with any_engine.begin() as conn:
        conn.execute(
            insert(fx_rates),
            [
                {"rate_date": friday, "currency": "EUR", "per_usd": Decimal("0.9")},
                {"rate_date": friday, "currency": "JPY", "per_usd": Decimal("150")},
                {"rate_date": friday, "currency": "GBP", "per_usd": Decimal("0.8")},
                {"rate_date": friday, "currency": "CAD", "per_usd": Decimal("1.4")},
                {"rate_date": date(2026, 11, 30), "currency": "EUR", "per_usd": Decimal("0.5")},
            ],
        )
        conn.execute(
            insert(sales).values(
                id="sal_1",
                sale_date=sunday,
                source_id="demo",
                connector_id="demo-cards",
                external_id="e1",
                title="t",
                sale_type="auction",
                price_basis="hammer",
                price=Decimal("90.00"),
                currency="EUR",
            )
        )
        row = conn.execute(text("SELECT * FROM sales_multi_currency")).mappings().one()
    assert float(row["price_usd"]) == pytest.approx(100.0)
    assert float(row["price_jpy"]) == pytest.approx(15000.0)
    assert float(row["price_gbp"]) == pytest.approx(80.0)
    assert float(row["price_eur"]) == pytest.approx(90.0)  # Friday's rate, not Monday's 0.5


def test_postgres_partitions_big_tables_ahead(pg_engine: Engine) -> None:
    upgrade(pg_engine)
    with pg_engine.connect() as conn:
        partitioned = {
            row[0]
            for row in conn.execute(
                text(
                    "SELECT c.relname FROM pg_partitioned_table p "
                    "JOIN pg_class c ON c.oid = p.partrelid"
                )
            )
        }
        found = partitions(conn)
    assert partitioned == set(PARTITIONED_TABLES)
    this_month = datetime.now(UTC)
    ahead = (this_month.replace(day=1) + timedelta(days=95)).strftime("y%Ym%m")
    for table in PARTITIONED_TABLES:
        assert f"{table}_default" in found[table]
        assert f"{table}_{this_month.strftime('y%Ym%m')}" in found[table]
        assert f"{table}_{ahead}" in found[table]


def test_postgres_partition_maintenance_moves_rows_out_of_default(pg_engine: Engine) -> None:
    upgrade(pg_engine)
    _seed_connector(pg_engine)
    far = datetime.now(UTC).replace(day=15) + timedelta(days=31 * 8)  # beyond the months ahead
    with pg_engine.begin() as conn:
        conn.execute(insert(raw_records).values(_raw_row("raw_far", far)))
        assert ensure_partitions(conn, months_ahead=3) == 0
    with pg_engine.begin() as conn:
        created = ensure_partitions(conn, months_ahead=10)
    assert created == 3 * 7
    with pg_engine.connect() as conn:
        where = conn.execute(
            text("SELECT tableoid::regclass::text FROM raw_records WHERE id = 'raw_far'")
        ).scalar_one()
        assert where == f"raw_records_{far.strftime('y%Ym%m')}"
        # The move was allowed; an ordinary delete still is not.
    with pytest.raises(DBAPIError, match="insert-only"), pg_engine.begin() as conn:
        conn.execute(text("DELETE FROM raw_records"))


def test_migration_0007_keeps_every_stored_raw_payload_both_ways(any_engine: Engine) -> None:
    """jsonb -> json (and back) rewrites raw_records on PostgreSQL: every payload survives it,
    nested values, unicode and JSON null included; the insert-only triggers do not refuse it."""
    payload = {"title": "Carte Pokémon", "prices": [1, 2.5, None], "nested": {"a": True}}
    upgrade(any_engine, "0006")
    with any_engine.begin() as conn:
        conn.execute(insert(sources).values(id="s", name="S"))
        conn.execute(
            insert(connectors).values(
                id="c", source_id="s", version="1", parser_version="1", refresh_class="HOT", meta={}
            )
        )
        conn.execute(
            insert(raw_records).values(
                id="raw_1", fetched_at=NOW, connector_id="c", external_id="1", url="https://s/1",
                payload=payload, engine="api", content_hash="h", connector_version="1",
                parser_version="1",
            )
        )  # fmt: skip
    for revision in ("0007", "0006", "head"):
        if revision == "0006":
            downgrade(any_engine, revision)
        else:
            upgrade(any_engine, revision)
        with any_engine.connect() as conn:
            stored = conn.execute(text("SELECT payload FROM raw_records")).scalar_one()
        assert (stored if isinstance(stored, dict) else json.loads(stored)) == payload, revision


def test_migration_0008_adds_a_unique_catalog_ref_and_keeps_every_asset(
    any_engine: Engine,
) -> None:
    """``assets.catalog_ref`` comes NULL on the assets already there (no backfill), is unique
    where set (many NULLs are fine), and goes away again without losing an asset."""
    upgrade(any_engine, "0007")
    row = {"id": "ast_1", "asset_key": "k1", "category": "tcg_card", "title": "Carte Pokémon"}
    with any_engine.begin() as conn:
        conn.execute(insert(assets).values(row))  # an asset of a catalog imported before 0008
    for revision in ("0008", "0007", "head"):
        if revision == "0007":
            downgrade(any_engine, revision)
        else:
            upgrade(any_engine, revision)
        with any_engine.connect() as conn:
            stored = conn.execute(text("SELECT id, asset_key, title FROM assets")).all()
        assert [tuple(r) for r in stored] == [("ast_1", "k1", "Carte Pokémon")], revision
        columns = {c["name"] for c in inspect(any_engine).get_columns("assets")}
        assert ("catalog_ref" in columns) == (revision != "0007"), revision
    with any_engine.begin() as conn:
        assert conn.execute(text("SELECT catalog_ref FROM assets")).scalar_one() is None
        conn.execute(
            insert(assets),
            [
                {**row, "id": "ast_2", "asset_key": "k2", "catalog_ref": None},
                {**row, "id": "ast_3", "asset_key": "k3", "catalog_ref": "base1-4"},
            ],
        )
    with pytest.raises(DBAPIError, match=r"(?i)unique"), any_engine.begin() as conn:
        conn.execute(
            insert(assets).values(
                {**row, "id": "ast_4", "asset_key": "k4", "catalog_ref": "base1-4"}
            )
        )


def test_migration_0009_adds_a_variant_print_mark_and_keeps_every_variant(
    any_engine: Engine,
) -> None:
    """``asset_variants.print_mark`` comes NULL on the variants already there, so their keys and
    ids stay; it takes an edition afterwards, and goes away again without losing a variant."""
    upgrade(any_engine, "0008")
    asset = {"id": "ast_1", "asset_key": "k1", "category": "tcg_card", "title": "Charizard"}
    variant = {"id": "var_1", "asset_id": "ast_1", "variant_key": "k1|psa|9||||"}
    with any_engine.begin() as conn:
        conn.execute(insert(assets).values(asset))
        conn.execute(insert(asset_variants).values({**variant, "grader": "PSA", "grade": "9"}))
    for revision in ("0009", "0008", "head"):
        if revision == "0008":
            downgrade(any_engine, revision)
        else:
            upgrade(any_engine, revision)
        with any_engine.connect() as conn:
            stored = conn.execute(text("SELECT id, variant_key, grade FROM asset_variants")).all()
        assert [tuple(r) for r in stored] == [("var_1", "k1|psa|9||||", "9")], revision
        columns = {c["name"] for c in inspect(any_engine).get_columns("asset_variants")}
        assert ("print_mark" in columns) == (revision != "0008"), revision
    with any_engine.begin() as conn:
        assert conn.execute(text("SELECT print_mark FROM asset_variants")).scalar_one() is None
        conn.execute(
            insert(asset_variants).values(
                {**variant, "id": "var_2", "variant_key": "k1|psa|9||||1st edition",
                 "print_mark": "1st Edition"}
            )
        )  # fmt: skip
        marks = conn.execute(text("SELECT print_mark FROM asset_variants ORDER BY id")).all()
    assert [m for (m,) in marks] == [None, "1st Edition"]


def test_migration_0010_makes_the_fx_views_exact_and_says_why_a_price_is_null(
    any_engine: Engine,
) -> None:
    """0010 replaces the float views of 0001 with exact ones (rounded to the minor unit, with the
    rate's day and the reason for a NULL), and its downgrade puts the old ones back."""
    upgrade(any_engine, "0009")
    _seed_connector(any_engine)
    friday = date(2026, 11, 27)
    with any_engine.begin() as conn:
        conn.execute(
            insert(fx_rates),
            [
                {"rate_date": friday, "currency": c, "per_usd": Decimal(r)}
                for c, r in {
                    "EUR": "0.9",
                    "JPY": "150",
                    "GBP": "0.8",
                    "CAD": "1.4",
                    "AUD": "1.53",
                }.items()
            ],
        )
        for sale_id, currency in [("sal_aud", "AUD"), ("sal_kwd", "KWD")]:
            conn.execute(
                insert(sales).values(
                    id=sale_id,
                    sale_date=datetime(2026, 11, 29, 15, 0, tzinfo=UTC),
                    source_id="demo",
                    connector_id="demo-cards",
                    external_id=sale_id,
                    title="t",
                    sale_type="auction",
                    price_basis="hammer",
                    price=Decimal("100.00"),
                    currency=currency,
                )
            )
    query = text("SELECT * FROM sales_multi_currency ORDER BY id")
    for revision in ("0010", "0009", "head"):
        if revision == "0009":
            downgrade(any_engine, revision)
        else:
            upgrade(any_engine, revision)
        with any_engine.connect() as conn:
            aud, kwd = (dict(row) for row in conn.execute(query).mappings())
        if revision == "0009":
            assert "fx_missing_reason" not in aud
            assert float(aud["price_usd"]) == pytest.approx(100 / 1.53)
            continue
        assert Decimal(str(aud["price_usd"])) == Decimal("65.36")  # 100 / 1.53 = 65.359…
        assert Decimal(str(aud["price_jpy"])) == Decimal("9804")  # 9803.92… yen, no minor unit
        assert str(aud["fx_rate_date"]) == "2026-11-27" and aud["fx_rate_age_days"] == 2
        assert aud["fx_missing_reason"] is None
        assert kwd["price_usd"] is None and kwd["fx_missing_reason"] == "no_ecb_rate"


@pytest.mark.parametrize(
    ("price", "from_rate", "to_rate", "minor", "expected"),
    [
        ("1.005", "1", "1", 2, "1.00"),  # a tie: half to even
        ("1.015", "1", "1", 2, "1.02"),
        ("2.5", "1", "1", 0, "2"),
        ("10000", "157.046657", "1", 2, "63.68"),
        ("100.00", "0.796585", "157.046657", 0, "19715"),
        ("999999.99", "0.000123", "16234.5", 2, "131987803558170.73"),
    ],
)
def test_ri_fx_convert_is_the_same_exact_function_on_both_databases(
    any_engine: Engine, price: str, from_rate: str, to_rate: str, minor: int, expected: str
) -> None:
    upgrade(any_engine)
    arg = "CAST(:{} AS numeric)" if any_engine.dialect.name == "postgresql" else ":{}"
    call = f"SELECT ri_fx_convert({arg.format('p')}, {arg.format('f')}, {arg.format('t')}, :m)"
    with any_engine.connect() as conn:
        got = conn.execute(
            text(call), {"p": price, "f": from_rate, "t": to_rate, "m": minor}
        ).scalar_one()
    assert str(got) == expected == exact_convert(price, from_rate, to_rate, minor)


@pytest.mark.parametrize(
    ("price", "from_rate", "to_rate", "minor", "expected"),
    [
        ("1.005", "1", "1", 2, "1.00"),  # a tie: half to even
        ("1.015", "1", "1", 2, "1.02"),
        ("2.5", "1", "1", 0, "2"),
        ("3.5", "1", "1", 0, "4"),
        ("-2.5", "1", "1", 0, "-2"),
        ("10000", "157.046657", "1", 2, "63.68"),
        ("100.00", "0.796585", "157.046657", 0, "19715"),
        ("999999.99", "0.000123", "16234.5", 2, "131987803558170.73"),
        ("123456789012.345678", "16234.567891", "0.962001", 2, "7315596.90"),
        ("0.000001", "1", "1", 2, "0.00"),
    ],
)
def test_sqlite_plain_sql_conversion_is_ri_fx_convert(
    price: str, from_rate: str, to_rate: str, minor: int, expected: str
) -> None:
    """What the SQLite views compute, through a bare sqlite3 connection (no function registered)."""
    bare = sqlite3.connect(":memory:")
    try:
        got = bare.execute(
            sqlite_exact_convert_sql(minor),
            {"price": price, "from_rate": from_rate, "to_rate": to_rate},
        ).fetchone()[0]
    finally:
        bare.close()
    assert got == expected == exact_convert(price, from_rate, to_rate, minor).replace("-0", "0")


def test_sqlite_plain_sql_conversion_matches_exact_convert_on_random_values() -> None:
    """5,000 prices (0 to 6 decimals, up to 10^13) and ECB-sized rates: the integer arithmetic
    in SQL equals the decimal one, ties and all; only results past 2^63 minor units are NULL."""
    rng = random.Random(17)
    cases = []
    for _ in range(5000):
        scale = rng.choice([0, 1, 2, 3, 6])
        price = Decimal(rng.randint(1, 10 ** rng.randint(1, 13))).scaleb(-scale)
        if rng.random() < 0.1:  # ties on purpose: x.xx5 at the minor unit
            price = Decimal(rng.randint(1, 10**8) * 10 + 5).scaleb(-3)
        rates = [
            Decimal(1) if rng.random() < 0.2 else Decimal(rng.randint(1, 2 * 10**10)).scaleb(-6)
            for _ in range(2)
        ]
        cases.append((format(price, "f"), *(format(r, "f") for r in rates), rng.choice([0, 2, 3])))
    bare = sqlite3.connect(":memory:")
    try:
        for minor in (0, 2, 3):
            chosen = [c for c in cases if c[3] == minor]
            values = ", ".join(["(?, ?, ?)"] * len(chosen))
            source = (
                "SELECT column1 AS price, column2 AS from_rate, column3 AS rate_x "  # noqa: S608
                f"FROM (VALUES {values})"
            )
            query = f"SELECT price, from_rate, rate_x, x_price_x FROM ({sqlite_exact_layers(source, {'X': minor})})"  # noqa: E501,S608
            params = [v for c in chosen for v in c[:3]]
            for price, from_rate, to_rate, got in bare.execute(query, params):
                expected = exact_convert(price, from_rate, to_rate, minor)
                if got is None:
                    assert abs(Decimal(expected)).scaleb(minor) >= 2**63 // 10**6
                else:
                    assert got == expected, (price, from_rate, to_rate, minor)
    finally:
        bare.close()
