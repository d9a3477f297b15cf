"""Coordination between processes: named leases with fencing tokens, and the run-queue indexes.

* ``leases`` — one row per named role (``scheduler``): who holds it, until when, and a fencing
  token that grows by one on every change of hands (see :mod:`rareindex.storage.leases`).
* ``ux_connector_runs_active`` — a partial unique index: at most one ``queued`` or ``running`` run
  per connector, so a duplicate enqueue is refused by the database itself, on both dialects, even
  when two transactions race (see :mod:`rareindex.storage.queue`).
* two plain indexes for the scheduler's questions: "when did this connector's last incremental
  run start?" and "which queued runs were handed to the broker long ago?".
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Index, Table, Text, text

from ..types import UTCDateTime
from ._base import metadata
from .registry import connector_runs

__all__ = [
    "ACTIVE_RUN_PREDICATE",
    "ACTIVE_RUN_STATUSES",
    "active_run_index",
    "leases",
    "runs_by_connector_started_index",
    "runs_by_status_queued_index",
]

ACTIVE_RUN_STATUSES = ("queued", "running")
"""A run in one of these states occupies its connector: nothing else is enqueued for it."""

ACTIVE_RUN_PREDICATE = text("status IN ('queued', 'running')")
"""The partial index's predicate, as literal SQL: an ``ON CONFLICT … WHERE`` must match it, and
PostgreSQL cannot prove that for bound parameters once a prepared statement is planned
generically."""

leases = Table(
    "leases",
    metadata,
    Column("name", Text, primary_key=True, comment="the role, e.g. 'scheduler'"),
    Column("holder", Text, nullable=False, comment="host:pid:nonce of the current holder"),
    Column("token", BigInteger, nullable=False, comment="fencing token: +1 on every takeover"),
    Column("acquired_at", UTCDateTime(), nullable=False),
    Column("renewed_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
)

active_run_index = Index(
    "ux_connector_runs_active",
    connector_runs.c.connector_id,
    unique=True,
    postgresql_where=ACTIVE_RUN_PREDICATE,
    sqlite_where=ACTIVE_RUN_PREDICATE,
)

runs_by_connector_started_index = Index(
    None, connector_runs.c.connector_id, connector_runs.c.mode, connector_runs.c.started_at
)

runs_by_status_queued_index = Index(None, connector_runs.c.status, connector_runs.c.queued_at)
