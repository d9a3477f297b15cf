"""The fake stores behind a recorder of every request, for the conditional-request and market
tests: which paths each host saw, with which validators, answered with which status."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Engine
from starlette.requests import Request
from starlette.responses import Response

from rareindex.crawl import RunSummary, run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex_connectors import Connector
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS
from rareindex_fakeweb.sites import SiteHandler, build_sites


@dataclass(frozen=True, slots=True)
class Hit:
    host: str
    path: str
    query: str
    status: int
    if_none_match: str | None
    if_modified_since: str | None


@dataclass
class StoreWeb:
    """The fake web's collectibles sites (seed 7), every request recorded in :attr:`hits`."""

    sites: dict[str, SiteHandler] = field(default_factory=lambda: build_sites(7))
    hits: list[Hit] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)
    """Paths answered 503, as a host in trouble would."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            message = await receive()
            while message["type"] != "lifespan.shutdown":
                await send({"type": f"{message['type']}.complete"})
                message = await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        request = Request(scope, receive)
        host = (request.headers.get("host") or "").split(":")[0]
        handler = self.sites.get(host)
        if request.url.path in self.failing:
            response = Response(b"upstream trouble", status_code=503)
        else:
            response = await handler(request) if handler else Response(status_code=421)
        self.hits.append(
            Hit(
                host,
                request.url.path,
                request.url.query,
                response.status_code,
                request.headers.get("if-none-match"),
                request.headers.get("if-modified-since"),
            )
        )
        await response(scope, receive, send)

    def since(self, mark: int, host: str, suffix: str = "") -> list[Hit]:
        """The requests to ``host`` after the first ``mark`` ones, robots.txt left out."""
        return [
            h
            for h in self.hits[mark:]
            if h.host == host and h.path != "/robots.txt" and h.path.endswith(suffix)
        ]


@contextmanager
def serve_stores() -> Iterator[tuple[StoreWeb, Settings]]:
    web = StoreWeb()
    with serve_asgi(web) as base:
        port = urlsplit(base).port
        yield (
            web,
            Settings(
                _env_file=None,  # type: ignore[call-arg]
                connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
            ),
        )


def crawl(connector: Connector, db: Engine, settings: Settings, blobs: Path) -> RunSummary:
    """One incremental run of ``connector`` on ``db`` (migrated and synced on first use)."""
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])

    async def go() -> RunSummary:
        stack = build_fetch_stack(settings)
        try:
            return await run_connector(
                connector, db=db, stack=stack, store=RawRecordStore(BlobStore(blobs))
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())
