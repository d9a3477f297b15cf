"""Mirror the registry into ``sources`` and ``connectors``, and read the runtime state back.

Syncing updates what the code declares (meta, versions, refresh class) and never touches what the
operator or the crawler owns (status, cursor).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, func, select
from sqlalchemy.dialects import postgresql, sqlite

from rareindex_connectors import Connector

from .schema import connector_runs, connectors, sources

__all__ = ["ConnectorRow", "list_connectors", "source_slug", "sync_connectors"]


@dataclass(frozen=True, slots=True)
class ConnectorRow:
    """A connector's runtime state as stored."""

    id: str
    source_id: str
    status: str
    refresh_class: str
    version: str
    parser_version: str
    cursor: Any
    runs: int
    last_run_at: datetime | None


def source_slug(name: str) -> str:
    """``"Heritage Auctions"`` -> ``"heritage-auctions"``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "source"


def _upsert(conn: Connection, table: Any, values: dict[str, Any], update: Iterable[str]) -> None:
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(table).values(values)
    changes = {name: statement.excluded[name] for name in update}
    changes["updated_at"] = func.now()
    conn.execute(statement.on_conflict_do_update(index_elements=["id"], set_=changes))


def sync_connectors(conn: Connection, registry: Iterable[Connector]) -> int:
    """Upsert every connector (and its source); returns how many were synced."""
    count = 0
    for connector in registry:
        meta = connector.meta
        _upsert(conn, sources, {"id": source_slug(meta.source), "name": meta.source}, ["name"])
        _upsert(
            conn,
            connectors,
            {
                "id": meta.id,
                "source_id": source_slug(meta.source),
                "version": connector.version,
                "parser_version": connector.parser_version,
                "refresh_class": meta.refresh_class,
                "meta": meta.model_dump(mode="json"),
            },
            ["source_id", "version", "parser_version", "refresh_class", "meta"],
        )
        count += 1
    return count


def list_connectors(conn: Connection) -> list[ConnectorRow]:
    """Every stored connector with its run count and last run time, by id."""
    runs = (
        select(
            connector_runs.c.connector_id,
            func.count().label("runs"),
            func.max(connector_runs.c.created_at).label("last_run_at"),
        )
        .group_by(connector_runs.c.connector_id)
        .subquery()
    )
    query = (
        select(connectors, runs.c.runs, runs.c.last_run_at)
        .select_from(connectors.outerjoin(runs, runs.c.connector_id == connectors.c.id))
        .order_by(connectors.c.id)
    )
    return [
        ConnectorRow(
            id=row.id,
            source_id=row.source_id,
            status=row.status,
            refresh_class=row.refresh_class,
            version=row.version,
            parser_version=row.parser_version,
            cursor=row.cursor,
            runs=row.runs or 0,
            last_run_at=row.last_run_at,
        )
        for row in conn.execute(query)
    ]
