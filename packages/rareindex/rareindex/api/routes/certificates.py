"""``/api/certificates/{grader}/{number}`` and ``/api/lookup``: the marketplace scanner's calls.

Both go through :mod:`rareindex.certs`. A refused lookup becomes ``{"error": <reason>, "detail":
…}`` with the reason's status — ``unsafe_url``, ``bad_input`` and ``no_connector`` -> 422,
``not_found`` -> 404 — and nothing is fetched for a refused URL (the SSRF policy checks it, and
every redirect hop, first). A source or registry that fails answers 502 ``fetch_failed``.
"""

from __future__ import annotations

from typing import Annotated

import structlog
from fastapi import APIRouter, Depends

from rareindex_connectors import ConnectorError

from ...certs import CertificateView, CertLookupResult, get_certificate, lookup
from ...errors import LookupRefused
from ..auth import require_token
from ..errors import ApiError, error_responses
from ..schemas import LookupRequest
from ..state import ApiState, api_state

__all__ = ["REFUSAL_STATUS", "router"]

log = structlog.get_logger(__name__)

REFUSAL_STATUS = {"unsafe_url": 422, "bad_input": 422, "no_connector": 422, "not_found": 404}

router = APIRouter(
    prefix="/api",
    tags=["certificates"],
    dependencies=[Depends(require_token)],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]


def _refused(exc: LookupRefused) -> ApiError:
    log.info("lookup.refused", reason=exc.reason)
    return ApiError(REFUSAL_STATUS.get(exc.reason, 422), exc.reason, str(exc))


@router.get(
    "/certificates/{grader}/{number}",
    response_model=CertificateView,
    responses=error_responses(404, 422),
)
def certificate(grader: str, number: str, state: State) -> CertificateView:
    """A stored certificate (verified, pending or not found at its registry) and its sightings."""
    try:
        view = get_certificate(state.engine, grader, number)
    except LookupRefused as exc:
        raise _refused(exc) from None
    if view is None:
        raise ApiError(404, "not_found", f"no certificate {grader} {number} is known")
    return view


@router.post(
    "/lookup",
    response_model=CertLookupResult,
    responses=error_responses(404, 422, 502),
)
async def lookup_target(body: LookupRequest, state: State) -> CertLookupResult:
    """A listing URL (``{"url": …}``) or a cert number (``{"target": "PSA 12345678"}``) -> the
    certificates found, verified through the grading registries, and their sightings."""
    registry, stack = state.lookup_tools()
    try:
        return await lookup(
            state.engine, state.settings, body.value, registry=registry, stack=stack
        )
    except LookupRefused as exc:
        raise _refused(exc) from None
    except ConnectorError as exc:  # the source or the registry failed: theirs, not the caller's
        log.warning("lookup.failed", error=type(exc).__name__)
        raise ApiError(502, "fetch_failed", str(exc)) from None
