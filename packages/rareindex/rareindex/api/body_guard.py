"""The door of every request that carries a body: the token first, then at most so many bytes.

FastAPI reads and parses a request's body before its dependencies run, so without this guard an
anonymous client could make the server read, parse and validate any amount of JSON before it was
told its token is missing. :class:`BodyGuard` is an ASGI middleware in front of the app; for a
request with a body (``POST``, ``PUT``, ``PATCH``) to an ``/api/`` route it

1. checks the bearer token (the same check as :func:`~rareindex.api.auth.require_token`) before
   one byte of the body is read: 401 ``missing_token`` / ``invalid_token``;
2. refuses a declared ``Content-Length`` over the limit at once, and counts the bytes as they
   stream in, stopping at the limit: 413 ``body_too_large``, naming the limit;
3. hands the app the body it read, so routes see the request unchanged.

The limit is ``RI_API_MAX_BODY_BYTES`` (64 KiB by default: the largest body a route takes is a
lookup of one URL or certificate). Routes still check the token and its scope themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from anyio import to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from ..storage.tokens import authenticate
from .schemas import ErrorBody

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyGuard"]

DEFAULT_MAX_BODY_BYTES = 64 * 1024
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
_REALM = 'Bearer realm="rareindex"'

Message = MutableMapping[str, Any]


class BodyGuard:
    """See the module docstring. ``engine_of`` gives the database engine of the running app."""

    def __init__(self, app: ASGIApp, *, engine_of: Callable[[], Any], max_bytes: int) -> None:
        self.app = app
        self.engine_of = engine_of
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        guarded = (
            scope["type"] == "http"
            and scope["method"] in _WITH_BODY
            and str(scope["path"]).startswith("/api/")
        )
        if not guarded:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = await self._refuse_token(headers.get("authorization", ""))
        if refusal is not None:
            await refusal(send)
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._too_large(send)
                return
            more = bool(message.get("more_body", False))
        await self.app(scope, _replay(bytes(body), receive), send)

    async def _refuse_token(self, authorization: str) -> Callable[[Send], Awaitable[None]] | None:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return _answer(
                401,
                "missing_token",
                "send `Authorization: Bearer <token>`; create one with "
                "`rareindex tokens create NAME`",
                {"www-authenticate": _REALM},
            )
        info = await to_thread.run_sync(authenticate, self.engine_of(), token.strip())
        if info is None:
            return _answer(
                401,
                "invalid_token",
                "the token is unknown, wrong or revoked",
                {"www-authenticate": f'{_REALM}, error="invalid_token"'},
            )
        return None

    async def _too_large(self, send: Send) -> None:
        detail = f"the request body is larger than {self.max_bytes} bytes (RI_API_MAX_BODY_BYTES)"
        await _answer(413, "body_too_large", detail, {})(send)


def _answer(
    status: int, error: str, detail: str, headers: dict[str, str]
) -> Callable[[Send], Awaitable[None]]:
    body = ErrorBody(error=error, detail=detail).model_dump_json().encode()

    async def send_it(send: Send) -> None:
        raw = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        raw += [(k.encode(), v.encode()) for k, v in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": body})

    return send_it


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    return replay
