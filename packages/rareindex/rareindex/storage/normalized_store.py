"""``normalized_records``: the staging rows between raw records and the canonical graph.

One row per record a connector's ``normalize()`` returned, keyed by
``(raw_id, parser_version, ordinal)`` with a stable id, so normalizing a raw record twice with the
same parser version writes nothing new. A raw record that failed to normalize gets one row with
``status='failed'``, ``kind='none'`` and the reason in ``reject_reason``: kept, counted, visible.

Example:
    >>> done = normalized_raw_ids(conn, ["raw_01…"], {"card-market": "3"})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import Connection, and_, delete, func, select, update

from .ids import stable_id
from .membership import one_of
from .schema import normalized_records, raw_records
from .upsert import merge, update_rows

__all__ = [
    "NormalizedRow",
    "PendingRow",
    "discard_missing_connector_rows",
    "insert_normalized",
    "normalized_raw_ids",
    "normalized_row_id",
    "pending_count",
    "pending_normalized",
    "raw_ids_in_scope",
    "reset_for_replay",
    "set_decisions",
    "unnormalized_raw_ids",
]

NormalizedRow = dict[str, Any]


class PendingRow(TypedDict):
    """A pending ``normalized_records`` row as :func:`pending_normalized` gives it to the
    indexer, with its raw record's fetch time and URL."""

    id: str
    raw_id: str
    connector_id: str
    parser_version: str
    ordinal: int
    kind: str
    record: dict[str, Any]
    status: str
    match_method: str | None
    match_confidence: float | None
    reject_reason: str | None
    anomaly_flags: list[str] | None
    asset_id: str | None
    variant_id: str | None
    created_at: datetime
    resolved_at: datetime | None
    fetched_at: datetime
    raw_url: str


def normalized_row_id(raw_id: str, parser_version: str, ordinal: int) -> str:
    return stable_id("nrm", raw_id, parser_version, ordinal)


def normalized_raw_ids(
    conn: Connection, raw_ids: Sequence[str], parser_versions: Mapping[str, str]
) -> set[str]:
    """Which of ``raw_ids`` already have rows for their connector's current parser version."""
    if not raw_ids:
        return set()
    rows = conn.execute(
        select(
            normalized_records.c.raw_id,
            normalized_records.c.connector_id,
            normalized_records.c.parser_version,
        )
        .where(one_of(normalized_records.c.raw_id, raw_ids, conn.dialect.name))
        .distinct()
    )
    return {r for r, c, v in rows if parser_versions.get(c) == v}


def insert_normalized(conn: Connection, rows: Sequence[NormalizedRow]) -> set[str]:
    """Insert rows not there yet; returns the ids actually inserted (a concurrent worker's or a
    repeated row is not, so nothing downstream counts it twice)."""
    # An upsert that does nothing on a clash returns only the rows it inserted. It sends them in
    # key order (two workers inserting the same raw records wait on each other in one order,
    # never crosswise: a deadlock), and on PostgreSQL as arrays through unnest().
    inserted = merge(
        conn,
        normalized_records,
        rows,
        conflict=["raw_id", "parser_version", "ordinal"],
        merged=(),
        returning=["id"],
    )
    return {row["id"] for row in inserted}


def discard_missing_connector_rows(conn: Connection, raw_ids: Sequence[str]) -> None:
    """Drop the ``connector_missing`` failure rows of raw records now normalized for real."""
    for start in range(0, len(raw_ids), 500):
        conn.execute(
            delete(normalized_records).where(
                one_of(
                    normalized_records.c.raw_id, raw_ids[start : start + 500], conn.dialect.name
                ),
                normalized_records.c.parser_version == "",
            )
        )


def raw_ids_in_scope(
    conn: Connection, *, connector_id: str | None = None, since: datetime | None = None
) -> list[str]:
    """Raw record ids, oldest first, of one connector (or all) fetched at or after ``since``."""
    query = select(raw_records.c.id).order_by(raw_records.c.fetched_at, raw_records.c.id)
    if connector_id:
        query = query.where(raw_records.c.connector_id == connector_id)
    if since:
        query = query.where(raw_records.c.fetched_at >= since)
    return list(conn.execute(query).scalars())


