"""Bearer-token authentication for every ``/api/*`` route.

The token is checked against the database on each request (no cache that could outlive a
revocation): missing -> 401 ``missing_token``; malformed, unknown, wrong or revoked -> 401
``invalid_token``; both with ``WWW-Authenticate: Bearer``. A ``read`` token calling a control
endpoint -> 403 ``insufficient_scope``. The token's id (never the token) is kept on the request
for the access log.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..storage.tokens import TokenInfo, authenticate
from .errors import ApiError
from .state import ApiState, api_state

__all__ = ["require_admin", "require_token"]

_bearer = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="A token from `rareindex tokens create NAME`, sent as `Authorization: Bearer …`.",
)
_REALM = 'Bearer realm="rareindex"'


def require_token(
    request: Request,
    state: Annotated[ApiState, Depends(api_state)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> TokenInfo:
    """The live token of this request, or a 401."""
    if credentials is None or not credentials.credentials:
        raise ApiError(
            401,
            "missing_token",
            "send `Authorization: Bearer <token>`; create one with `rareindex tokens create NAME`",
            headers={"WWW-Authenticate": _REALM},
        )
    info = authenticate(state.engine, credentials.credentials)
    if info is None:
        raise ApiError(
            401,
            "invalid_token",
            "the token is unknown, wrong or revoked",
            headers={"WWW-Authenticate": f'{_REALM}, error="invalid_token"'},
        )
    request.state.token_id = info.id
    return info


def require_admin(token: Annotated[TokenInfo, Depends(require_token)]) -> TokenInfo:
    """A live ``admin`` token, or a 403 for a ``read`` one."""
    if token.role != "admin":
        raise ApiError(
            403,
            "insufficient_scope",
            f"token {token.id} has role {token.role!r}; this endpoint needs an admin token",
            headers={"WWW-Authenticate": f'{_REALM}, error="insufficient_scope"'},
        )
    return token
