"""What ``/metrics`` reads from the database: one :class:`MetricsSnapshot` per scrape.

:func:`metrics_snapshot` reads the counters and gauges of :mod:`rareindex.api.metrics` in one
connection, at scrape time, so every API process and every worker agree: runs by outcome, failure
reason and status, pages / records / dupes, credits, queue lag, normalization throughput, health
and dead letters. Engine attempts (:class:`EngineAttempts`) are aggregated inside the database
from ``connector_runs.engine_stats`` (JSON per run), with one query per dialect (SQLite's
``json_each``, PostgreSQL's ``jsonb_each``).

Example:
    >>> snap = metrics_snapshot(engine, now=now, recent=timedelta(minutes=5))   # doctest: +SKIP
    >>> snap.engines["cards-shop", "api"].attempts, snap.dead_letters          # doctest: +SKIP
    (12, 0)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, func, select, text

from .schema import (
    ACTIVE_RUN_STATUSES,
    connector_health,
    connector_runs,
    connectors,
    costs,
    dead_letters,
    normalized_records,
)

__all__ = ["EngineAttempts", "MetricsSnapshot", "metrics_snapshot"]


@dataclass(frozen=True, slots=True)
class EngineAttempts:
    """One connector's attempts with one engine, over all its runs."""

    attempts: int
    blocked: int
    circuit_open: int
    statuses: dict[str, int]
    """HTTP status -> attempts answered with it."""


@dataclass(slots=True)
class MetricsSnapshot:
    """Everything ``/metrics`` reports from the database, read in one connection."""

    connectors: dict[str, str] = field(default_factory=dict)
    """Connector id -> status (active, paused, maintenance, disabled)."""
    runs_by_outcome: dict[tuple[str, str], int] = field(default_factory=dict)
    run_failures: dict[tuple[str, str], int] = field(default_factory=dict)
    runs_active: dict[tuple[str, str], int] = field(default_factory=dict)
    pages: dict[str, int] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    dupes: dict[str, int] = field(default_factory=dict)
    engines: dict[tuple[str, str], EngineAttempts] = field(default_factory=dict)
    credits: dict[tuple[str, str], Decimal] = field(default_factory=dict)
    oldest_queued_at: datetime | None = None
    normalized_pending: int = 0
    normalized_recent: dict[str, int] = field(default_factory=dict)
    resolved_recent: dict[str, int] = field(default_factory=dict)
    health: dict[str, str] = field(default_factory=dict)
    dead_letters: int = 0


def _pairs(rows: Iterable[Any]) -> dict[tuple[str, str], int]:
    return {(a, b): int(n or 0) for a, b, n in rows}


_ENGINE_TOTALS = {
    "sqlite": """
SELECT r.connector_id, e.key,
       SUM(COALESCE(json_extract(e.value, '$.attempts'), 0)),
       SUM(COALESCE(json_extract(e.value, '$.blocked'), 0)),
       SUM(COALESCE(json_extract(e.value, '$.circuit_open'), 0))
  FROM connector_runs AS r, json_each(r.engine_stats) AS e
 WHERE json_type(r.engine_stats) = 'object' AND e.type = 'object'
 GROUP BY r.connector_id, e.key
""",
    "postgresql": """
SELECT r.connector_id, e.key,
       SUM(COALESCE((e.value ->> 'attempts')::numeric, 0)),
       SUM(COALESCE((e.value ->> 'blocked')::numeric, 0)),
       SUM(COALESCE((e.value ->> 'circuit_open')::numeric, 0))
  FROM connector_runs AS r
 CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(r.engine_stats) = 'object'
                                    THEN r.engine_stats ELSE '{}'::jsonb END) AS e
 WHERE jsonb_typeof(e.value) = 'object'
 GROUP BY r.connector_id, e.key
""",
}
_ENGINE_STATUSES = {
    "sqlite": """
SELECT r.connector_id, e.key, s.key, SUM(s.value)
  FROM connector_runs AS r, json_each(r.engine_stats) AS e, json_each(e.value, '$.statuses') AS s
 WHERE json_type(r.engine_stats) = 'object' AND e.type = 'object'
   AND s.type IN ('integer', 'real')
 GROUP BY r.connector_id, e.key, s.key
""",
    "postgresql": """
SELECT r.connector_id, e.key, s.key, SUM(s.value::numeric)
  FROM connector_runs AS r
 CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(r.engine_stats) = 'object'
                                    THEN r.engine_stats ELSE '{}'::jsonb END) AS e
 CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(e.value -> 'statuses') = 'object'
                                    THEN e.value -> 'statuses' ELSE '{}'::jsonb END) AS s
 WHERE jsonb_typeof(s.value) = 'number'
 GROUP BY r.connector_id, e.key, s.key
""",
}


