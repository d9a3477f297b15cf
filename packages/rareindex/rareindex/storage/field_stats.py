"""``connector_field_stats``: daily field-presence counters per connector (schema drift).

The normalizer counts a batch (:func:`rareindex.quality.count_fields`) and adds it to the day's
counters. Adding is an upsert that sums (``present = present + excluded.present``), so concurrent
normalizers of one connector never lose an increment. Adding is not idempotent by itself: count
only the records a batch newly stored, in the transaction that stores them, and a replay (which
stores nothing new, invariant 3 of docs/architecture.md) adds nothing.

Example:
    >>> with engine.begin() as conn:                                        # doctest: +SKIP
    ...     add_field_stats(conn, "card-market", date(2026, 11, 30),
    ...                     {("sale", "identifiers.upc"): (18, 20)})
    ...     load_field_history(conn, "card-market", date(2026, 11, 23))
    {datetime.date(2026, 11, 30): {('sale', 'identifiers.upc'): (18, 20)}}
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import Connection, select
from sqlalchemy.dialects import postgresql, sqlite

from .schema import connector_field_stats

__all__ = [
    "FieldStatsRow",
    "add_field_stats",
    "add_field_stats_many",
    "field_presence",
    "load_field_histories",
    "load_field_history",
]


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
    return add_field_stats_many(conn, {(connector_id, day): counts})


def add_field_stats_many(
    conn: Connection,
    counts: Mapping[tuple[str, date], Mapping[tuple[str, str], tuple[int, int]]],
) -> int:
    """:func:`add_field_stats` for several ``(connector, day)`` at once, in one multi-row upsert
    (a batch of raw records spans connectors and fetch days); returns the rows touched.

    Raises:
        ValueError: a counter is negative or has more present than total (nothing is written).
    """
    rows = []
    for (connector_id, day), fields in sorted(counts.items()):
        for (kind, field), (present, total) in sorted(fields.items()):
            if not 0 <= present <= total:
                raise ValueError(
                    f"bad counters for {kind}.{field}: present={present} total={total}"
                )
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
    if rows:
        # Sorted rows take row locks in one order, so two PostgreSQL writers cannot deadlock.
        conn.execute(_add_statement(conn.dialect.name), rows)
    return len(rows)


@functools.lru_cache(maxsize=4)
def _add_statement(dialect_name: str) -> Any:
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    table = connector_field_stats
    statement = dialect.insert(table)
    # RETURNING makes the executemany go out as multi-row VALUES batches on every dialect.
    return statement.on_conflict_do_update(
        index_elements=["connector_id", "day", "record_kind", "field"],
        set_={
            "present": table.c.present + statement.excluded.present,
            "total": table.c.total + statement.excluded.total,
        },
    ).returning(table.c.day)


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


def load_field_histories(
    conn: Connection, connector_ids: Iterable[str], since_day: date
) -> dict[str, dict[date, dict[tuple[str, str], tuple[int, int]]]]:
    """:func:`load_field_history` of several connectors, in one query."""
    ids = sorted(set(connector_ids))
    histories: dict[str, dict[date, dict[tuple[str, str], tuple[int, int]]]] = {
        connector_id: {} for connector_id in ids
    }
    if not ids:
        return histories
    table = connector_field_stats
    result = conn.execute(
        select(
            table.c.connector_id,
            table.c.day,
            table.c.record_kind,
            table.c.field,
            table.c.present,
            table.c.total,
        ).where(table.c.connector_id.in_(ids), table.c.day >= since_day)
    )
    for connector_id, day, kind, field, present, total in result:
        histories[connector_id].setdefault(day, {})[(kind, field)] = (present, total)
    return histories
