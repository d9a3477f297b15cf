"""What an engine is: something that turns a :class:`FetchRequest` into a :class:`FetchResult`
or raises from the SDK's error tree. Engines never let a vendor's exception escape."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from .._context import FetchResult, ResponseKind
from .._raw import EngineName

__all__ = ["Engine", "FetchRequest"]


@dataclass(frozen=True, slots=True)
class FetchRequest:
    """One logical fetch. ``etag`` / ``last_modified`` make it conditional (a 304 is cheap)."""

    url: str
    expect: ResponseKind = "text"
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str | int] | None = None
    etag: str | None = None
    last_modified: str | None = None
    probe: bool = False


class Engine(Protocol):
    """A way to fetch: ``api`` (direct HTTP), ``firecrawl``, ``scrapfly``."""

    name: EngineName
    paid: bool

    def unavailable_reason(self) -> str | None:
        """Why this engine cannot run now (``"RI_SCRAPFLY_API_KEY is not set"``), or None."""
        ...

    async def fetch(self, request: FetchRequest) -> FetchResult:
        """Fetch through the target host's gate and policy; raise ``FetchError`` subclasses."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
