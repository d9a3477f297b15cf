"""What the price index publishes: variant estimates, grade curves and index values.

Each table is rebuilt from the stored sales by ``rareindex index build``
(:mod:`rareindex.storage.pricing_store`); nothing else writes them. Numbers are exact decimals
rounded at fixed places (money at 2, levels and logs at 6), so a replay from raw records writes
byte-identical rows on SQLite and PostgreSQL. ``priced_sales`` and the ``log_level``/``se``
columns (double precision) hold what an incremental update after a resolve batch resumes from.
"""

from __future__ import annotations

from sqlalchemy import Column, Date, Double, Index, Integer, PrimaryKeyConstraint, Table, Text

from ..types import ExactDecimal, UTCDateTime
from ._base import metadata

__all__ = ["grade_curves", "index_values", "price_estimates", "priced_sales", "pricing_state"]

price_estimates = Table(
    "price_estimates",
    metadata,
    Column("variant_id", Text, primary_key=True),
    Column("asset_id", Text, nullable=False),
    Column("as_of", Date, nullable=False),
    Column("value_usd", ExactDecimal(), nullable=False),
    Column("low_usd", ExactDecimal(), nullable=False),
    Column("high_usd", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("value", ExactDecimal(), nullable=False),
    Column("low", ExactDecimal(), nullable=False),
    Column("high", ExactDecimal(), nullable=False),
    Column("n_sales", Integer, nullable=False),
    Column("first_sale", Date, nullable=False),
    Column("last_sale", Date, nullable=False),
    Column("log_sd", ExactDecimal(), nullable=False),
    Column("confidence", Text, nullable=False, comment="high, medium, low"),
    Column("basis", Text, nullable=False, comment="direct, derived"),
    Column("derived_from", Text),
    Index(None, "asset_id"),
)

grade_curves = Table(
    "grade_curves",
    metadata,
    Column("category", Text, nullable=False),
    Column("grade", Text, nullable=False),
    Column("reference", Text, nullable=False),
    Column("log_offset", ExactDecimal(), nullable=False),
    Column("assets", Integer, nullable=False),
    Column("spread", ExactDecimal(), nullable=False),
    PrimaryKeyConstraint("category", "grade"),
)

index_values = Table(
    "index_values",
    metadata,
    Column("index_id", Text, nullable=False, comment="category:<name>, set:<id>"),
    Column("week", Date, nullable=False, comment="the Monday (UTC) of the week"),
    Column("level", ExactDecimal(), nullable=False),
    Column("low", ExactDecimal(), nullable=False),
    Column("high", ExactDecimal(), nullable=False),
    Column("pairs", Integer, nullable=False),
    Column("method", Text, nullable=False, comment="base, wls, median, carried"),
    Column("log_level", Double),
    Column("se", Double),
    Column("base_week", Date),
    PrimaryKeyConstraint("index_id", "week"),
)

priced_sales = Table(
    "priced_sales",
    metadata,
    Column("sale_id", Text, primary_key=True),
    Column("variant_id", Text, nullable=False),
    Column("asset_id", Text, nullable=False),
    Column("category", Text, nullable=False),
    Column("set_id", Text),
    Column("sold_at", UTCDateTime(), nullable=False),
    Column("price_usd", Double, nullable=False),
    Column("price", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("sale_type", Text, nullable=False),
    Index(None, "variant_id"),
)

pricing_state = Table(
    "pricing_state",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column(
        "generation", Text, nullable=False, comment="a new random id at each priced_sales write"
    ),
)
