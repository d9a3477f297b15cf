"""``connector_field_stats``: daily field-presence counters per connector (schema drift, §6).

The normalizer counts a batch (:func:`rareindex.quality.count_fields`) and adds it to the day's
counters. Adding is an upsert that sums (``present = present + excluded.present``), so concurrent
normalizers of one connector never lose an increment. Adding is not idempotent by itself: count
only the records a batch newly stored, in the transaction that stores them, and a replay (which
stores nothing new, §9.3) adds nothing.

Example:
    >>> with engine.begin() as conn:                                        # doctest: +SKIP
    ...     add_field_stats(conn, "card-market", date(2026, 11, 30),
    ...                     {("sale", "identifiers.upc"): (18, 20)})
    ...     load_field_history(conn, "card-market", date(2026, 11, 23))
    {datetime.date(2026, 11, 30): {('sale', 'identifiers.upc'): (18, 20)}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, select
from sqlalchemy.dialects import postgresql, sqlite

from .schema import connector_field_stats

__all__ = ["FieldStatsRow", "add_field_stats", "field_presence", "load_field_history"]

# Rows per INSERT: 6 bound parameters each stays far below SQLite's oldest 999-variable limit.
_BATCH = 150


@dataclass(frozen=True, slots=True)
class FieldStatsRow:
    """One day's counters of one field of one record kind."""

    day: date
    record_kind: str
    field: str
    present: int
    total: int


def add_field_stats(
    conn: Connection,
    connector_id: str,
    day: date,
    counts: Mapping[tuple[str, str], tuple[int, int]],
) -> int:
    """Add ``(kind, field) -> (present, total)`` counters to ``day``'s; returns the rows touched.

    Raises:
        ValueError: a counter is negative or has more present than total (nothing is written).
    """
    rows = []
    for (kind, field), (present, total) in sorted(counts.items()):
        if not 0 <= present <= total:
            raise ValueError(f"bad counters for {kind}.{field}: present={present} total={total}")
        rows.append(
            {
                "connector_id": connector_id,
                "day": day,
                "record_kind": kind,
                "field": field,
                "present": present,
                "total": total,
            }
        )
    # Sorted rows take row locks in one order, so two PostgreSQL writers cannot deadlock.
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    table = connector_field_stats
    for start in range(0, len(rows), _BATCH):
        statement = dialect.insert(table).values(rows[start : start + _BATCH])
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["connector_id", "day", "record_kind", "field"],
                set_={
                    "present": table.c.present + statement.excluded.present,
                    "total": table.c.total + statement.excluded.total,
                },
            )
        )
    return len(rows)


def field_presence(conn: Connection, connector_id: str, since_day: date) -> list[FieldStatsRow]:
    """Every counter of ``connector_id`` from ``since_day`` on, by day, kind and field."""
    table = connector_field_stats
    result = conn.execute(
        select(table.c.day, table.c.record_kind, table.c.field, table.c.present, table.c.total)
        .where(table.c.connector_id == connector_id, table.c.day >= since_day)
        .order_by(table.c.day, table.c.record_kind, table.c.field)
    )
    return [FieldStatsRow(*row) for row in result]


def load_field_history(
    conn: Connection, connector_id: str, since_day: date
) -> dict[date, dict[tuple[str, str], tuple[int, int]]]:
    """The counters from ``since_day`` on, shaped for :func:`rareindex.quality.detect_drift`."""
    history: dict[date, dict[tuple[str, str], tuple[int, int]]] = {}
    for row in field_presence(conn, connector_id, since_day):
        history.setdefault(row.day, {})[(row.record_kind, row.field)] = (row.present, row.total)
    return history
