"""What is in the database: row counts per table and, on PostgreSQL, the partitions.

Example:
    >>> with engine.connect() as conn:                       # doctest: +SKIP
    ...     table_counts(conn)["raw_records"]
    0
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from sqlalchemy import Connection, func, select, text

from .schema import PARTITIONED_TABLES, metadata, normalized_records, raw_records

__all__ = ["ConnectorStats", "connector_stats", "ensure_partitions", "partitions", "table_counts"]


def table_counts(conn: Connection) -> dict[str, int]:
    """Rows per RareIndex table, by table name."""
    return {
        name: conn.execute(select(func.count()).select_from(table)).scalar_one()
        for name, table in sorted(metadata.tables.items())
    }


def partitions(conn: Connection) -> dict[str, list[str]]:
    """PostgreSQL partitions of each partitioned table (empty on SQLite)."""
    if conn.dialect.name != "postgresql":
        return {}
    rows = conn.execute(
        text(
            "SELECT parent.relname AS parent, child.relname AS child FROM pg_inherits "
            "JOIN pg_class parent ON parent.oid = pg_inherits.inhparent "
            "JOIN pg_class child ON child.oid = pg_inherits.inhrelid "
            "WHERE parent.relname = ANY(:names) ORDER BY parent.relname, child.relname"
        ),
        {"names": list(PARTITIONED_TABLES)},
    )
    found: dict[str, list[str]] = {name: [] for name in PARTITIONED_TABLES}
    for row in rows:
        found[row.parent].append(row.child)
    return found


def ensure_partitions(conn: Connection, *, months_back: int = 1, months_ahead: int = 3) -> int:
    """Create monthly partitions ahead on PostgreSQL (``ri_ensure_partitions``); 0 on SQLite."""
    if conn.dialect.name != "postgresql":
        return 0
    created = 0
    for table in PARTITIONED_TABLES:
        created += conn.execute(
            text("SELECT ri_ensure_partitions(CAST(:t AS regclass), :back, :ahead)"),
            {"t": table, "back": months_back, "ahead": months_ahead},
        ).scalar_one()
    return created


@dataclass(slots=True)
class ConnectorStats:
    """Per connector: raw records, normalized records by kind, failures by reason, matches."""

    connector_id: str
    raw: int = 0
    records: int = 0
    matched: int = 0
    unpriced: int = 0
    """Records with nothing to match (news, catalog items): matched by definition."""
    kinds: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)


def connector_stats(conn: Connection) -> list[ConnectorStats]:
    stats: dict[str, ConnectorStats] = {}
    for connector_id, n in conn.execute(
        select(raw_records.c.connector_id, func.count()).group_by(raw_records.c.connector_id)
    ):
        stats[connector_id] = ConnectorStats(connector_id, raw=int(n))
    rows = conn.execute(
        select(
            normalized_records.c.connector_id,
            normalized_records.c.kind,
            normalized_records.c.status,
            normalized_records.c.reject_reason,
            func.count(),
        ).group_by(
            normalized_records.c.connector_id,
            normalized_records.c.kind,
            normalized_records.c.status,
            normalized_records.c.reject_reason,
        )
    )
    for connector_id, kind, status, reason, n in rows:
        stat = stats.setdefault(connector_id, ConnectorStats(connector_id))
        if status in ("failed", "rejected") and kind == "none":
            stat.failures[reason or status] += int(n)
            continue
        stat.records += int(n)
        stat.kinds[kind] += int(n)
        if status == "matched":
            stat.matched += int(n)
        if kind in ("news_item", "catalog_item"):
            stat.unpriced += int(n)
    return sorted(stats.values(), key=lambda s: s.connector_id)
