"""The admin API's application factory.

Example:
    >>> app = create_app(load_settings())                        # doctest: +SKIP
    >>> uvicorn.run(app, host="127.0.0.1", port=8000)           # doctest: +SKIP

``rareindex api`` serves it. Dependencies are injected, not imported: the database ``engine``
(default: from the settings), the host ``gates`` (default: shared through Redis when
``RI_GATES_URL`` or a Redis broker is configured, else this process's own), and ``requeue``,
which sends a dead letter back to its queue — a broker concern of ``workers``, which ``rareindex``
never imports, so the process that has a broker hands it in.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import structlog
from fastapi import FastAPI, Request, Response

from rareindex_connectors.runtime import HostGates, MemoryGateBackend, RedisGateBackend

from .._version import __version__
from ..fetching import load_policies
from ..settings import Settings
from ..storage import Engine, head_revision, make_engine
from . import metrics
from .body_guard import BodyGuard
from .errors import install_error_handlers
from .routes import admin, certificates, events_live, health
from .routes import events as event_routes
from .routes import pricing as pricing_routes
from .routes import review as review_routes
from .routes import watchlists as watchlist_routes
from .routes.connector_status import router as status_router
from .state import ApiState, Requeue

__all__ = ["create_app"]

log = structlog.get_logger(__name__)

_QUIET_ROUTES = frozenset({"/health", "/health/ready", "/metrics"})

DESCRIPTION = """
Connector status and coverage for monitors, certificate lookups for scanners, and control
endpoints for operators. Every `/api/*` route needs `Authorization: Bearer <token>` (create one
with `rareindex tokens create NAME`); `/health`, `/health/ready` and `/metrics` need none.
Errors are always `{"error": "<code>", "detail": "<sentence>"}`.
"""


def _default_gates(settings: Settings) -> HostGates:
    url = settings.gates_url_or_default()
    return HostGates(RedisGateBackend.from_url(url) if url else MemoryGateBackend())


async def _access_log(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    started = time.perf_counter()
    response = await call_next(request)
    route = getattr(request.scope.get("route"), "path", "(unmatched)")  # a template, no values
    (log.debug if route in _QUIET_ROUTES else log.info)(
        "api.request",
        method=request.method,
        route=route,
        status=response.status_code,
        elapsed_ms=int((time.perf_counter() - started) * 1000),
        caller=getattr(request.state, "token_id", None),
    )
    return response


_GUARD_ANSWERS = {
    "413": "the request body is larger than RI_API_MAX_BODY_BYTES (`body_too_large`)",
    "401": "no token, or one that is unknown, wrong or revoked (checked before the body is read)",
}
_OUTAGE = "the database cannot be reached (`database_unavailable`, with `Retry-After`)"


def _document_guards(app: FastAPI) -> None:
    """Put in the OpenAPI document what the body guard and the error handlers answer on their own:
    401 and 413 on every ``/api/`` route that takes a body, 503 on every ``/api/`` route."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = build()
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        paths: dict[str, dict[str, dict[str, Any]]] = spec["paths"]
        for path, operations in paths.items():
            if not path.startswith("/api/"):
                continue
            for method, operation in operations.items():
                answers = operation.setdefault("responses", {})
                answers.setdefault("503", {"description": _OUTAGE, "content": error})
                if method in ("post", "put", "patch"):
                    for status, why in _GUARD_ANSWERS.items():
                        answers.setdefault(status, {"description": why, "content": error})
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


def _sync_fx_stale_days(engine: Engine, settings: Settings) -> None:
    """RI_FX_STALE_DAYS, when set, into ``fx_settings`` (what the views' ``fx_stale`` reads). A
    database that cannot take it now (unreachable, read-only) keeps its value: logged, not fatal."""
    from ..storage.fx_settings import try_sync_stale_days

    problem = try_sync_stale_days(engine, settings)
    if problem is not None:
        log.warning("api.fx_stale_days_not_written", error=problem)


def create_app(
    settings: Settings,
    *,
    engine: Engine | None = None,
    requeue: Requeue | None = None,
    gates: HostGates | None = None,
) -> FastAPI:
    """The admin API over ``settings``' database (or ``engine``)."""
    owns_gates = gates is None
    gates = gates or _default_gates(settings)
    state = ApiState(
        settings=settings,
        engine=engine or make_engine(settings.database_url_or_default()),
        gates=gates,
        gates_shared=isinstance(gates.backend, RedisGateBackend),
        owns_gates=owns_gates,
        policies=load_policies(settings),
        requeue=requeue,
        schema_head=head_revision(migrations_dir=settings.migrations_dir),
    )
    _sync_fx_stale_days(state.engine, settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state.running = True
        try:
            yield
        finally:
            state.running = False
            await event_routes.close_hub(_)
            await state.aclose()

    app = FastAPI(
        title="RareIndex admin API",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.rareindex = state
    install_error_handlers(app)
    # inside the access log, so its 401s and 413s are logged like every other answer
    app.add_middleware(
        BodyGuard, engine_of=lambda: state.engine, max_bytes=settings.api_max_body_bytes
    )
    app.middleware("http")(_access_log)
    for router in (health.router, metrics.router, admin.router, certificates.router):
        app.include_router(router)
    app.include_router(status_router)
    app.include_router(pricing_routes.router)
    app.include_router(watchlist_routes.router)
    app.include_router(event_routes.router)
    app.include_router(events_live.router)
    app.include_router(review_routes.router)
    _document_guards(app)
    return app
