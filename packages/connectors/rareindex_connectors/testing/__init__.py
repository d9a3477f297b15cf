"""Test helpers for connector authors: what a connector's own tests need, nothing more.

* :class:`FakeEngine` — an engine that answers from a script, so a connector or router test runs
  without a network;
* :class:`ScaledClock` — a clock faster than real time, for politeness tests measured in minutes;
* :func:`serve_asgi` — runs an ASGI app on 127.0.0.1 over a real socket for the length of a
  ``with`` block. It needs uvicorn, a test dependency (``rareindex-connectors[testing]``) imported
  only when a server starts, so the SDK's runtime has no web server.

The fake web that RareIndex's own suite and demo crawl (its sites, the fake Firecrawl and Scrapfly
APIs) is a package of its own, :mod:`rareindex_fakeweb` (distribution ``rareindex-fakeweb``).

Example:
    >>> import asyncio
    >>> from rareindex_connectors import FetchResult
    >>> from rareindex_connectors.runtime import FetchRequest
    >>> engine = FakeEngine("api", [FetchResult(url="u", status=200, content=b"{}", engine="api")])
    >>> asyncio.run(engine.fetch(FetchRequest("https://x.test/"))).status
    200
"""

from .clock import ScaledClock
from .fake_engine import FakeEngine
from .serve import serve_asgi

__all__ = ["FakeEngine", "ScaledClock", "serve_asgi"]
