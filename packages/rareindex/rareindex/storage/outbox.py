"""The transactional outbox: change events written in the transaction of the change, with a
cursor in commit order.

A writer calls :func:`emit` on the connection of its transaction, beside the rows it writes; the
events wait in that transaction (in memory, on the connection) and are inserted when it commits,
as its last statements (:func:`publish`, run by a ``commit`` listener on the engine, so no writer
can forget it):

1. ``UPDATE event_cursor SET last = last + k RETURNING last`` gives the transaction the cursors
   ``last - k + 1 … last``. The row lock it takes is held until the commit, so a second writer
   waits there until the first has committed, and then continues from the first's ``last``.
   Cursors are therefore given in commit order: a reader that has read cursor *n* can never
   later meet a cursor at or below *n* (an id from a sequence gives no such promise: a slow
   transaction commits a smaller id after a faster one). On SQLite writers are serialized anyway.
2. One ``INSERT`` (many rows) of the events with their cursors.
3. On PostgreSQL, ``pg_notify('rareindex_events', last)``: delivered at the commit, it wakes
   the API processes' event streams.

The trade-off: writers of events serialize for the few milliseconds between their allocation and
their commit (the insert, the notify, the commit's WAL flush). Writers without events take no
lock. A rollback (or a failed commit) discards the waiting events with the change: a rolled-back
batch leaves no event. Savepoints roll back their own events.

The event dict (what readers get, what a watchlist matches): ``cursor``, ``type``, ``stream``
(``asset:<id>``, else ``category:<cat>``, else ``connector:<id>``), ``category``, ``asset_id``,
``variant_id``, ``connector_id``, ``payload`` (JSON: ids and values, money as decimal strings)
and ``created_at``.

Example:
    >>> emit(conn, [event("listing.ended", asset_id="ast_01…", payload={"listing_id": "lst_…"})])
    ... # doctest: +SKIP
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import structlog
from sqlalchemy import Connection, Engine, select, text, update
from sqlalchemy import event as sa_event

from .membership import one_of
from .schema import EVENT_TYPES, assets, event_cursor, events
from .upsert import append_rows

__all__ = ["NOTIFY_CHANNEL", "emit", "event", "money", "pending", "publish"]

log = structlog.get_logger(__name__)

NOTIFY_CHANNEL = "rareindex_events"
"""The PostgreSQL ``LISTEN`` channel; the payload is the newest cursor of the commit."""

_PENDING = "rareindex.outbox"
_SAVEPOINTS = "rareindex.outbox.savepoints"
_CHUNK = 500
_COLUMNS = tuple(c.name for c in events.c)
_CENT = Decimal("0.01")
_install_lock = threading.Lock()


def money(value: Decimal | int | str | None) -> str | None:
    """A price for a payload: a decimal string (never a float) with at least two decimals and
    no other trailing zeros, the same from either database (``100.000000`` -> ``"100.00"``)."""
    if value is None:
        return None
    exact = Decimal(value).normalize()
    if exact.as_tuple().exponent > -2:  # type: ignore[operator]
        exact = exact.quantize(_CENT)
    return format(exact, "f")


def event(
    type: str,
    *,
    payload: Mapping[str, Any],
    asset_id: str | None = None,
    variant_id: str | None = None,
    connector_id: str | None = None,
    category: str | None = None,
    stream: str | None = None,
) -> dict[str, Any]:
    """One event to :func:`emit`; its cursor and time are set at publish, and its stream then
    too unless given (``asset:<id>``, else ``category:<cat>``, else ``connector:<id>``)."""
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {type!r}; known: {', '.join(EVENT_TYPES)}")
    return {
        "type": type,
        "category": category,
        "asset_id": asset_id,
        "variant_id": variant_id,
        "connector_id": connector_id,
        "payload": dict(payload),
        "stream": stream,
    }


def emit(conn: Connection, new: Iterable[Mapping[str, Any]]) -> int:
    """Add events (from :func:`event`) to ``conn``'s transaction; they are written when it
    commits, and dropped if it rolls back. Returns how many were added."""
    rows = [dict(e) for e in new]
    if not rows:
        return 0
    _install(conn.engine)
    transaction = conn.get_transaction()
    held = conn.info.get(_PENDING)
    if held is None or held[0] is not transaction:
        if held is not None:  # a stale list, from a transaction that ended without a listener
            conn.info.pop(_SAVEPOINTS, None)
        held = (transaction, list[dict[str, Any]]())
        conn.info[_PENDING] = held
    held[1].extend(rows)
    return len(rows)


def pending(conn: Connection) -> int:
    """Events waiting for ``conn``'s transaction to commit."""
    held = conn.info.get(_PENDING)
    return 0 if held is None or held[0] is not conn.get_transaction() else len(held[1])


