"""``crawl_state``: what the crawler knows of each URL it revisits (the budget store's rows).

Example:
    >>> with engine.begin() as conn:                                   # doctest: +SKIP
    ...     save_states(conn, "auction-house", [state])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import Connection, select

from .schema import crawl_state
from .upsert import upsert

__all__ = ["UrlState", "load_state", "load_states", "save_states"]


@dataclass(slots=True)
class UrlState:
    """One URL's history: its validators, how often it changes, and when it is due again."""

    url: str
    content_hash: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    change_interval_seconds: float | None = None
    last_fetched_at: datetime | None = None
    last_changed_at: datetime | None = None
    next_fetch_at: datetime | None = None
    changes: int = 0
    unchanged: int = 0
    failures: int = 0


_FIELDS = tuple(UrlState.__dataclass_fields__)


def load_state(conn: Connection, connector_id: str, url: str) -> UrlState | None:
    """The stored state of ``url`` for ``connector_id``, or None for a URL never fetched."""
    row = conn.execute(
        select(crawl_state).where(
            crawl_state.c.connector_id == connector_id, crawl_state.c.url == url
        )
    ).first()
    if row is None:
        return None
    data = row._mapping
    return UrlState(**{name: data[name] for name in _FIELDS})


def load_states(conn: Connection, connector_id: str, *, limit: int) -> dict[str, UrlState] | None:
    """Every stored state of ``connector_id`` by URL, in one query; None when it has more than
    ``limit`` (the caller then reads URL by URL instead of holding them all)."""
    rows = conn.execute(
        select(crawl_state).where(crawl_state.c.connector_id == connector_id).limit(limit + 1)
    ).all()
    if len(rows) > limit:
        return None
    return {row.url: UrlState(**{name: row._mapping[name] for name in _FIELDS}) for row in rows}


def save_states(conn: Connection, connector_id: str, states: Iterable[UrlState]) -> int:
    """Upsert states (in the caller's transaction, next to the records they describe), in one
    statement: a URL seen twice keeps its last state."""
    rows = [{"connector_id": connector_id, **asdict(state)} for state in states]
    upsert(
        conn,
        crawl_state,
        rows,
        conflict=["connector_id", "url"],
        update=[name for name in _FIELDS if name != "url"],
    )
    return len(rows)
