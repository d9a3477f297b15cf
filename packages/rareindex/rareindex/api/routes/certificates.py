"""``/api/certificates/{grader}/{number}`` and ``/api/lookup``: the marketplace scanner's calls.

Both go through :mod:`rareindex.certs`. A refused lookup becomes ``{"error": <reason>, "detail":
…}`` with the reason's status — ``unsafe_url``, ``bad_input`` and ``no_connector`` -> 422,
``not_found`` -> 404 — and nothing is fetched for a refused URL (the SSRF policy checks it, and
every redirect hop, first). A source or registry that fails answers 502 ``fetch_failed``.

The OpenAPI document gives the formats these routes take — a grader's token or ``Beckett`` in any
case, a cert number of 7-10 ASCII digits (optionally ``-NNN``, after an optional ``#``), a lookup
target of that number after an optional grader and ``cert`` label (the patterns in
:mod:`..schemas`) — and each route refuses anything else with 422 ``bad_input`` before the lookup
reads it, so a value the document allows is one the lookup accepts, and no other.
"""

from __future__ import annotations

import re
from typing import Annotated

import structlog
from fastapi import APIRouter, Depends, Path

from rareindex_connectors.errors import ConnectorError

from ...certs import CertificateView, CertLookupResult, get_certificate, lookup
from ...certs.extract import GRADERS
from ...errors import LookupRefused
from ..auth import require_token
from ..errors import ApiError, error_responses
from ..schemas import (
    CERT_NUMBER_PATTERN,
    GRADER_PATTERN,
    TARGET_PATTERN,
    URL_PATTERN,
    LookupRequest,
)
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

_GRADER = f"^{GRADER_PATTERN}$"
_NUMBER = f"^{CERT_NUMBER_PATTERN}$"
# Checked with re.search, as JSON Schema validators check a pattern (a trailing newline passes
# ``$`` there too, and the lookup strips it).

Grader = Annotated[
    str,
    Path(
        description=f"a grader's token ({', '.join(GRADERS)}; Beckett is BGS), in any case",
        examples=["PSA"],
        json_schema_extra={"pattern": _GRADER},
    ),
]
Number = Annotated[
    str,
    Path(
        description="7-10 ASCII digits, optionally -NNN (NGC, CGC), after an optional #",
        examples=["12345678"],
        json_schema_extra={"pattern": _NUMBER},
    ),
]


def _bad_input(detail: str) -> ApiError:
    log.info("lookup.refused", reason="bad_input")
    return ApiError(422, "bad_input", detail)


def _refused(exc: LookupRefused) -> ApiError:
    log.info("lookup.refused", reason=exc.reason)
    return ApiError(REFUSAL_STATUS.get(exc.reason, 422), exc.reason, str(exc))


@router.get(
    "/certificates/{grader}/{number}",
    response_model=CertificateView,
    responses=error_responses(404, 422),
)
def certificate(grader: Grader, number: Number, state: State) -> CertificateView:
    """A stored certificate (verified, pending or not found at its registry) and its sightings."""
    if not (re.search(_GRADER, grader) and re.search(_NUMBER, number)):  # the document's formats
        raise _bad_input(
            f"{grader[:20]!r} {number[:20]!r} is not a grader ({', '.join(GRADERS)}) and a cert "
            "number (7-10 digits, optionally -NNN)"
        )
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
    if body.target is not None and not re.search(TARGET_PATTERN, body.target):
        raise _bad_input(
            f"{body.target[:80]!r} is not a cert number (7-10 digits, optionally -NNN, "
            f"optionally after a grader: {', '.join(GRADERS)} and a cert label)"
        )
    if body.url is not None and not re.search(URL_PATTERN, body.url):
        raise _bad_input(f"{body.url[:80]!r} is not a URL (scheme://host/path, e.g. https://…)")
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
