"""The review queue: observations held out of the index until a person accepts or rejects them.

``review_items`` holds one row per quarantined price observation (a sale, an auction result or a
listing's ask), with the reference it was judged against and the decision: ``pending`` until
reviewed, then ``accepted`` (it enters the index) or ``rejected`` (kept, marked, never indexed),
with who, when and why. ``review_limits`` holds the change limit per category (a factor: above
``factor`` x the reference or below 1/``factor`` of it is quarantined; ``*`` is the default of
every category without a row of its own). Written by :mod:`rareindex.storage.review_store`.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, Index, Table, Text

from ..types import ExactDecimal, UTCDateTime
from ._base import created_at, id_column, metadata

__all__ = ["REVIEW_STATUSES", "review_items", "review_limits"]

REVIEW_STATUSES = ("pending", "accepted", "rejected")

review_items = Table(
    "review_items",
    metadata,
    id_column(),
    Column("observation_id", Text, nullable=False, unique=True, comment="price_observations.id"),
    Column("kind", Text, nullable=False, comment="sale, realised, ask"),
    Column("sale_id", Text, comment="the sales row of a sale or realised observation"),
    Column("listing_id", Text, comment="the listings row of an ask"),
    Column("source_id", Text, nullable=False),
    Column("connector_id", Text, nullable=False),
    Column("asset_id", Text, nullable=False),
    Column("variant_id", Text, nullable=False),
    Column("category", Text),
    Column("observed_at", UTCDateTime(), nullable=False),
    Column("price", ExactDecimal(), nullable=False),
    Column("currency", Text, nullable=False),
    Column("reason", Text, nullable=False, comment="above_limit, below_limit, anomaly"),
    Column("anomaly_reason", Text, comment="the anomaly rule that flagged it (reason anomaly)"),
    Column("reference_basis", Text, comment="estimate or median (of recent sales)"),
    Column("reference", ExactDecimal(), comment="the reference price, in currency"),
    Column("ratio", ExactDecimal(), comment="price / reference"),
    Column("limit_factor", ExactDecimal(), comment="the category's limit when judged"),
    Column("status", Text, nullable=False, server_default="pending"),
    Column("decided_by", Text, comment="token:<name> (API) or user:<login> (CLI)"),
    Column("decided_at", UTCDateTime()),
    Column("decision_reason", Text),
    created_at(),
    CheckConstraint("status IN ('pending', 'accepted', 'rejected')", name="status"),
    Index(None, "status", "created_at"),
    Index(None, "connector_id", "created_at"),
    Index(None, "sale_id"),
    Index(None, "listing_id"),
)

review_limits = Table(
    "review_limits",
    metadata,
    Column("category", Text, primary_key=True, comment="a category, or * for the default"),
    Column("factor", ExactDecimal(), nullable=False),
    Column("set_by", Text),
    Column("set_at", UTCDateTime()),
)


_HELD_SQL = "r.status IN ('pending', 'rejected')"
_QUARANTINED = {
    "sales_multi_currency": (
        "EXISTS (SELECT 1 FROM review_items r "  # noqa: S608 - our own names only
        f"WHERE r.sale_id = b.id AND {_HELD_SQL})"
    ),
    "listings_multi_currency": (
        "EXISTS (SELECT 1 FROM review_items r "  # noqa: S608 - our own names only
        "WHERE r.listing_id = b.id AND r.price = b.price AND r.currency = b.currency "
        f"AND {_HELD_SQL})"
    ),
}


def views_with_review(statements: dict[str, str]) -> dict[str, str]:
    """The multi-currency views' ``CREATE VIEW`` statements (of
    :func:`~rareindex.storage.schema.fx.multi_currency_view_sql`) with one more column,
    ``quarantined``: the row is held out of the index by the review queue — a sale whose
    observation is pending or rejected, a listing whose current price is (boolean on PostgreSQL,
    0/1 on SQLite). Every other column is the view's own, unchanged."""
    out = {}
    for name, statement in statements.items():
        # one more column of the outer SELECT (over ``b``), not one more nesting level: SQLite's
        # parser stack has no room for another around the exact-conversion layers
        outer_from = "\nFROM ("
        assert statement.startswith(f"CREATE VIEW {name} AS SELECT") and outer_from in statement
        columns, rest = statement.split(outer_from, 1)
        out[name] = f"{columns},\n  {_QUARANTINED[name]} AS quarantined{outer_from}{rest}"
    return out
