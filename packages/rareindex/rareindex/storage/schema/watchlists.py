"""Watchlists: what a principal (an API token's name) wants to hear about.

A watchlist names assets, variants, categories or a title query (at least one of them), with
optional price conditions: below or above a value in a currency, a move of more than a percentage.
Matching is pure code (:mod:`rareindex.watchlists`); rows are read and written by
:mod:`rareindex.storage.watchlist_store`, always for one principal.
"""

from __future__ import annotations

from sqlalchemy import Column, Index, Table, Text, UniqueConstraint

from ..types import ExactDecimal, JSONDoc
from ._base import created_at, id_column, metadata

__all__ = ["watchlists"]

watchlists = Table(
    "watchlists",
    metadata,
    id_column(),
    Column(
        "principal", Text, nullable=False, comment="token:<name> (API) or the CLI's --principal"
    ),
    Column("name", Text, nullable=False),
    Column("asset_ids", JSONDoc, comment="a JSON list of ast_ ids, or NULL"),
    Column("variant_ids", JSONDoc, comment="a JSON list of var_ ids, or NULL"),
    Column("categories", JSONDoc, comment="a JSON list of category names, or NULL"),
    Column("title_query", Text, comment="words every one of which the event's title must hold"),
    Column("below", ExactDecimal(), comment="a price below this, in currency"),
    Column("above", ExactDecimal(), comment="a price above this, in currency"),
    Column("currency", Text, comment="the ISO code of below / above"),
    Column("move_pct", ExactDecimal(), comment="a price move of more than this many percent"),
    created_at(),
    UniqueConstraint("principal", "name"),
    Index(None, "principal", "id"),
)
