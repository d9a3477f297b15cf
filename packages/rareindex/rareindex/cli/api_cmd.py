"""``rareindex api``: serve the admin API with uvicorn until SIGTERM/Ctrl-C.

The socket is bound here, before uvicorn starts, so a port in use is one ``error:`` line with the
fix instead of a traceback. Dead-letter requeue needs the broker, which belongs to ``workers``:
:func:`command` takes a factory for it, and the layer that has a broker registers
``command(requeue_factory=…)``; the plain :data:`api` serves without one (the requeue endpoint
then answers 503 and names the CLI command that does it).

Example:
    $ rareindex tokens create grafana
    $ rareindex api --port 8000
"""

from __future__ import annotations

import errno
import signal
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
import uvicorn

from ..errors import ConfigError
from ..settings import Settings
from ..storage import Engine
from ._common import console, migrated_database, settings_of

if TYPE_CHECKING:  # the API (FastAPI) is imported when served, not for every command
    from ..api import Requeue

__all__ = ["RequeueFactory", "api", "bind", "command", "serve"]

RequeueFactory = Callable[[Settings, Engine], "Requeue | None"]


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; :class:`ConfigError` with the fix when it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and a
    # kept-alive client otherwise waits ~40 ms (Nagle + delayed ACK) on every response.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use; pick another with --port, "
                "or stop the process listening there"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    return sock


def serve(
    settings: Settings,
    engine: Engine,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    requeue: Requeue | None = None,
) -> None:
    """Run the admin API on ``host:port`` until interrupted."""
    sock = bind(host, port)
    bound_port = sock.getsockname()[1]
    from ..api import create_app

    app = create_app(settings, engine=engine, requeue=requeue)
    config = uvicorn.Config(
        app,
        log_config=None,  # structlog, configured by the CLI, handles every line
        access_log=False,  # our api.request event logs route templates, never concrete paths
        server_header=False,
        lifespan="on",
    )
    console.print(
        f"admin API on http://{host}:{bound_port} (OpenAPI at /docs); "
        f"requeue {'via the broker' if requeue else 'unavailable'}; Ctrl-C to stop"
    )
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal; end both like
    # Ctrl-C, quietly, with exit status 0 (as `rareindex worker` does).
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        _Server(config, app).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
    console.print("admin API: stopped")


class _Server(uvicorn.Server):
    """uvicorn, ending the event streams first when it stops: a stream never ends by itself,
    and uvicorn waits for every response to finish (its clients reconnect elsewhere, or here
    after the restart, with ``Last-Event-ID``)."""

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self.app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        from ..api.routes.events import close_hub

        for server in self.servers:  # no new stream from here on (uvicorn closes them again)
            server.close()
        await close_hub(self.app)
        await super().shutdown(sockets)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def command(requeue_factory: RequeueFactory | None = None) -> Callable[..., None]:
    """The ``rareindex api`` command, with an optional way to requeue dead letters."""

    def api(
        ctx: typer.Context,
        host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port (0: any).")] = 8000,
    ) -> None:
        """Serve the admin API (connectors, coverage, certificates, /health, /metrics)."""
        settings = settings_of(ctx)
        engine = migrated_database(settings)
        requeue = requeue_factory(settings, engine) if requeue_factory else None
        serve(settings, engine, host=host, port=port, requeue=requeue)

    return api


api = command()
"""``rareindex api`` without a broker hook (requeue answers 503)."""
