"""``rareindex fakeweb``: serve the local fake web in the foreground, for trying connectors."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from typing import Annotated

import typer

from ._common import console, settings_of
from ._fakeweb import fake_web_settings
from .api_cmd import bind


def fakeweb(
    ctx: typer.Context,
    port: Annotated[int, typer.Option(min=0, max=65535, help="0 picks a free port.")] = 8765,
) -> None:
    """Serve the fake web on 127.0.0.1 until Ctrl-C, and print the RI_CONNECT_TO to export."""
    settings = settings_of(ctx)
    if port:
        bind("127.0.0.1", port).close()  # a port in use is one error line, not a traceback
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with fake_web_settings(settings, port=port) as (local, base_url):
        console.print(f"fake web on {base_url}; in another shell:")
        console.print(f"  export RI_CONNECT_TO='{json.dumps(local.connect_to)}'", soft_wrap=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
