"""``bodies.fake.test``: response bodies as real servers send them, good and broken.

=======================  =========================================================================
``/plain``               the product document, no encoding (what every other path decodes to)
``/gzip``                gzip
``/br``                  brotli (``Content-Encoding: br``)
``/zstd``                Zstandard (``Content-Encoding: zstd``)
``/gzip-deflate``        ``Content-Encoding: gzip, deflate``: gzip applied first, then deflate
``/gzip-truncated``      gzip cut before its end: the deflate stream and the CRC trailer missing
``/deflate-truncated``   zlib-wrapped deflate cut before its end
``/br-truncated``        brotli cut before its last meta-block
``/short``               ``Content-Length`` twice what is sent; then the connection closes
``/compress``            ``Content-Encoding: compress`` (LZW): an encoding no client decodes today
``/gzip-corrupt``        a gzip header, then bytes that are not deflate data
``/gzip-bomb``           gzip, ``/br-bomb`` brotli, ``/zstd-bomb`` Zstandard: each a few KB that
                         inflate to :data:`BOMB_BYTES`
``/flaky-truncated``     the first request of each ``?key=`` gets a truncated gzip, later ones
                         the whole body: a cut-short response that a retry fixes
=======================  =========================================================================

:attr:`Bodies.hits` counts the requests per path, so a test can tell how often a body was
retried from what the host saw.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections import Counter
from functools import cache
from typing import Any

import brotli  # type: ignore[import-untyped]  # no stubs
import zstandard
from starlette.requests import Request
from starlette.responses import Response

from ._web import json_bytes

__all__ = ["BODY_PATHS", "BOMB_BYTES", "HOST", "PRODUCTS", "Bodies", "bombs"]

HOST = "bodies.fake.test"
BOMB_BYTES = 8 * 1024 * 1024
PRODUCTS: dict[str, Any] = {
    "products": [
        {"id": n, "title": f"1999 Pokemon Base Set Charizard #{n} PSA 9", "price": "4100.00"}
        for n in range(1, 201)
    ]
}
BODY_PATHS = (
    "/plain",
    "/gzip",
    "/br",
    "/zstd",
    "/gzip-deflate",
    "/gzip-truncated",
    "/deflate-truncated",
    "/br-truncated",
    "/short",
    "/compress",
    "/gzip-corrupt",
    "/gzip-bomb",
    "/br-bomb",
    "/zstd-bomb",
    "/flaky-truncated",
)


@cache
def _plain() -> bytes:
    return json_bytes(PRODUCTS)


def _cut(data: bytes) -> bytes:
    return data[: len(data) * 2 // 3]  # well before any end marker or trailer


@cache
def _encoded() -> dict[str, tuple[bytes, str]]:
    """path -> (bytes sent, Content-Encoding)."""
    plain = _plain()
    gzipped = gzip.compress(plain, mtime=0)
    brotlied = brotli.compress(plain)
    return {
        "/gzip": (gzipped, "gzip"),
        "/br": (brotlied, "br"),
        "/zstd": (zstandard.ZstdCompressor().compress(plain), "zstd"),
        "/gzip-deflate": (zlib.compress(gzipped), "gzip, deflate"),
        "/gzip-truncated": (_cut(gzipped), "gzip"),
        "/deflate-truncated": (_cut(zlib.compress(plain)), "deflate"),
        "/br-truncated": (_cut(brotlied), "br"),
        "/compress": (b"\x1f\x9d\x90" + plain[:64], "compress"),
        "/gzip-corrupt": (gzipped[:10] + b"\xff" * 64, "gzip"),
    }


@cache
def bombs() -> dict[str, tuple[bytes, str]]:
    """path -> (bomb, Content-Encoding), built once (on the first bomb request, or call it first
    to keep the 8 MB it compresses out of a memory measurement)."""
    line = b'{"sku":"PSA10-000000","title":"1999 Pokemon Base Charizard #4 Holo","price":"0.00"}\n'
    data = line * (BOMB_BYTES // len(line) + 1)
    return {
        "/gzip-bomb": (gzip.compress(data, 9, mtime=0), "gzip"),
        "/br-bomb": (brotli.compress(data, quality=5), "br"),
        "/zstd-bomb": (zstandard.ZstdCompressor(level=3).compress(data), "zstd"),
    }


class _ShortBody(Response):
    """Declares ``Content-Length: 2n`` and sends ``n`` bytes. The server then closes the
    connection (uvicorn refuses to finish a response shorter than it declared)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(2 * len(self.body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": self.body, "more_body": True})
        # Returning with the response unfinished: the server logs it and drops the connection.


class Bodies:
    """The bodies handler; :attr:`hits` counts requests per path (``?key=`` included)."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self._lock = threading.Lock()

    def count(self, path: str) -> int:
        """How many requests ``path`` (with its ``?key=``, if any) has had."""
        with self._lock:
            return self.hits[path]

    async def __call__(self, request: Request) -> Response:
        path = request.url.path
        key = request.query_params.get("key")
        counted = f"{path}?key={key}" if key else path
        with self._lock:
            self.hits[counted] += 1
            seen = self.hits[counted]
        if path == "/plain":
            return _json(_plain())
        if path in _encoded():
            body, encoding = _encoded()[path]
            return _json(body, encoding)
        if path in {"/gzip-bomb", "/br-bomb", "/zstd-bomb"}:
            body, encoding = bombs()[path]
            return _json(body, encoding)
        if path == "/short":
            return _ShortBody(_plain()[:4096])
        if path == "/flaky-truncated":
            gzipped = _encoded()["/gzip"][0]
            return _json(_cut(gzipped) if seen == 1 else gzipped, "gzip")
        if path == "/":
            return Response("\n".join(BODY_PATHS) + "\n", media_type="text/plain")
        return Response("not found", status_code=404, media_type="text/plain")


def _json(body: bytes, encoding: str | None = None) -> Response:
    headers = {"content-encoding": encoding} if encoding else None
    return Response(body, media_type="application/json", headers=headers)
