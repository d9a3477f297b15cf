"""The connector contract: :class:`Connector`.

A connector knows one source. It crawls it through ``ctx.fetch`` (never its own HTTP client),
turns what it fetched into canonical records with a pure ``normalize()``, reports its health, and
optionally resolves a single URL. Everything else (politeness, engines, retries, budgets, cursors,
storage) belongs to the SDK and the index.

One optional hook: ``score(result) -> float | None``, how much of what its parser expects a
fetched page holds (0..1, e.g. a :class:`FieldScorer`), or None for pages it does not judge.
Every crawl, probe and lookup passes it to the router, which escalates a result scoring below 0.6
to the next engine the connector and the host's policy allow (a JavaScript shell served to plain
clients scores 0 and goes to a rendering engine).

Example:
    >>> class Demo:
    ...     meta = ConnectorMeta(id="demo", source="Demo", engines=("api",),
    ...                          categories=("coin",), capabilities=("listing",))
    ...     version = "1"; parser_version = "1"
    ...     async def crawl(self, ctx): yield  # pragma: no cover
    ...     def normalize(self, raw): return []
    ...     async def health_check(self, ctx): return ConnectorHealth(status="UP")
    ...     async def lookup(self, url, ctx): return []
    >>> isinstance(Demo(), Connector)
    True
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Protocol, runtime_checkable

from ._context import CrawlContext, FetchResult
from ._health import ConnectorHealth
from ._meta import ConnectorMeta
from ._normalized import NormalizedRecord
from ._raw import RawRecord, RawRecordInput

__all__ = ["Connector", "scorer_of"]


@runtime_checkable
class Connector(Protocol):
    """What every connector implements. ``version`` and ``parser_version`` go on every raw row:
    bump ``version`` when crawling changes and ``parser_version`` when the mapping changes."""

    meta: ConnectorMeta
    version: str
    parser_version: str

    def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        """Yield raw captures; call ``ctx.set_cursor()`` after each page that is complete."""
        ...

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        """Pure and deterministic: the same raw record always gives the same records.

        Raises:
            ParseError: when the payload does not fit; the raw record is kept and counted.
        """
        ...

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        """A light probe (one small fetch) of the source."""
        ...

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        """Capture one URL (``url_lookup`` capability); return ``[]`` when unsupported."""
        ...


def scorer_of(connector: object) -> Callable[[FetchResult], float | None] | None:
    """The connector's optional ``score`` hook (None when it has none).

    >>> class Plain: pass
    >>> scorer_of(Plain()) is None
    True
    """
    score = getattr(connector, "score", None)
    return score if callable(score) else None
