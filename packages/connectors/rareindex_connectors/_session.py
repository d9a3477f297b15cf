"""A router session: one run's (or one probe's) use of the process's shared router.

The :class:`~._router.Router` holds what a process shares — engines, policies, host gates, the
robots.txt cache, the credit budget it started with. A session holds what is one run's: the
connector's engine order and scorer, its own engine statistics, the credits left to it and its
cost callback. ``session.fetcher()`` is the one adapter from the router to the ``ctx.fetch`` a
connector calls; its hooks are what the crawl (the lease check, stored validators for
``conditional=True``) and the health probe (the hosts touched, the errors the connector caught)
add.

Example:
    >>> session = router.session(("api", "firecrawl"), on_cost=ledger.append)  # doctest: +SKIP
    >>> ctx = CrawlContext("cards-shop", session.fetcher())                   # doctest: +SKIP
    >>> session.stats["api"].attempts                                          # doctest: +SKIP
    3
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlencode

from ._context import Fetcher, FetchResult, ResponseKind
from ._raw import EngineName
from ._scoring import Scorer
from .errors import FetchError

if TYPE_CHECKING:
    from ._robots_rules import RobotsRules
    from ._router import CostEntry, EngineStats, Router

__all__ = ["RouterSession", "Validators"]


@dataclass(slots=True)
class Tally:
    """What a session counts: engine stats, credits left, the cost callback, and the hosts whose
    written robots permission it logged."""

    credits_left: dict[EngineName, float]
    on_cost: Callable[[CostEntry], None] | None = None
    stats: dict[EngineName, EngineStats] = field(default_factory=dict)
    permissions_logged: set[str] = field(default_factory=set)


class Validators(Protocol):
    """Stored validators for conditional fetches: what the crawl's URL budget provides."""

    def validators(self, key: str, /) -> tuple[str | None, str | None]:
        """``(etag, last_modified)`` stored for ``key`` (a URL with its sorted query)."""
        ...

    def observe(self, key: str, result: FetchResult, /) -> object:
        """Record what a conditional fetch of ``key`` answered (any return value is ignored)."""
        ...


class RouterSession:
    """One run's or one probe's fetches through a shared router (see the module docstring)."""

    def __init__(
        self,
        router: Router,
        engines: Sequence[EngineName],
        *,
        scorer: Scorer | None = None,
        on_cost: Callable[[CostEntry], None] | None = None,
        probe: bool = False,
        tally: Tally | None = None,
    ) -> None:
        self.router = router
        self.engines = tuple(engines)
        self.scorer = scorer
        self.probe = probe
        self.tally = tally or Tally(credits_left=dict(router.credits_left), on_cost=on_cost)
        """``tally`` given: the session counts into it (the router's own, for its fetcher)."""

    @property
    def stats(self) -> dict[EngineName, EngineStats]:
        """This session's engine statistics (see :class:`~._router.EngineStats`)."""
        return self.tally.stats

    async def fetch(
        self,
        url: str,
        *,
        expect: ResponseKind = "text",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
    ) -> FetchResult:
        """One fetch through the router, with this session's engines, scorer and accounts."""
        return await self.router.fetch_for(
            self.tally,
            url,
            engines=self.engines,
            expect=expect,
            headers=headers,
            params=params,
            scorer=self.scorer,
            etag=etag,
            last_modified=last_modified,
            probe=self.probe,
        )

    async def robots_rules(self, url: str) -> RobotsRules:
        """The robots.txt rules of ``url``'s origin, read through this session's engines."""
        return await self.router.robots_rules_for(self.tally, url, engines=self.engines)

    def fetcher(
        self,
        *,
        before: Callable[[str], None] | None = None,
        validators: Validators | None = None,
        on_error: Callable[[FetchError], None] | None = None,
    ) -> Fetcher:
        """The ``ctx.fetch`` a connector calls. ``before(url)`` runs first (it may raise: a run
        that lost its lease sends nothing); ``validators`` serves ``conditional=True`` (without
        it a conditional fetch is a full one); ``on_error`` sees every fetch error before it is
        raised to the connector."""

        async def fetch(
            url: str,
            *,
            expect: ResponseKind = "text",
            headers: Mapping[str, str] | None = None,
            params: Mapping[str, str | int] | None = None,
            conditional: bool = False,
        ) -> FetchResult:
            if before is not None:
                before(url)
            key = etag = last_modified = None
            if conditional and validators is not None:
                key = f"{url}?{urlencode(sorted(params.items()))}" if params else url
                etag, last_modified = validators.validators(key)
            try:
                result = await self.fetch(
                    url,
                    expect=expect,
                    headers=headers,
                    params=params,
                    etag=etag,
                    last_modified=last_modified,
                )
            except FetchError as exc:
                if on_error is not None:
                    on_error(exc)
                raise
            if key is not None and validators is not None:
                validators.observe(key, result)
            return result

        return fetch
