"""What the admin API reads about connectors and coverage, and the operator's two small writes.

Reads (each at request or scrape time, so every API process and every worker agree):

* :func:`connector_overviews` — per connector: state, last run, health snapshot, this month's
  credits, and the hosts its recent raw records came from;
* :func:`connector_host_hints` — per connector: its stored meta and recent hosts (for the host
  gauges of :mod:`rareindex.api.metrics`);
* :func:`coverage` — per category and source: assets, variants, recent sales, freshness and how
  many of the source's connectors are up or down.

What ``/metrics`` reads from the database is :mod:`.metrics_queries`.

Writes: :func:`release_requeue` (undo a requeue claim whose send failed). A connector's status is
changed through :mod:`.connector_status`.

Example:
    >>> rows = coverage(engine, since=datetime.now(UTC) - timedelta(days=30))   # doctest: +SKIP
    >>> rows[0].category, rows[0].source_id, rows[0].sales_recent               # doctest: +SKIP
    ('tcg_card', 'cards-shop', 42)
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Connection, Engine, case, distinct, func, select, union_all, update

from ..errors import RareIndexError
from .runs import StoredRun
from .schema import (
    assets,
    auction_lots,
    connector_health,
    connector_runs,
    connectors,
    costs,
    dead_letters,
    listings,
    price_observations,
    raw_records,
    sales,
    sources,
)

__all__ = [
    "DOWN_HEALTH",
    "UP_HEALTH",
    "ConnectorNotFound",
    "ConnectorOverview",
    "CoverageCount",
    "HealthRow",
    "StatusConflict",
    "connector_host_hints",
    "connector_overviews",
    "coverage",
    "release_requeue",
]

UP_HEALTH = frozenset({"UP", "DEGRADED"})
"""Health states that still deliver data: counted as *up* in coverage."""
DOWN_HEALTH = frozenset({"BROKEN", "DISABLED", "MAINTENANCE"})
"""Health states that deliver nothing: counted as *down* in coverage."""

_HOSTS_FROM_RECENT_RAW = 50
_MAX_HOSTS = 10


class ConnectorNotFound(RareIndexError):
    """No connector with that id is stored (run `rareindex connectors list`)."""


class StatusConflict(RareIndexError):
    """The connector's status does not allow the change (e.g. resuming a disabled connector)."""


@dataclass(frozen=True, slots=True)
class HealthRow:
    status: str
    checked_at: datetime
    success_rate: float | None
    records_per_run: float | None
    blocked_rate: float | None
    breaker_state: str | None
    schema_drift: bool
    freshness_seconds: int | None
    details: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ConnectorOverview:
    id: str
    source_id: str
    source_name: str
    status: str
    refresh_class: str
    meta: dict[str, Any]
    last_run: StoredRun | None
    health: HealthRow | None
    credits_this_month: dict[str, Decimal]
    """Engine -> credits since the 1st of the month (exact)."""
    recent_hosts: tuple[str, ...]
    """Hosts of the connector's most recent raw records (at most ten)."""


def _last_run(conn: Connection, connector_id: str) -> StoredRun | None:
    row = conn.execute(
        select(connector_runs)
        .where(connector_runs.c.connector_id == connector_id)
        .order_by(connector_runs.c.created_at.desc(), connector_runs.c.id.desc())
        .limit(1)
    ).first()
    return None if row is None else StoredRun.of(row)


def _health(row: Any) -> HealthRow:
    return HealthRow(
        row.status,
        row.checked_at,
        row.success_rate,
        row.records_per_run,
        row.blocked_rate,
        row.breaker_state,
        bool(row.schema_drift),
        row.freshness_seconds,
        row.details,
    )


def _recent_hosts(conn: Connection, connector_id: str) -> tuple[str, ...]:
    urls = conn.execute(
        select(raw_records.c.url)
        .where(raw_records.c.connector_id == connector_id)
        .order_by(raw_records.c.fetched_at.desc())
        .limit(_HOSTS_FROM_RECENT_RAW)
    ).scalars()
    hosts: list[str] = []
    for url in urls:
        host = (urlsplit(url).hostname or "").lower()
        if host and host not in hosts:
            hosts.append(host)
    return tuple(sorted(hosts[:_MAX_HOSTS]))


def connector_overviews(
    engine: Engine, *, month_start: date, with_hosts: bool = True
) -> list[ConnectorOverview]:
    """Every stored connector, by id, with its last run, health and this month's credits."""
    with engine.connect() as conn:
        health = {row.connector_id: _health(row) for row in conn.execute(select(connector_health))}
        credits: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
        for row in conn.execute(
            select(costs.c.connector_id, costs.c.engine, costs.c.credits).where(
                costs.c.day >= month_start
            )
        ):  # summed here, exactly: SQLite keeps decimals as text
            credits[row.connector_id][row.engine] += row.credits
        query = (
            select(connectors, sources.c.name.label("source_name"))
            .join_from(connectors, sources, sources.c.id == connectors.c.source_id)
            .order_by(connectors.c.id)
        )
        return [
            ConnectorOverview(
                id=row.id,
                source_id=row.source_id,
                source_name=row.source_name,
                status=row.status,
                refresh_class=row.refresh_class,
                meta=dict(row.meta or {}),
                last_run=_last_run(conn, row.id),
                health=health.get(row.id),
                credits_this_month=dict(credits.get(row.id, {})),
                recent_hosts=_recent_hosts(conn, row.id) if with_hosts else (),
            )
            for row in conn.execute(query).all()
        ]


