"""One error shape for every failure: ``{"error": "<code>", "detail": "<one sentence>"}``.

Routes raise :class:`ApiError` (a :class:`~rareindex.errors.RareIndexError`); the handlers installed
by :func:`install_error_handlers` also turn FastAPI's own 404/405, request-validation errors, a
database outage (storage's :class:`~rareindex.errors.DatabaseUnavailable`: 503
``database_unavailable``, with ``Retry-After``) and unexpected exceptions (500, logged as
``api.failed`` with the traceback) into that shape, so a client parses one thing — and
:func:`install_error_handlers` says so in the OpenAPI document: every 422 there is an
:class:`ErrorBody`, not FastAPI's ``HTTPValidationError`` (which the server never sends).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import DatabaseUnavailable, RareIndexError
from .schemas import ErrorBody

__all__ = ["ApiError", "error_responses", "install_error_handlers"]

log = structlog.get_logger(__name__)

_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 422: "bad_request"}


class ApiError(RareIndexError):
    """An answer other than success, with its status, code and sentence."""

    def __init__(
        self, status: int, error: str, detail: str, *, headers: Mapping[str, str] | None = None
    ):
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = dict(headers or {})


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` documenting these statuses with :class:`ErrorBody`."""
    return {status: {"model": ErrorBody} for status in statuses}


def _json(status: int, error: str, detail: str, headers: Mapping[str, str] | None = None) -> Any:
    body = ErrorBody(error=error, detail=detail).model_dump()
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


async def _api_error(request: Request, exc: Exception) -> Any:
    assert isinstance(exc, ApiError)
    return _json(exc.status, exc.error, exc.detail, exc.headers)


async def _http_error(request: Request, exc: Exception) -> Any:
    assert isinstance(exc, StarletteHTTPException)
    code = _CODES.get(exc.status_code, "error")
    headers = getattr(exc, "headers", None)
    allowed = _allowed(request) if exc.status_code == 405 else ""
    if allowed:  # else Starlette's own (a route the document leaves out)
        headers = {**(headers or {}), "Allow": allowed}
    return _json(exc.status_code, code, str(exc.detail), headers)


def _allowed(request: Request) -> str:
    """Every method the app documents at the request's path: Starlette's 405 names only the
    first route that matched the path, and a path may have several (``GET`` and ``POST``)."""
    path = request.url.path
    methods: set[str] = set()
    for template, operations in request.app.openapi()["paths"].items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            methods |= {m.upper() for m in operations}
    return ", ".join(sorted(methods))


MAX_PROBLEMS = 10
"""A 422 names at most this many problems (then how many more), each cut to
:data:`MAX_PROBLEM_CHARS`: a body with a million bad keys gets a short answer."""
MAX_PROBLEM_CHARS = 200


async def _validation_error(request: Request, exc: Exception) -> Any:
    assert isinstance(exc, RequestValidationError)
    errors = exc.errors()
    problems = []
    for error in errors[:MAX_PROBLEMS]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        problem = f"{where}: {message}" if where else message
        cut = problem[:MAX_PROBLEM_CHARS]
        problems.append(cut if len(cut) == len(problem) else cut + "…")
    if len(errors) > MAX_PROBLEMS:
        problems.append(f"and {len(errors) - MAX_PROBLEMS} more")
    return _json(422, "bad_request", "; ".join(problems) or "invalid request")


async def _unexpected(request: Request, exc: Exception) -> Any:
    route = getattr(request.scope.get("route"), "path", "(unmatched)")
    if isinstance(exc, DatabaseUnavailable):  # storage translated it: the dependency is down
        log.warning("api.database_unavailable", route=route, error=type(exc).__name__)
        return _json(
            503,
            "database_unavailable",
            "the database cannot be reached; try again when it is back (GET /health/ready)",
            {"Retry-After": "30"},
        )
    log.error("api.failed", route=route, error=type(exc).__name__, exc_info=exc)
    return _json(500, "internal_error", "an unexpected error; the server log has it (api.failed)")


_UNREADABLE = "the body cannot be read as JSON: not UTF-8, or not a JSON document (`bad_request`)"
_VALIDATION = "the request does not match this document (`bad_request`, the first problems named)"


def _document_validation_errors(app: FastAPI) -> None:
    """Every documented 422 is :class:`ErrorBody`, as :func:`_validation_error` answers (FastAPI's
    own ``HTTPValidationError`` and ``ValidationError`` schemas leave the document), and every
    operation with a body documents the 400 FastAPI raises for one it cannot decode."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        spec = build()
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        for operations in spec["paths"].values():
            for operation in operations.values():
                if "requestBody" in operation:
                    operation["responses"].setdefault(
                        "400", {"description": _UNREADABLE, "content": error}
                    )
                answer = operation.get("responses", {}).get("422")
                if answer is not None:
                    described = answer.get("description", "Validation Error")
                    answer["content"] = error
                    answer["description"] = (
                        _VALIDATION if described == "Validation Error" else described
                    )
        schemas = spec.get("components", {}).get("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


def install_error_handlers(app: FastAPI) -> None:
    """The handlers above, and the OpenAPI document saying what they answer."""
    _document_validation_errors(app)
    app.add_exception_handler(Exception, _unexpected)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
