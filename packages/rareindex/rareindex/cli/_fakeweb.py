"""Serving the local fake web from the CLI (demo, ``--fake-web`` options, ``rareindex fakeweb``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from ..settings import Settings


@contextmanager
def fake_web_settings(settings: Settings, *, port: int = 0) -> Iterator[tuple[Settings, str]]:
    """Serve the fake web on 127.0.0.1 and yield settings whose ``connect_to`` points its host
    names there (URLs, policies and gates keep the names)."""
    from rareindex_connectors.testing import serve_asgi
    from rareindex_fakeweb import FAKE_HOSTS, FakeWeb

    with serve_asgi(FakeWeb().app, port=port) as base_url:
        bound = urlsplit(base_url).port
        connect_to = {**settings.connect_to, **{host: f"127.0.0.1:{bound}" for host in FAKE_HOSTS}}
        yield settings.model_copy(update={"connect_to": connect_to}), base_url
