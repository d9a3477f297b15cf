"""``/health`` (liveness) and ``/health/ready`` (readiness), without a token.

Liveness answers 200 while the process serves requests, whatever its dependencies do: a
supervisor restarts only a hung process. Readiness checks what requests need and answers 503
naming the failed check: ``database`` (``SELECT 1``), ``schema`` (at the code's migration head),
``broker`` (``RI_BROKER_URL``: Redis ``PING``, or a TCP connect for AMQP) and ``gates``
(``RI_GATES_URL``, when it is not the broker).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ...storage import check_connection, current_revision
from ..checks import broker_check, timed
from ..schemas import Liveness, Readiness
from ..state import ApiState, api_state

__all__ = ["router"]

router = APIRouter(tags=["health"])
State = Annotated[ApiState, Depends(api_state)]


@router.get("/health", response_model=Liveness)
async def liveness() -> Liveness:
    """200 while the process runs."""
    return Liveness()


@router.get(
    "/health/ready",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "a check failed"}},
)
async def readiness(state: State) -> Readiness | JSONResponse:
    """200 when the database (and broker, when configured) answer; else 503 with the checks."""
    settings = state.settings

    async def database() -> None:
        await run_in_threadpool(check_connection, state.engine)

    async def schema() -> None:
        current = await run_in_threadpool(current_revision, state.engine)
        if state.schema_head is not None and current != state.schema_head:
            raise LookupError(
                f"the schema is at {current or 'nothing'}, the code needs {state.schema_head}: "
                "run `rareindex db upgrade`"
            )

    checks = {"database": await timed(database)}
    if checks["database"].ok:
        checks["schema"] = await timed(schema)
    if settings.broker_url:
        checks["broker"] = await timed(broker_check(settings.broker_url), settings.broker_url)
    gates_url = settings.gates_url_or_default()
    if gates_url and gates_url != settings.broker_url:
        checks["gates"] = await timed(broker_check(gates_url), gates_url)
    ready = all(check.ok for check in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    if ready:
        return body
    return JSONResponse(body.model_dump(mode="json"), status_code=503)
