"""Serve an ASGI app on 127.0.0.1 for a test: :func:`serve_asgi`.

It runs any ASGI app with uvicorn over a real socket in a background thread. The socket is bound
before the server starts (port 0, so the kernel picks a free port and no other process can take
it between "find a port" and "listen"). The context manager yields the base URL once the server
accepts connections, and stops the server on exit. uvicorn is imported when a server starts: it
is a test dependency (``rareindex-connectors[testing]``), not one of the SDK's runtime ones.

Example:
    >>> from starlette.applications import Starlette
    >>> from starlette.responses import PlainTextResponse
    >>> from starlette.routing import Route
    >>> import httpx
    >>> app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("hi"))])
    >>> with serve_asgi(app) as base_url:
    ...     httpx.get(base_url + "/").text
    'hi'

In a pytest fixture::

    @pytest.fixture
    def fake_web_url() -> Iterator[str]:
        with serve_asgi(FakeWeb().app) as base_url:
            yield base_url
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uvicorn

__all__ = ["serve_asgi"]

_POLL_S = 0.005


@contextmanager
def serve_asgi(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 10.0,
    shutdown_timeout: float = 5.0,
) -> Iterator[str]:
    """Serve ``app`` with uvicorn on ``host`` and a free port; yield ``http://host:port``.

    Args:
        app: any ASGI 3 application (Starlette app, FastAPI app, a bare callable).
        host: loopback address to bind; the default keeps tests off the network.
        port: port to listen on; 0 (the default) lets the kernel pick a free one.
        startup_timeout: seconds to wait for the server to accept connections.
        shutdown_timeout: seconds to wait for in-flight requests when leaving the block; after
            that, running requests are cancelled.

    Raises:
        RuntimeError: the server did not start (for example, the app's lifespan startup failed)
            or did not stop in time.
        ImportError: uvicorn is not installed.
    """
    try:
        import uvicorn
    except ImportError as exc:  # the SDK's runtime has no web server; tests bring one
        raise ImportError(
            "serve_asgi needs uvicorn, a test dependency the SDK does not install: "
            "pip install 'rareindex-connectors[testing]' (or uvicorn itself)"
        ) from exc

    sock = _bind(host, port)
    port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, shutdown_timeout))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"asgi-{port}", daemon=True
    )
    thread.start()
    try:
        _wait_started(server, thread, startup_timeout)
        yield f"http://{host}:{port}"
    finally:
        _stop(server, thread, shutdown_timeout)
        sock.close()


def _bind(host: str, port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit it: without it, Nagle + delayed ACK stall every reused-connection
    # request about 40 ms on loopback.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise RuntimeError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def _config(app: Any, shutdown_timeout: float) -> uvicorn.Config:
    import uvicorn  # imported by serve_asgi already

    # log_config=None: uvicorn must not reconfigure the test process's logging.
    # ws="none": no websocket stack (and none of its deprecation warnings) in plain HTTP fakes.
    return uvicorn.Config(
        app,
        loop="asyncio",
        ws="none",
        lifespan="auto",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, int(shutdown_timeout)),
    )


def _wait_started(server: uvicorn.Server, thread: threading.Thread, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("ASGI server exited during startup")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"ASGI server did not start within {timeout}s")
        time.sleep(_POLL_S)


def _stop(server: uvicorn.Server, thread: threading.Thread, timeout: float) -> None:
    server.should_exit = True
    thread.join(timeout + 1.0)
    if thread.is_alive():
        server.force_exit = True
        thread.join(1.0)
    if thread.is_alive():
        raise RuntimeError("ASGI server did not stop in time")
