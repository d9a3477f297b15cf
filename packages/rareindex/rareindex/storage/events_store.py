"""Reading and pruning the outbox (``events``): pages after a cursor, filtered; the head and the
horizon; retention.

A reader asks for the events after the last cursor it has seen. Pruning deletes the oldest
events and raises ``event_cursor.pruned_through``; a reader whose cursor is below it has missed
events it can no longer get, and :func:`read_after` says so (:class:`CursorExpired`, with the
oldest cursor still there) instead of skipping them silently.

Example:
    >>> with engine.connect() as conn:                                   # doctest: +SKIP
    ...     page = read_after(conn, 41, EventFilter(types=("sale.recorded",)), limit=100)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Select, delete, func, select, update

from ..errors import RareIndexError
from .schema import event_cursor, events

__all__ = [
    "CursorExpired",
    "EventFilter",
    "Head",
    "Page",
    "PruneResult",
    "check_cursor",
    "event_json",
    "head",
    "prune",
    "read_after",
    "read_page",
]


class CursorExpired(RareIndexError):
    """The reader's cursor is older than the retention horizon: events after it were pruned."""

    def __init__(self, cursor: int, pruned_through: int) -> None:
        self.cursor = cursor
        self.pruned_through = pruned_through
        self.oldest_cursor = pruned_through + 1
        super().__init__(
            f"cursor {cursor} is past the retention horizon: events up to {pruned_through} were "
            f"pruned; the oldest event still kept is {self.oldest_cursor}"
        )


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a reader wants: each field a set of accepted values (empty: any)."""

    types: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()

    _FIELDS = (
        ("types", "type"),
        ("categories", "category"),
        ("assets", "asset_id"),
        ("variants", "variant_id"),
        ("connectors", "connector_id"),
    )

    @property
    def empty(self) -> bool:
        return not any(getattr(self, name) for name, _ in self._FIELDS)

    def matches(self, event: Mapping[str, Any]) -> bool:
        """Whether an event dict passes (the same rule as the SQL of :meth:`where`)."""
        return all(
            event.get(column) in accepted
            for name, column in self._FIELDS
            if (accepted := getattr(self, name))
        )

    def where(self, statement: Select[Any]) -> Select[Any]:
        for name, column in self._FIELDS:
            accepted = getattr(self, name)
            if accepted:
                statement = statement.where(events.c[column].in_(accepted))
        return statement


def event_json(event: Mapping[str, Any], watchlists: Sequence[str] = ()) -> dict[str, Any]:
    """An event as the API sends it (``created_at`` in ISO-8601, the watchlists it matched)."""
    created: datetime = event["created_at"]
    return {
        "cursor": event["cursor"],
        "type": event["type"],
        "stream": event["stream"],
        "category": event["category"],
        "asset_id": event["asset_id"],
        "variant_id": event["variant_id"],
        "connector_id": event["connector_id"],
        "payload": event["payload"],
        "created_at": created.isoformat().replace("+00:00", "Z"),
        "watchlists": list(watchlists),
    }


@dataclass(frozen=True, slots=True)
class Head:
    last: int
    """The newest cursor given (0: none yet)."""
    pruned_through: int
    """Events up to this cursor were pruned (0: none)."""


def head(conn: Connection) -> Head:
    row = conn.execute(select(event_cursor.c.last, event_cursor.c.pruned_through)).one()
    return Head(int(row.last), int(row.pruned_through))


def check_cursor(conn: Connection, cursor: int) -> Head:
    """The head, or :class:`CursorExpired` when events after ``cursor`` were pruned."""
    now = head(conn)
    if cursor < now.pruned_through:
        raise CursorExpired(cursor, now.pruned_through)
    return now


def read_after(
    conn: Connection,
    cursor: int,
    where: EventFilter = EventFilter(),
    *,
    limit: int = 500,
    check: bool = True,
    until: int | None = None,
) -> list[dict[str, Any]]:
    """The events after ``cursor`` (and up to ``until``) that pass ``where``, oldest first, at
    most ``limit``.

    Raises:
        CursorExpired: ``check`` and events after ``cursor`` were pruned.
    """
    if check:
        check_cursor(conn, cursor)
    statement = where.where(
        select(events).where(events.c.cursor > cursor).order_by(events.c.cursor).limit(limit)
    )
    if until is not None:
        statement = statement.where(events.c.cursor <= until)
    return [dict(row) for row in conn.execute(statement).mappings()]


@dataclass(frozen=True, slots=True)
class Page:
    events: list[dict[str, Any]]
    next_after: int
    """Where the reader stands after this page: the last event's cursor, or the head when the
    page holds every match (so a filtered reader skips what does not match)."""
    head: Head


def read_page(
    conn: Connection, after: int, where: EventFilter = EventFilter(), *, limit: int = 500
) -> Page:
    """A page of matching events after ``after`` and the reader's next position.

    The head is read first, and the events up to it: every cursor up to a visible head is
    committed (cursors are given in commit order), so the page misses nothing below it.

    Raises:
        CursorExpired: events after ``after`` were pruned.
    """
    now = check_cursor(conn, after)
    found = read_after(conn, after, where, limit=limit, check=False, until=now.last)
    next_after = found[-1]["cursor"] if len(found) == limit else max(after, now.last)
    return Page(found, next_after, now)


@dataclass(frozen=True, slots=True)
class PruneResult:
    deleted: int
    pruned_through: int


def prune(conn: Connection, *, before: datetime, batch: int = 10_000) -> PruneResult:
    """Delete the events created before ``before`` (the oldest ones, by cursor) and raise the
    horizon to the newest cursor deleted."""
    through = conn.execute(
        select(func.max(events.c.cursor)).where(events.c.created_at < before)
    ).scalar()
    deleted = 0
    if through is not None:
        while True:
            chunk = conn.execute(
                select(events.c.cursor)
                .where(events.c.cursor <= through)
                .order_by(events.c.cursor)
                .limit(batch)
            ).scalars()
            cursors: Sequence[int] = list(chunk)
            if not cursors:
                break
            deleted += conn.execute(
                delete(events).where(events.c.cursor.between(cursors[0], cursors[-1]))
            ).rowcount
        conn.execute(
            update(event_cursor)
            .where(event_cursor.c.id == 1)
            .where(event_cursor.c.pruned_through < through)
            .values(pruned_through=through)
        )
    return PruneResult(deleted, head(conn).pruned_through)
