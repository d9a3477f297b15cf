"""Messages that failed every retry: kept, shown by the CLI, and requeued by an operator."""

from __future__ import annotations

from sqlalchemy import Column, Index, Integer, Table, Text

from ..types import JSONDoc, UTCDateTime
from ._base import created_at, metadata

__all__ = ["dead_letters"]

dead_letters = Table(
    "dead_letters",
    metadata,
    Column("id", Text, primary_key=True, comment="the dramatiq message id"),
    Column("queue", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("args", JSONDoc, nullable=False),
    Column("kwargs", JSONDoc, nullable=False),
    Column("retries", Integer, nullable=False, server_default="0"),
    Column("error", Text, nullable=False),
    Column("failed_at", UTCDateTime(), nullable=False),
    Column("requeued_at", UTCDateTime()),
    created_at(),
    Index(None, "requeued_at", "failed_at"),
)
