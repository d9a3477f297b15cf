"""The change-event outbox: ``events`` and its one-row cursor counter ``event_cursor``.

An event is written in the transaction of the change it describes, and gets its ``cursor`` at
that transaction's commit, from ``event_cursor.last`` (see :mod:`rareindex.storage.outbox`): the
counter's row lock orders the committers, so cursors are in commit order and a reader that has
seen cursor *n* never later meets a cursor at or below *n*. ``pruned_through`` is the newest
cursor ``rareindex events prune`` deleted: a reader at an older cursor is told it missed events.
"""

from __future__ import annotations

from sqlalchemy import BigInteger, CheckConstraint, Column, Index, Integer, Table, Text

from ..types import JSONDoc, UTCDateTime
from ._base import metadata

__all__ = ["EVENT_TYPES", "event_cursor", "events"]

EVENT_TYPES = (
    "sale.recorded",
    "auction_lot.result",
    "listing.appeared",
    "listing.price_changed",
    "listing.ended",
    "cert.mismatch",
    "connector.health_changed",
    "estimate.moved",
    "review.accepted",
)
"""Every event type the outbox holds: a closed vocabulary, checked by
:func:`~rareindex.storage.outbox.emit` (not by the database, so a new type needs no migration)."""

events = Table(
    "events",
    metadata,
    Column("cursor", BigInteger, primary_key=True, autoincrement=False, comment="commit order"),
    Column("type", Text, nullable=False),
    Column("stream", Text, nullable=False, comment="asset:<id>, category:<cat>, connector:<id>"),
    Column("category", Text),
    Column("asset_id", Text),
    Column("variant_id", Text),
    Column("connector_id", Text),
    Column("payload", JSONDoc, nullable=False, comment="ids and values (money as strings)"),
    Column("created_at", UTCDateTime(), nullable=False, comment="when the cursor was given"),
)

Index("ix_events_created_at", events.c.created_at)

event_cursor = Table(
    "event_cursor",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("last", BigInteger, nullable=False, comment="the newest cursor given"),
    Column(
        "pruned_through",
        BigInteger,
        nullable=False,
        comment="events up to this cursor were pruned (0: none)",
    ),
    CheckConstraint("id = 1", name="one_row"),
)