def pending_normalized(
    conn: Connection,
    *,
    limit: int,
    kinds: Iterable[str] | None = None,
    held: Container[str] | None = None,
) -> list[PendingRow]:
    """Up to ``limit`` pending rows in id order (their raw fetch time comes with them).

    ``held``: ids whose records the caller already holds (the pipeline's handoff); their
    ``record`` is None instead of read and decoded, and the others' come in a second query.
    """
    if held is not None and not held:
        held = None  # nothing held: the records come with the rows, in one query
    columns = [
        c
        for c in normalized_records.c
        if c.name != "fetched_at" and (held is None or c.name != "record")
    ]
    query = (
        select(
            *columns,  # fetched_at is the raw record's, below
            raw_records.c.fetched_at,
            raw_records.c.url.label("raw_url"),
        )
        .join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
        .where(normalized_records.c.status == "pending")
        .order_by(  # the pending index's order: a range scan, not a sort of every pending row
            normalized_records.c.fetched_at,
            normalized_records.c.raw_id,
            normalized_records.c.ordinal,
        )
        .limit(limit)
    )
    if kinds is not None:
        query = query.where(normalized_records.c.kind.in_(list(kinds)))
    result = conn.execute(query)
    keys = tuple(result.keys())
    rows = [dict(zip(keys, row, strict=True)) for row in result]
    if held is not None:
        missing = [row["id"] for row in rows if row["id"] not in held]
        records = _records_of(conn, missing) if missing else {}
        for row in rows:
            row["record"] = records.get(row["id"])
    return cast("list[PendingRow]", rows)


def _records_of(conn: Connection, ids: Sequence[str]) -> dict[str, Any]:
    query = select(normalized_records.c.id, normalized_records.c.record).where(
        one_of(normalized_records.c.id, ids, conn.dialect.name)
    )
    return {row_id: record for row_id, record in conn.execute(query)}


_DECISION_COLUMNS = (
    "status", "match_method", "match_confidence", "reject_reason", "asset_id", "variant_id",
    "anomaly_flags", "resolved_at",
)  # fmt: skip


def set_decisions(conn: Connection, decisions: Sequence[dict[str, Any]]) -> None:
    """Store match decisions: ``id, status, match_method, match_confidence, reject_reason,
    asset_id, variant_id, anomaly_flags, resolved_at`` per row, as one statement."""
    update_rows(
        conn,
        normalized_records,
        [{"id": d["id"], **{c: d[c] for c in _DECISION_COLUMNS}} for d in decisions],
        key="id",
    )


def reset_for_replay(conn: Connection, raw_ids: Sequence[str]) -> int:
    """Mark the normalized rows of ``raw_ids`` pending again (failed rows stay failed)."""
    total = 0
    for start in range(0, len(raw_ids), 500):
        chunk = list(raw_ids[start : start + 500])
        result = conn.execute(
            update(normalized_records)
            .where(
                and_(
                    one_of(normalized_records.c.raw_id, chunk, conn.dialect.name),
                    normalized_records.c.status.in_(("matched", "unmatched", "rejected")),
                    normalized_records.c.kind != "none",
                )
            )
            .values(status="pending")
        )
        total += result.rowcount or 0
    return total


def unnormalized_raw_ids(conn: Connection, *, limit: int) -> list[str]:
    """Raw records with no normalized row at all, oldest first: the sweep for lost messages."""
    query = (
        select(raw_records.c.id)
        .outerjoin(normalized_records, normalized_records.c.raw_id == raw_records.c.id)
        .where(normalized_records.c.id.is_(None))
        .order_by(raw_records.c.fetched_at, raw_records.c.id)
        .limit(limit)
    )
    return list(conn.execute(query).scalars())


def pending_count(conn: Connection) -> int:
    """How many normalized rows wait for resolution."""
    query = select(func.count()).where(normalized_records.c.status == "pending")
    return int(conn.execute(query).scalar_one())