def _engine_attempts(conn: Connection) -> dict[tuple[str, str], EngineAttempts]:
    dialect = "postgresql" if conn.dialect.name == "postgresql" else "sqlite"
    statuses: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for connector_id, engine_name, status, n in conn.execute(text(_ENGINE_STATUSES[dialect])):
        statuses[(connector_id, engine_name)][str(status)] = int(n)
    return {
        (connector_id, engine_name): EngineAttempts(
            int(attempts),
            int(blocked),
            int(circuit_open),
            statuses.get((connector_id, engine_name), {}),
        )
        for connector_id, engine_name, attempts, blocked, circuit_open in conn.execute(
            text(_ENGINE_TOTALS[dialect])
        )
    }


def metrics_snapshot(engine: Engine, *, now: datetime, recent: timedelta) -> MetricsSnapshot:
    """Read every metric's value; ``recent`` is the throughput window (rows in the last …)."""
    runs = connector_runs.c
    snap = MetricsSnapshot()
    with engine.connect() as conn:
        snap.connectors = {
            row.id: row.status
            for row in conn.execute(
                select(connectors.c.id, connectors.c.status).order_by(connectors.c.id)
            )
        }
        snap.runs_by_outcome = _pairs(
            conn.execute(
                select(runs.connector_id, runs.outcome, func.count())
                .where(runs.outcome.is_not(None))
                .group_by(runs.connector_id, runs.outcome)
            )
        )
        snap.run_failures = _pairs(
            conn.execute(
                select(runs.connector_id, runs.failure_reason, func.count())
                .where(runs.failure_reason.is_not(None))
                .group_by(runs.connector_id, runs.failure_reason)
            )
        )
        snap.runs_active = _pairs(
            conn.execute(
                select(runs.connector_id, runs.status, func.count())
                .where(runs.status.in_(ACTIVE_RUN_STATUSES))
                .group_by(runs.connector_id, runs.status)
            )
        )
        for connector_id, pages, records, dupes in conn.execute(
            select(
                runs.connector_id,
                func.sum(runs.pages),
                func.sum(runs.records),
                func.sum(runs.dupes),
            ).group_by(runs.connector_id)
        ):
            snap.pages[connector_id] = int(pages or 0)
            snap.records[connector_id] = int(records or 0)
            snap.dupes[connector_id] = int(dupes or 0)
        snap.engines = _engine_attempts(conn)
        credits: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
        for connector_id, engine_name, amount in conn.execute(
            select(costs.c.connector_id, costs.c.engine, costs.c.credits)
        ):
            credits[(connector_id, engine_name)] += amount
        snap.credits = dict(credits)
        snap.oldest_queued_at = conn.execute(
            select(func.min(func.coalesce(runs.queued_at, runs.created_at))).where(
                runs.status == "queued"
            )
        ).scalar_one()
        snap.normalized_pending = conn.execute(
            select(func.count())
            .select_from(normalized_records)
            .where(normalized_records.c.status == "pending")
        ).scalar_one()
        since = now - recent
        for column, target in (
            (normalized_records.c.created_at, snap.normalized_recent),
            (normalized_records.c.resolved_at, snap.resolved_recent),
        ):
            for connector_id, n in conn.execute(
                select(normalized_records.c.connector_id, func.count())
                .where(column >= since)
                .group_by(normalized_records.c.connector_id)
            ):
                target[connector_id] = int(n)
        snap.health = {
            row.connector_id: row.status
            for row in conn.execute(
                select(connector_health.c.connector_id, connector_health.c.status)
            )
        }
        snap.dead_letters = conn.execute(
            select(func.count())
            .select_from(dead_letters)
            .where(dead_letters.c.requeued_at.is_(None))
        ).scalar_one()
    return snap
