"""``/api/admin/*``: what an external monitor polls, and the operator's control endpoints.

Reads: ``GET connectors``, ``GET coverage``, ``GET deadletters`` (any live token). Control:
``POST deadletters/{id}/requeue`` (admin tokens); ``POST connectors/{id}/pause`` and the other
status commands are in :mod:`.connector_status`.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Annotated

import structlog
from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool

from ...storage.admin_queries import (
    ConnectorOverview,
    connector_overviews,
    coverage,
    release_requeue,
)
from ...storage.dead_letters import DeadLetter, list_dead_letters, mark_requeued
from ...storage.fx_coverage import FxCoverage, fx_coverage
from ..auth import require_admin, require_token
from ..errors import ApiError, error_responses
from ..hosts import HostView, connector_hosts, host_view, read_gates
from ..schemas import (
    BudgetLeft,
    ConnectorCost,
    ConnectorsResponse,
    ConnectorView,
    CoverageResponse,
    CoverageRow,
    DeadLettersResponse,
    DeadLetterView,
    FxCoverageOut,
    FxMissing,
    HealthView,
    HostGateView,
    RequeueResponse,
    RunView,
)
from ..state import ApiState, api_state

__all__ = ["COVERAGE_WINDOW", "router"]

log = structlog.get_logger(__name__)

COVERAGE_WINDOW = timedelta(days=30)

router = APIRouter(
    prefix="/api/admin",
    tags=["admin"],
    dependencies=[Depends(require_token)],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]


def _month_start(now: datetime) -> date:
    return date(now.year, now.month, 1)


def _host_out(view: HostView) -> HostGateView:
    return HostGateView(
        host=view.host,
        breaker=view.breaker,
        failures=view.failures,
        reopens_at=view.reopens_at,
        budget=BudgetLeft(
            per_minute=view.left_per_minute,
            per_day=view.left_per_day,
            budget_per_minute=view.budget_per_minute,
            budget_per_day=view.budget_per_day,
        ),
    )


def _connector_out(row: ConnectorOverview, hosts: list[HostGateView], month: str) -> ConnectorView:
    run = row.last_run
    health = row.health
    return ConnectorView(
        id=row.id,
        source_id=row.source_id,
        source_name=row.source_name,
        status=row.status,
        refresh_class=row.refresh_class,
        engines=list(row.meta.get("engines") or ()),
        categories=list(row.meta.get("categories") or ()),
        last_run=None if run is None else RunView.model_validate(run, from_attributes=True),
        health=None if health is None else HealthView.model_validate(health, from_attributes=True),
        hosts=hosts,
        cost_this_month=ConnectorCost(
            month=month,
            credits=sum(row.credits_this_month.values(), Decimal(0)),
            by_engine=row.credits_this_month,
        ),
    )


@router.get("/connectors", response_model=ConnectorsResponse)
async def list_connectors(state: State) -> ConnectorsResponse:
    """Every connector: status, last run, health, breaker and budget per host, cost this month."""
    now = datetime.now(UTC)
    rows = await run_in_threadpool(connector_overviews, state.engine, month_start=_month_start(now))
    hosts_of = {row.id: connector_hosts(row.meta, row.recent_hosts) for row in rows}
    reading = await read_gates(state.gates, {h for hosts in hosts_of.values() for h in hosts})
    epoch = time.time()
    views = {
        host: _host_out(host_view(host, gate_state, state.policies.for_host(host), epoch))
        for host, gate_state in reading.states.items()
    }
    month = f"{now:%Y-%m}"
    return ConnectorsResponse(
        generated_at=now,
        gates="unavailable" if reading.error else "shared" if state.gates_shared else "process",
        gates_error=reading.error,
        connectors=[
            _connector_out(row, [views[h] for h in hosts_of[row.id] if h in views], month)
            for row in rows
        ],
    )


def _fx_out(fx: FxCoverage) -> FxCoverageOut:
    return FxCoverageOut(
        stale=fx.stale,
        stale_days=fx.stale_days,
        newest_rate_date=fx.newest_rate_date,
        newest_sale_date=fx.newest_sale_date,
        lag_days=fx.lag_days,
        converted_sales=fx.converted,
        stale_sales=fx.stale_sales,
        missing=[
            FxMissing(currency=currency, reason=reason, sales=n)
            for (reason, currency), n in sorted(fx.missing.items())
        ],
    )


@router.get("/coverage", response_model=CoverageResponse)
def get_coverage(state: State) -> CoverageResponse:
    """Per category and source: assets, variants, sales in the last 30 days, freshness, and the
    source's connectors up / down by their latest health snapshot; and ``fx``: the sales the
    ECB rates price, the stale ones, and those that convert to null (KWD…) with the reason."""
    now = datetime.now(UTC)
    cells = coverage(state.engine, since=now - COVERAGE_WINDOW)
    with state.engine.connect() as conn:
        fx = fx_coverage(conn)
    return CoverageResponse(
        generated_at=now,
        window_days=COVERAGE_WINDOW.days,
        fx=_fx_out(fx),
        rows=[
            CoverageRow(
                category=c.category,
                source_id=c.source_id,
                source_name=c.source_name,
                assets=c.assets,
                variants=c.variants,
                sales_30d=c.sales_recent,
                newest_sale_at=c.newest_sale_at,
                newest_observation_at=c.newest_observation_at,
                newest_raw_fetch_at=c.newest_raw_fetch_at,
                connectors_up=c.connectors_up,
                connectors_down=c.connectors_down,
                connectors_unchecked=c.connectors_unchecked,
            )
            for c in cells
        ],
    )


def _letter_out(letter: DeadLetter) -> DeadLetterView:
    return DeadLetterView(
        id=letter.id,
        queue=letter.queue,
        actor=letter.actor,
        args=letter.args,
        keyword_args=letter.kwargs,
        retries=letter.retries,
        error=letter.error,
        failed_at=letter.failed_at,
        requeued_at=letter.requeued_at,
    )


@router.get("/deadletters", response_model=DeadLettersResponse)
def get_dead_letters(state: State, include_requeued: bool = False) -> DeadLettersResponse:
    """Messages that failed every retry, oldest first (``?include_requeued=true``: all)."""
    letters = list_dead_letters(state.engine, include_requeued=include_requeued)
    return DeadLettersResponse(dead_letters=[_letter_out(letter) for letter in letters])


@router.post(
    "/deadletters/{message_id}/requeue",
    response_model=RequeueResponse,
    dependencies=[Depends(require_admin)],
    responses=error_responses(403, 404, 409, 502, 503),
)
def requeue_dead_letter(message_id: str, state: State) -> RequeueResponse:
    """Send a dead letter to its queue again, as a fresh message (its retries start over).

    The letter is claimed first (``requeued_at`` set only if still unset), so two concurrent
    requests send it once; a failed send releases the claim."""
    if state.settings.broker_url is None:
        raise ApiError(
            409,
            "no_broker",
            "RI_BROKER_URL is not set: in embedded mode nothing consumes a queue; "
            "run the work in-process (`rareindex crawl ID`) instead",
        )
    if state.requeue is None:
        raise ApiError(
            503,
            "requeue_unavailable",
            "this API process has no broker connection; serve it with the full `rareindex api` "
            "command, or run `rareindex deadletters requeue ID`",
        )
    letters = {d.id: d for d in list_dead_letters(state.engine, include_requeued=True)}
    letter = letters.get(message_id)
    if letter is None:
        raise ApiError(404, "unknown_dead_letter", f"no dead letter {message_id!r}")
    if not mark_requeued(state.engine, message_id):
        raise ApiError(409, "already_requeued", f"dead letter {message_id!r} was requeued already")
    try:
        state.requeue(letter)
    except Exception as exc:  # the broker refused: keep the letter listed for another try
        release_requeue(state.engine, message_id)
        log.warning("dead_letter.requeue_failed", message=message_id, error=type(exc).__name__)
        raise ApiError(502, "broker_error", f"the broker refused the message: {exc}") from None
    log.info("dead_letter.requeued", message=message_id, actor=letter.actor)
    return RequeueResponse(id=letter.id, queue=letter.queue, actor=letter.actor)