def connector_host_hints(engine: Engine) -> dict[str, tuple[dict[str, Any], tuple[str, ...]]]:
    """Connector id -> (its stored meta, the hosts of its recent raw records)."""
    with engine.connect() as conn:
        rows = conn.execute(select(connectors.c.id, connectors.c.meta).order_by(connectors.c.id))
        return {row.id: (dict(row.meta or {}), _recent_hosts(conn, row.id)) for row in rows.all()}


@dataclass(slots=True)
class CoverageCount:
    """One (category, source) cell. ``category`` None: observations not resolved to an asset."""

    category: str | None
    source_id: str
    source_name: str
    assets: int = 0
    variants: int = 0
    sales_recent: int = 0
    newest_sale_at: datetime | None = None
    newest_observation_at: datetime | None = None
    newest_raw_fetch_at: datetime | None = None
    connectors_up: int = 0
    connectors_down: int = 0
    connectors_unchecked: int = 0


def _observed_assets() -> Any:
    parts = [
        select(
            table.c.source_id.label("source_id"),
            table.c.asset_id.label("asset_id"),
            table.c.variant_id.label("variant_id"),
        ).where(table.c.asset_id.is_not(None))
        for table in (sales, listings, price_observations, auction_lots)
    ]
    return union_all(*parts).subquery("observed")


def coverage(engine: Engine, *, since: datetime) -> list[CoverageCount]:
    """Per (category, source): distinct assets and variants observed (sales, listings, price
    observations, auction lots), sales since ``since``, the newest sale / price observation /
    raw fetch, and the source's connectors by health. Categories a connector declares appear
    even before anything was observed (zeros show the gap)."""
    with engine.connect() as conn:
        names = {row.id: row.name for row in conn.execute(select(sources.c.id, sources.c.name))}
        cells: dict[tuple[str | None, str], CoverageCount] = {}

        def cell(category: str | None, source_id: str) -> CoverageCount:
            key = (category, source_id)
            if key not in cells:
                cells[key] = CoverageCount(category, source_id, names.get(source_id, source_id))
            return cells[key]

        stored = conn.execute(
            select(
                connectors.c.id,
                connectors.c.source_id,
                connectors.c.meta,
                connector_health.c.status,
            ).outerjoin_from(
                connectors,
                connector_health,
                connector_health.c.connector_id == connectors.c.id,
            )
        ).all()
        for row in stored:
            for category in (row.meta or {}).get("categories", ()):
                cell(category, row.source_id)

        observed = _observed_assets()
        for category, source_id, n_assets, n_variants in conn.execute(
            select(
                assets.c.category,
                observed.c.source_id,
                func.count(distinct(observed.c.asset_id)),
                func.count(distinct(observed.c.variant_id)),
            )
            .join_from(observed, assets, assets.c.id == observed.c.asset_id)
            .group_by(assets.c.category, observed.c.source_id)
        ):
            target = cell(category, source_id)
            target.assets, target.variants = int(n_assets), int(n_variants)

        recent = func.sum(case((sales.c.sale_date >= since, 1), else_=0))
        for category, source_id, n_recent, newest in conn.execute(
            select(assets.c.category, sales.c.source_id, recent, func.max(sales.c.sale_date))
            .outerjoin_from(sales, assets, assets.c.id == sales.c.asset_id)
            .group_by(assets.c.category, sales.c.source_id)
        ):
            target = cell(category, source_id)
            target.sales_recent, target.newest_sale_at = int(n_recent or 0), newest

        for category, source_id, newest in conn.execute(
            select(
                assets.c.category,
                price_observations.c.source_id,
                func.max(price_observations.c.observation_date),
            )
            .outerjoin_from(
                price_observations, assets, assets.c.id == price_observations.c.asset_id
            )
            .group_by(assets.c.category, price_observations.c.source_id)
        ):
            cell(category, source_id).newest_observation_at = newest

        newest_fetch: dict[str, datetime] = {}
        up: dict[str, int] = defaultdict(int)
        down: dict[str, int] = defaultdict(int)
        unchecked: dict[str, int] = defaultdict(int)
        for row in stored:
            fetched = conn.execute(  # per connector: an index scan, not a table scan
                select(func.max(raw_records.c.fetched_at)).where(
                    raw_records.c.connector_id == row.id
                )
            ).scalar_one()
            if fetched is not None and (
                row.source_id not in newest_fetch or fetched > newest_fetch[row.source_id]
            ):
                newest_fetch[row.source_id] = fetched
            if row.status in UP_HEALTH:
                up[row.source_id] += 1
            elif row.status in DOWN_HEALTH:
                down[row.source_id] += 1
            else:
                unchecked[row.source_id] += 1

    for target in cells.values():
        target.newest_raw_fetch_at = newest_fetch.get(target.source_id)
        target.connectors_up = up[target.source_id]
        target.connectors_down = down[target.source_id]
        target.connectors_unchecked = unchecked[target.source_id]
    return sorted(cells.values(), key=lambda c: (c.source_id, c.category is None, c.category))


def release_requeue(engine: Engine, message_id: str) -> None:
    """Undo :func:`~.dead_letters.mark_requeued` when sending the message failed."""
    with engine.begin() as conn:
        conn.execute(
            update(dead_letters).where(dead_letters.c.id == message_id).values(requeued_at=None)
        )
