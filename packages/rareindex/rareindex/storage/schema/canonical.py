"""The canonical graph: brands, sets, assets and their graded variants.

The grade is a variant (``asset_variants``), never part of the asset key; a raw copy is the variant
with ``grader`` NULL. ``variant_key`` spells the whole variant so it is unique without relying on
NULLs comparing equal (they do not, in SQL).
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, Table, Text, UniqueConstraint

from ..types import JSONDoc
from ._base import created_at, id_column, metadata, updated_at

__all__ = ["asset_variants", "assets", "brands", "sets"]

brands = Table(
    "brands",
    metadata,
    id_column(),
    Column("name", Text, nullable=False),
    Column("normalized_name", Text, nullable=False, unique=True),
    created_at(),
)

sets = Table(
    "sets",
    metadata,
    id_column(),
    Column("brand_id", Text, ForeignKey("brands.id")),
    Column("category", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("normalized_name", Text, nullable=False),
    Column("year", Integer),
    Column("set_code", Text),
    Column("language", Text),
    created_at(),
    UniqueConstraint("category", "normalized_name", "year"),
)

assets = Table(
    "assets",
    metadata,
    id_column(),
    Column("asset_key", Text, nullable=False, unique=True),
    Column("category", Text, nullable=False),
    Column("title", Text, nullable=False),
    Column("year", Integer),
    Column("brand_id", Text, ForeignKey("brands.id")),
    Column("set_id", Text, ForeignKey("sets.id")),
    Column("number", Text),
    Column("subject", Text),
    Column("parallel", Text),
    Column("edition", Text),
    Column("language", Text),
    Column("print_run", Integer),
    Column("identifiers", JSONDoc),
    Column("attributes", JSONDoc),
    # the external id of the catalog item it was imported from: a newer dump updates it in place
    Column("catalog_ref", Text),
    created_at(),
    updated_at(),
    Index(None, "category", "year", "set_id"),
    Index(None, "catalog_ref", unique=True),
)

asset_variants = Table(
    "asset_variants",
    metadata,
    id_column(),
    Column("asset_id", Text, ForeignKey("assets.id"), nullable=False),
    Column("variant_key", Text, nullable=False, unique=True),
    Column("grader", Text),
    Column("grade", Text),
    Column("qualifier", Text),
    Column("label_type", Text),
    Column("autograph_grade", Text),
    Column("print_mark", Text),  # the edition a title named for an asset without one
    created_at(),
    Index(None, "asset_id"),
)