def publish(conn: Connection) -> int:
    """Write the waiting events of ``conn``'s transaction with their cursors (see the module);
    the commit listener calls it, as the transaction's last statements. Returns the count."""
    held = conn.info.pop(_PENDING, None)
    conn.info.pop(_SAVEPOINTS, None)
    if held is None or not held[1] or held[0] is not conn.get_transaction():
        return 0
    rows = held[1]
    _complete(conn, rows)
    count = len(rows)
    last = conn.execute(
        update(event_cursor)
        .where(event_cursor.c.id == 1)
        .values(last=event_cursor.c.last + count)
        .returning(event_cursor.c.last)
    ).scalar_one()
    now = datetime.now(UTC)
    first = last - count + 1
    for offset, row in enumerate(rows):
        row["cursor"] = first + offset
        row["created_at"] = now
    # One statement for the whole commit (an executemany on psycopg is one INSERT per event).
    append_rows(conn, events, [{c: row[c] for c in _COLUMNS} for row in rows])
    if conn.dialect.name == "postgresql":
        conn.execute(
            text("SELECT pg_notify(:channel, :last)"),
            {"channel": NOTIFY_CHANNEL, "last": str(last)},
        )
    log.debug("events.published", events=count, first=first, last=last)
    return count


def _complete(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Each event's category (from its asset, when it has one and no category) and stream."""
    missing = sorted({r["asset_id"] for r in rows if r["asset_id"] and not r["category"]})
    found: dict[str, str] = {}
    for start in range(0, len(missing), _CHUNK):
        chunk = missing[start : start + _CHUNK]
        found.update(
            (asset_id, category)
            for asset_id, category in conn.execute(
                select(assets.c.id, assets.c.category).where(
                    one_of(assets.c.id, chunk, conn.dialect.name)
                )
            )
        )
    for row in rows:
        if not row["category"] and row["asset_id"]:
            row["category"] = found.get(row["asset_id"])
        row["stream"] = row.get("stream") or _stream(row)


def _stream(row: Mapping[str, Any]) -> str:
    if row["asset_id"]:
        return f"asset:{row['asset_id']}"
    if row["category"]:
        return f"category:{row['category']}"
    return f"connector:{row['connector_id']}"


def _install(engine: Engine) -> None:
    """The engine's listeners: publish at commit, forget at rollback (once per engine)."""
    if sa_event.contains(engine, "commit", _on_commit):
        return
    with _install_lock:
        if not sa_event.contains(engine, "commit", _on_commit):
            sa_event.listen(engine, "rollback", _on_rollback)
            sa_event.listen(engine, "savepoint", _on_savepoint)
            sa_event.listen(engine, "rollback_savepoint", _on_rollback_savepoint)
            sa_event.listen(engine, "release_savepoint", _on_release_savepoint)
            sa_event.listen(engine, "commit", _on_commit)


def _on_commit(conn: Connection) -> None:
    publish(conn)


def _on_rollback(conn: Connection) -> None:
    dropped = conn.info.pop(_PENDING, None)
    conn.info.pop(_SAVEPOINTS, None)
    if dropped is not None and dropped[1]:
        log.debug("events.dropped", events=len(dropped[1]), why="rollback")


def _on_savepoint(conn: Connection, name: str) -> None:
    conn.info.setdefault(_SAVEPOINTS, {})[name] = pending(conn)


def _on_rollback_savepoint(conn: Connection, name: str, context: Any) -> None:
    marks = conn.info.get(_SAVEPOINTS) or {}
    held = conn.info.get(_PENDING)
    if name in marks and held is not None:
        del held[1][marks.pop(name) :]


def _on_release_savepoint(conn: Connection, name: str, context: Any) -> None:
    (conn.info.get(_SAVEPOINTS) or {}).pop(name, None)
