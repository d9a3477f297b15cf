"""``/health`` (liveness) and ``/health/ready`` (readiness), without a token.

Liveness answers 200 while the process serves requests, whatever its dependencies do: a
supervisor restarts only a hung process. Readiness checks what requests need and answers 503
naming the failed check: ``database`` (``SELECT 1``), ``schema`` (at the code's migration head),
``broker`` (``RI_BROKER_URL``: Redis ``PING``, or a TCP connect for AMQP) and ``gates``
(``RI_GATES_URL``, when it is not the broker).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ...storage import check_connection, current_revision
from ..schemas import CheckResult, Liveness, Readiness
from ..state import ApiState, api_state

__all__ = ["router"]

router = APIRouter(tags=["health"])
State = Annotated[ApiState, Depends(api_state)]

_TIMEOUT_S = 3.0


@router.get("/health", response_model=Liveness)
async def liveness() -> Liveness:
    """200 while the process runs."""
    return Liveness()


def _scrub(message: str, url: str) -> str:
    password = urlsplit(url).password
    return message.replace(password, "***") if password else message


async def _redis_ping(url: str) -> None:
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(
        url, socket_connect_timeout=_TIMEOUT_S, socket_timeout=_TIMEOUT_S
    )
    try:
        if not await client.ping():
            raise ConnectionError("PING was not answered with PONG")
    finally:
        await client.aclose()


async def _tcp_connect(url: str) -> None:
    parts = urlsplit(url)
    port = parts.port or (5671 if parts.scheme == "amqps" else 5672)
    _, writer = await asyncio.open_connection(parts.hostname or "localhost", port)
    writer.close()
    await writer.wait_closed()


def _broker_check(url: str) -> Callable[[], Awaitable[None]]:
    if url.startswith(("redis://", "rediss://")):
        return lambda: _redis_ping(url)
    return lambda: _tcp_connect(url)


async def _timed(check: Callable[[], Awaitable[None]], scrub_url: str = "") -> CheckResult:
    started = time.perf_counter()
    try:
        await asyncio.wait_for(check(), _TIMEOUT_S)
    except Exception as exc:  # any failure is the answer, not a crash
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "timed out"
        detail = _scrub(f"{type(exc).__name__}: {message}", scrub_url)
        return CheckResult(ok=False, elapsed_ms=_ms(started), detail=detail)
    return CheckResult(ok=True, elapsed_ms=_ms(started))


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


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

    checks = {"database": await _timed(database)}
    if checks["database"].ok:
        checks["schema"] = await _timed(schema)
    if settings.broker_url:
        checks["broker"] = await _timed(_broker_check(settings.broker_url), settings.broker_url)
    gates_url = settings.gates_url_or_default()
    if gates_url and gates_url != settings.broker_url:
        checks["gates"] = await _timed(_broker_check(gates_url), gates_url)
    ready = all(check.ok for check in checks.values())
    body = Readiness(status="ready" if ready else "not_ready", checks=checks)
    if ready:
        return body
    return JSONResponse(body.model_dump(mode="json"), status_code=503)
