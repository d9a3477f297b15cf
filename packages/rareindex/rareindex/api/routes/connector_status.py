"""``POST /api/admin/connectors/{id}/pause|resume|disable|enable|maintenance`` (admin tokens).

The API's twins of ``rareindex connectors pause|resume|disable|enable|maintenance ID --reason``:
the same transitions (:mod:`rareindex.storage.connector_status`), an optional JSON body
``{"reason": "…"}``, and each change stored and logged (``connector.status_changed``) with the
token's principal (``token:<name>``) as who.
"""

from __future__ import annotations

from typing import Annotated, Literal

import structlog
from fastapi import APIRouter, Body, Depends

from ...storage.connector_status import (
    Action,
    ConnectorNotFound,
    StatusConflict,
    change_status,
)
from ...storage.tokens import TokenInfo
from ..auth import require_admin, require_token
from ..errors import ApiError, error_responses
from ..schemas import _Out
from ..state import ApiState, api_state

__all__ = ["OperatorStatusChange", "StatusReason", "router"]

log = structlog.get_logger(__name__)

router = APIRouter(
    prefix="/api/admin",
    tags=["admin"],
    dependencies=[Depends(require_token)],
    responses=error_responses(401),
)
State = Annotated[ApiState, Depends(api_state)]
Admin = Annotated[TokenInfo, Depends(require_admin)]


class StatusReason(_Out):
    """Why the operator changes the status (stored with it and logged)."""

    model_config = _Out.model_config | {"extra": "forbid"}

    reason: str | None = None


class OperatorStatusChange(_Out):
    """The connector's status before and after the action."""

    id: str
    previous_status: Literal["active", "paused", "maintenance", "disabled"]
    status: Literal["active", "paused", "maintenance", "disabled"]


Reason = Annotated[StatusReason | None, Body(description='optional: {"reason": "…"}')]


def principal(token: TokenInfo) -> str:
    """Who acted through the API: the token's name (never its secret)."""
    return f"token:{token.name}"


def _change(
    state: ApiState, token: TokenInfo, connector_id: str, action: Action, body: StatusReason | None
) -> OperatorStatusChange:
    by = principal(token)
    reason = body.reason if body is not None else None
    try:
        change = change_status(state.engine, connector_id, action, by=by, reason=reason)
    except ConnectorNotFound as exc:
        raise ApiError(404, "unknown_connector", str(exc)) from None
    except StatusConflict as exc:
        raise ApiError(409, "status_conflict", str(exc)) from None
    log.info(
        "connector.status_changed" if change.changed else "connector.status_unchanged",
        connector=connector_id,
        action=action,
        before=change.previous_status,
        status=change.status,
        by=by,
        reason=change.reason,
    )
    return OperatorStatusChange(
        id=connector_id,
        previous_status=change.previous_status,
        status=change.status,
    )


_CONTROL = {
    "response_model": OperatorStatusChange,
    "responses": error_responses(403, 404, 409, 422),
}


@router.post("/connectors/{connector_id}/pause", **_CONTROL)  # type: ignore[arg-type]
def pause_connector(
    connector_id: str, state: State, token: Admin, body: Reason = None
) -> OperatorStatusChange:
    """Set the connector ``paused``: the scheduler enqueues nothing for it until resumed."""
    return _change(state, token, connector_id, "pause", body)


@router.post("/connectors/{connector_id}/resume", **_CONTROL)  # type: ignore[arg-type]
def resume_connector(
    connector_id: str, state: State, token: Admin, body: Reason = None
) -> OperatorStatusChange:
    """Set a paused connector ``active`` again (a disabled or maintenance one needs enable)."""
    return _change(state, token, connector_id, "resume", body)


@router.post("/connectors/{connector_id}/maintenance", **_CONTROL)  # type: ignore[arg-type]
def maintenance_connector(
    connector_id: str, state: State, token: Admin, body: Reason = None
) -> OperatorStatusChange:
    """Put the connector in ``maintenance``: not scheduled, MAINTENANCE in health."""
    return _change(state, token, connector_id, "maintenance", body)


@router.post("/connectors/{connector_id}/disable", **_CONTROL)  # type: ignore[arg-type]
def disable_connector(
    connector_id: str, state: State, token: Admin, body: Reason = None
) -> OperatorStatusChange:
    """Set the connector ``disabled``: not scheduled, DISABLED in health, until enabled."""
    return _change(state, token, connector_id, "disable", body)


@router.post("/connectors/{connector_id}/enable", **_CONTROL)  # type: ignore[arg-type]
def enable_connector(
    connector_id: str, state: State, token: Admin, body: Reason = None
) -> OperatorStatusChange:
    """Make a disabled or maintenance connector ``active`` again."""
    return _change(state, token, connector_id, "enable", body)
