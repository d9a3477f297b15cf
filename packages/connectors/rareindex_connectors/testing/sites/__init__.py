"""The fake web's collectibles sites, generated reproducibly from a seed.

:func:`build_sites` returns ``{host: handler}``; :class:`~rareindex_connectors.testing.FakeWeb`
mounts every site next to its misbehaving hosts. :data:`SITE_HOSTS` lists the host names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["SITE_HOSTS", "SiteHandler", "build_sites"]

SiteHandler = Callable[[Request], Awaitable[Response]]

SITE_HOSTS: tuple[str, ...] = ()


def build_sites(seed: int = 7) -> dict[str, SiteHandler]:
    """Every collectibles site, its data generated from ``seed`` (same seed, same pages)."""
    return {}
