"""Who may call the admin API: bearer tokens, stored hashed.

A token is shown once, when it is created (``rareindex tokens create NAME``); the table keeps only
its SHA-256. ``revoked_at`` is set, never deleted, so ``tokens list`` still shows who had access.
At most one *live* (not revoked) token has a given name: the partial unique index
``ux_api_tokens_active_name`` refuses a second, on both dialects, and a revoked name can be reused.
"""

from __future__ import annotations

from sqlalchemy import CheckConstraint, Column, Index, Table, Text, text

from ..types import UTCDateTime
from ._base import created_at, metadata

__all__ = ["API_TOKEN_ROLES", "LIVE_TOKEN_PREDICATE", "active_token_name_index", "api_tokens"]

API_TOKEN_ROLES = ("admin", "read")
"""``read``: every GET and ``POST /api/lookup``; ``admin``: also pause, resume and requeue."""

LIVE_TOKEN_PREDICATE = text("revoked_at IS NULL")

api_tokens = Table(
    "api_tokens",
    metadata,
    Column("id", Text, primary_key=True, comment="tok_<16 hex>: names the token, not a secret"),
    Column("name", Text, nullable=False),
    Column(
        "token_hash",
        Text,
        nullable=False,
        unique=True,
        comment="sha256 hex of the whole token; the token itself is never stored",
    ),
    Column("role", Text, nullable=False, server_default="admin"),
    created_at(),
    Column("last_used_at", UTCDateTime()),
    Column("revoked_at", UTCDateTime()),
    CheckConstraint("role IN ('admin', 'read')", name="role"),
)

active_token_name_index = Index(
    "ux_api_tokens_active_name",
    api_tokens.c.name,
    unique=True,
    postgresql_where=LIVE_TOKEN_PREDICATE,
    sqlite_where=LIVE_TOKEN_PREDICATE,
)
