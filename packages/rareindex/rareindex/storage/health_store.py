"""``connector_health``: load what the health rules read, and keep one snapshot per connector.

:func:`load_health_inputs` gathers a connector's facts — its status and refresh class, its
latest finished runs, when it last succeeded, its field-presence history — into a
:class:`rareindex.health.HealthInputs`; :func:`recent_hosts` says which hosts its latest captures
came from (whose breakers matter); :func:`save_health` upserts the snapshot (one row per
connector, on SQLite and PostgreSQL); :func:`list_health` reads them all back.

Example:
    >>> with engine.begin() as conn:                                         # doctest: +SKIP
    ...     inputs = load_health_inputs(conn, "coins-woo", now=now)
    ...     save_health(conn, assess(inputs))
    ...     [(s.connector_id, s.status) for s in list_health(conn)]
    [('coins-woo', 'UP')]
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, func, select

from ..health import (
    DEFAULT_RULES,
    JUDGED_STATUSES,
    HealthInputs,
    HealthRules,
    HealthSnapshot,
    QuarantineShare,
)
from .change_events import health_event
from .field_stats import load_field_history
from .outbox import emit
from .review_store import quarantine_share
from .runs import StoredRun
from .schema import connector_health, connector_runs, connectors, raw_records
from .upsert import upsert

__all__ = [
    "last_health_check",
    "list_health",
    "load_health",
    "load_health_inputs",
    "recent_hosts",
    "save_health",
]

_SNAPSHOT_COLUMNS = (
    "status",
    "checked_at",
    "success_rate",
    "records_per_run",
    "blocked_rate",
    "breaker_state",
    "schema_drift",
    "freshness_seconds",
    "details",
)


def load_health_inputs(
    conn: Connection,
    connector_id: str,
    *,
    now: datetime | None = None,
    rules: HealthRules = DEFAULT_RULES,
) -> HealthInputs | None:
    """The stored facts about ``connector_id`` (None when it is not in ``connectors``).

    Breakers and the probe are not stored here; the health worker adds them.
    """
    now = now or datetime.now(UTC)
    row = conn.execute(
        select(connectors.c.status, connectors.c.refresh_class).where(
            connectors.c.id == connector_id
        )
    ).first()
    if row is None:
        return None
    runs = connector_runs.c
    newest_first = func.coalesce(runs.finished_at, runs.started_at, runs.created_at)
    rows = conn.execute(
        select(connector_runs)
        .where(runs.connector_id == connector_id, runs.status.in_(sorted(JUDGED_STATUSES)))
        .order_by(newest_first.desc(), runs.id.desc())
        .limit(rules.runs_to_load)
    )
    last_success = conn.execute(
        select(func.max(runs.finished_at)).where(
            runs.connector_id == connector_id, runs.status == "succeeded"
        )
    ).scalar_one_or_none()
    since = now.astimezone(UTC).date() - timedelta(days=rules.drift_window_days + 1)
    return HealthInputs(
        connector_id=connector_id,
        connector_status=row.status,
        refresh_class=row.refresh_class,
        now=now,
        runs=tuple(StoredRun.of(r) for r in rows),
        last_success_at=_aware(last_success),
        field_history=load_field_history(conn, connector_id, since),
        quarantine=_quarantine(conn, connector_id, now, rules),
    )


def _quarantine(
    conn: Connection, connector_id: str, now: datetime, rules: HealthRules
) -> QuarantineShare:
    """The review queue's share of the connector's recent observations (health row 15)."""
    recent_since = now - timedelta(hours=rules.quarantine_window_hours)
    baseline_since = recent_since - timedelta(days=rules.quarantine_baseline_days)
    return QuarantineShare(
        *quarantine_share(
            conn, connector_id, recent_since=recent_since, baseline_since=baseline_since
        )
    )


def _aware(value: datetime | None) -> datetime | None:
    # max() over a UTCDateTime column comes back untyped on SQLite: a naive UTC string or value.
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def recent_hosts(conn: Connection, connector_id: str, *, limit: int = 50) -> list[str]:
    """The hosts of the connector's latest ``limit`` captures, sorted."""
    urls = conn.execute(
        select(raw_records.c.url)
        .where(raw_records.c.connector_id == connector_id)
        .order_by(raw_records.c.fetched_at.desc())
        .limit(limit)
    ).scalars()
    return sorted({(urlsplit(url).hostname or "").lower() for url in urls} - {""})


def save_health(conn: Connection, snapshot: HealthSnapshot) -> None:
    """Upsert the connector's snapshot (the latest replaces the previous one); a changed status
    is a ``connector.health_changed`` event."""
    previous = conn.execute(
        select(connector_health.c.status).where(
            connector_health.c.connector_id == snapshot.connector_id
        )
    ).scalar()
    row = {
        "connector_id": snapshot.connector_id,
        "status": snapshot.status,
        "checked_at": snapshot.checked_at,
        "success_rate": snapshot.success_rate,
        "records_per_run": snapshot.records_per_run,
        "blocked_rate": snapshot.blocked_rate,
        "breaker_state": snapshot.breaker_state,
        "schema_drift": snapshot.schema_drift,
        "freshness_seconds": snapshot.freshness_seconds,
        "details": dict(snapshot.details),
    }
    upsert(conn, connector_health, [row], conflict=["connector_id"], update=_SNAPSHOT_COLUMNS)
    emit(conn, health_event(previous, snapshot))


def _snapshot(row: Any) -> HealthSnapshot:
    return HealthSnapshot(
        connector_id=row.connector_id,
        status=row.status,
        checked_at=row.checked_at,
        success_rate=row.success_rate,
        records_per_run=row.records_per_run,
        blocked_rate=row.blocked_rate,
        breaker_state=row.breaker_state,
        schema_drift=bool(row.schema_drift),
        freshness_seconds=row.freshness_seconds,
        details=row.details or {},
    )


def list_health(conn: Connection) -> list[HealthSnapshot]:
    """Every stored snapshot, by connector id."""
    rows = conn.execute(select(connector_health).order_by(connector_health.c.connector_id))
    return [_snapshot(row) for row in rows]


def load_health(conn: Connection, connector_id: str) -> HealthSnapshot | None:
    """The connector's stored snapshot, or None before its first check."""
    row = conn.execute(
        select(connector_health).where(connector_health.c.connector_id == connector_id)
    ).first()
    return None if row is None else _snapshot(row)


def last_health_check(conn: Connection) -> datetime | None:
    """When the latest snapshot of any connector was taken (None: never): the scheduler sends
    the next health check when this is 30 minutes old, so missed ticks are harmless."""
    return _aware(conn.execute(select(func.max(connector_health.c.checked_at))).scalar())
