"""The router: one fetch, tried on the connector's engines in priority order.

Before anything is sent to a host, its robots.txt is read (once per origin, cached: see
:mod:`._robots`): a URL it disallows raises :class:`RobotsDisallowed`, and a ``Crawl-delay``
stricter than the policy raises the host's interval in the gates.

For each engine allowed by both the connector and the host's policy:

* skip it (logged, with the reason) when it is unavailable (a paid engine without its key) or its
  credit budget is spent;
* a challenge page (:class:`Blocked`) escalates to the next engine;
* a result scoring below 0.6 (the connector's scorer, ``Connector.score`` passed as
  ``scorer``, or a document heuristic where it answers None) escalates; if every engine
  scores low, the best result is returned, for the parser to judge;
* 404/410 never escalate, nor do SSRF refusals, oversize bodies, an open breaker, a spent budget
  or a ``Retry-After`` beyond the cap: those are answers, not engine failures.

A run or a probe fetches through a :class:`~._session.RouterSession` (``router.session(…)``):
the router is shared, the session's stats and costs are the run's. Every attempt feeds the
session's statistics (or the router's own, :attr:`Router.stats`, for fetches made through it):
``{attempts, success, credits, ms, statuses, blocked, circuit_open, indeterminate, robots}`` per
engine (``robots`` counts robots.txt reads, which are not page attempts), and the cost ledger.
An *indeterminate* attempt (sent,
no answer: a paid engine may have billed it) is counted and logged ``fetch.indeterminate``, and,
being transient, is raised rather than escalated to another (paid) engine.

Example:
    >>> router = Router({"api": api_engine}, policies)                   # doctest: +SKIP
    >>> result = await router.fetch(url, engines=("api", "firecrawl"))   # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import structlog

from ._context import Fetcher, FetchResult, ResponseKind
from ._engines.base import Engine, FetchRequest
from ._gates import HostGates
from ._policy import DomainPolicy, PolicySet
from ._raw import EngineName
from ._robots import RobotsCache, origin_of, robots_delay
from ._robots_rules import RobotsRules
from ._scoring import ESCALATE_BELOW, Scorer, document_score
from ._session import RouterSession, Tally
from .errors import (
    Blocked,
    BudgetExhausted,
    CircuitOpen,
    FetchError,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    ResponseTooLarge,
    RobotsDisallowed,
    RobotsUnavailable,
    UnsafeURL,
)

__all__ = ["CostEntry", "EngineStats", "Router"]

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class EngineStats:
    """What one engine did during a run."""

    attempts: int = 0
    success: int = 0
    credits: float = 0.0
    ms: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    blocked: int = 0
    circuit_open: int = 0
    skipped: int = 0
    indeterminate: int = 0
    """Sent, and no answer came back: the outcome (and a paid engine's bill) is unknown."""
    robots: int = 0
    """robots.txt reads sent through this engine (not pages: not in ``attempts``)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class CostEntry:
    """Credits a paid engine charged for one attempt (charged even when the target said 403)."""

    engine: EngineName
    credits: float
    url: str
    at: datetime


class Router:
    """Chooses engines per fetch and accounts for every attempt."""

    def __init__(
        self,
        engines: Mapping[EngineName, Engine],
        policies: PolicySet,
        *,
        credit_budget: Mapping[EngineName, float] | None = None,
        on_cost: Callable[[CostEntry], None] | None = None,
        gates: HostGates | None = None,
        robots: RobotsCache | None = None,
    ):
        self.engines = dict(engines)
        self.policies = policies
        self.gates = gates if gates is not None else _engine_gates(self.engines)
        self.robots = robots if robots is not None else RobotsCache()
        """robots.txt rules per origin: share one cache between a process's routers."""
        self._tally = Tally(credits_left=dict(credit_budget or {}), on_cost=on_cost)
        """What fetches made through the router itself (not through a session) count into."""

    @property
    def stats(self) -> dict[EngineName, EngineStats]:
        """Engine statistics of the fetches made through the router itself."""
        return self._tally.stats

    @property
    def credits_left(self) -> dict[EngineName, float]:
        """Credits left per paid engine (what a new session starts with)."""
        return self._tally.credits_left

    def session(
        self,
        engines: Sequence[EngineName],
        *,
        scorer: Scorer | None = None,
        on_cost: Callable[[CostEntry], None] | None = None,
        probe: bool = False,
    ) -> RouterSession:
        """A session for one run or probe: this router's engines, policies, gates and robots
        cache, with the connector's engine order and scorer, and its own stats, credits (from
        what is left now) and cost callback."""
        return RouterSession(self, engines, scorer=scorer, on_cost=on_cost, probe=probe)

    def fetcher(self, engines: Sequence[EngineName], *, scorer: Scorer | None = None) -> Fetcher:
        """A :class:`Fetcher` bound to a connector's engine order that counts into the router's
        own stats (tools and tests; a run uses :meth:`session`). ``conditional`` has no stored
        validators here: a full fetch."""
        return RouterSession(self, engines, scorer=scorer, tally=self._tally).fetcher()

    @staticmethod
    def _stats(tally: Tally, name: EngineName) -> EngineStats:
        return tally.stats.setdefault(name, EngineStats())

    def _skip_reason(self, tally: Tally, name: EngineName) -> str | None:
        engine = self.engines.get(name)
        if engine is None:
            return "not configured"
        reason = engine.unavailable_reason()
        if reason:
            return reason
        left = tally.credits_left
        if engine.paid and name in left and left[name] <= 0:
            return "credit budget spent"
        return None

    async def fetch(
        self,
        url: str,
        *,
        engines: Sequence[EngineName] = ("api",),
        expect: ResponseKind = "text",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        scorer: Scorer | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        probe: bool = False,
    ) -> FetchResult:
        """Fetch ``url`` through the first engine that gives a good answer (counted into the
        router's own stats)."""
        return await self.fetch_for(
            self._tally,
            url,
            engines=engines,
            expect=expect,
            headers=headers,
            params=params,
            scorer=scorer,
            etag=etag,
            last_modified=last_modified,
            probe=probe,
        )

    async def fetch_for(
        self,
        tally: Tally,
        url: str,
        *,
        engines: Sequence[EngineName] = ("api",),
        expect: ResponseKind = "text",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        scorer: Scorer | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        probe: bool = False,
    ) -> FetchResult:
        """:meth:`fetch`, counted into ``tally`` (a session's)."""
        host = (urlsplit(url).hostname or "").lower()
        policy = self.policies.for_host(host)
        order = [name for name in engines if name in policy.engines]
        if not order:
            raise PolicyError(
                f"no engine allowed for {host}: connector wants {list(engines)}, "
                f"policy allows {list(policy.engines)}"
            )
        if urlsplit(url).path != "/robots.txt":
            rules = await self._robots(tally, url, host, policy, order, probe=probe)
            if rules is not None and not rules.can_fetch(url):
                log.info("robots.disallowed", host=host, url=url)
                raise RobotsDisallowed(
                    f"{url}: disallowed for {rules.user_agent} by {origin_of(url)}/robots.txt; "
                    "nothing was sent",
                    url=url,
                    host=host,
                )
        request = FetchRequest(
            url=url,
            expect=expect,
            headers=headers or {},
            params=params,
            etag=etag,
            last_modified=last_modified,
            probe=probe,
        )
        best: tuple[float, FetchResult] | None = None
        last_error: FetchError | None = None
        for name in order:
            reason = self._skip_reason(tally, name)
            if reason:
                self._stats(tally, name).skipped += 1
                log.info("router.engine_skipped", engine=name, host=host, reason=reason)
                continue
            result = await self._attempt(tally, name, request, host)
            if isinstance(result, FetchError):
                last_error = result
                continue
            if result.not_modified:
                return result
            judged = scorer(result) if scorer else None
            score = document_score(result, expect) if judged is None else judged
            if score >= ESCALATE_BELOW:
                return result
            log.info("router.escalated", engine=name, host=host, url=url, score=round(score, 2))
            if best is None or score > best[0]:
                best = (score, result)
        if best is not None:
            return best[1]
        if last_error is not None:
            raise last_error
        raise FetchError(f"no engine could run for {host}", url=url, host=host)

    async def robots_rules(
        self, url: str, *, engines: Sequence[EngineName] = ("api",)
    ) -> RobotsRules:
        """The robots.txt rules that apply to ``url``'s origin (read through ``engines`` when not
        cached). A host with ``robots_permission`` gets allow-all rules.

        Raises:
            RobotsUnavailable: robots.txt cannot be read now (429/5xx/timeout).
        """
        return await self.robots_rules_for(self._tally, url, engines=engines)

    async def robots_rules_for(
        self, tally: Tally, url: str, *, engines: Sequence[EngineName] = ("api",)
    ) -> RobotsRules:
        """:meth:`robots_rules`, a read counted into ``tally`` (a session's)."""
        host = (urlsplit(url).hostname or "").lower()
        policy = self.policies.for_host(host)
        order = [name for name in engines if name in policy.engines] or list(policy.engines)
        rules = await self._robots(tally, url, host, policy, order)
        return rules if rules is not None else RobotsRules.allow_all()

    async def _robots(
        self,
        tally: Tally,
        url: str,
        host: str,
        policy: DomainPolicy,
        order: Sequence[EngineName],
        *,
        probe: bool = False,
    ) -> RobotsRules | None:
        """The rules for ``url`` (None: the host gave permission in writing), applying a
        ``Crawl-delay`` stricter than the policy to the host's gate."""
        if policy.robots_permission:
            if host not in tally.permissions_logged:  # once per host per run
                tally.permissions_logged.add(host)
                log.warning("robots.not_applied", host=host, permission=policy.robots_permission)
            return None
        origin = origin_of(url)

        async def read(robots_url: str) -> tuple[int, bytes]:
            return await self._read_robots(tally, robots_url, host, order, probe=probe)

        rules = await self.robots.rules(origin, policy, read)
        delay = robots_delay(rules)
        stricter = delay is not None and delay > policy.min_interval_s
        if stricter and self.gates is not None and self.gates.raise_interval(host, delay or 0.0):
            log.info(
                "robots.crawl_delay_applied",
                host=host,
                crawl_delay_ms=int((delay or 0.0) * 1000),
                policy_interval_ms=policy.min_interval_ms,
            )
        return rules

    async def _read_robots(
        self,
        tally: Tally,
        url: str,
        host: str,
        order: Sequence[EngineName],
        *,
        probe: bool = False,
    ) -> tuple[int, bytes]:
        """``GET /robots.txt`` as ``(status, body)``, through the engines in the connector's
        order, skipping (and counting) the unavailable ones as for a page. A challenge page goes to
        the next engine; a wall in front of every engine is :class:`Blocked`, as the pages behind
        it would be. For a probe (a health check) the read is a probe too: it skips the host's
        queue, not its budget. What it costs a paid engine is charged like a page."""
        blocked: Blocked | None = None
        for name in order:
            reason = self._skip_reason(tally, name)
            if reason:
                self._stats(tally, name).skipped += 1
                log.info("router.engine_skipped", engine=name, host=host, reason=reason)
                continue
            stats = self._stats(tally, name)
            stats.robots += 1
            try:
                request = FetchRequest(url=url, expect="text", probe=probe)
                result = await self.engines[name].fetch(request)
            except FetchError as exc:
                self._charge(tally, name, exc.credits, url)  # a paid engine bills refusals too
                if exc.indeterminate:
                    stats.indeterminate += 1
                    log.warning(
                        "fetch.indeterminate", engine=name, host=host, url=url, credits=exc.credits
                    )
                if isinstance(exc, Blocked):
                    stats.blocked += 1
                    log.info("fetch.blocked", engine=name, host=host, url=url, vendor=exc.vendor)
                    blocked = exc
                    continue
                answers = UnsafeURL | ResponseTooLarge | CircuitOpen | RateLimited | BudgetExhausted
                if isinstance(exc, answers) or exc.indeterminate:
                    raise  # about the host or the vendor, handled as for any page
                if isinstance(exc, PermanentFetchError) and exc.status is not None:
                    return exc.status, b""
                # 5xx, timeouts, refused connections: not now
                raise RobotsUnavailable(f"{url}: {exc}", url=url, host=host) from exc
            self._charge(tally, name, result.credits, url)
            return result.status, result.content
        if blocked is not None:
            raise blocked
        raise RobotsUnavailable(f"{url}: no engine can run", url=url, host=host)

    async def _attempt(
        self, tally: Tally, name: EngineName, request: FetchRequest, host: str
    ) -> FetchResult | FetchError:
        """The result, or a Blocked/escalatable error to try the next engine with."""
        stats = self._stats(tally, name)
        stats.attempts += 1
        started = time.perf_counter()
        credits = 0.0
        try:
            result = await self.engines[name].fetch(request)
            credits = result.credits
        except FetchError as exc:
            credits = exc.credits
            if exc.indeterminate:
                stats.indeterminate += 1
                log.warning(
                    "fetch.indeterminate",
                    engine=name,
                    host=host,
                    url=request.url,
                    credits=exc.credits,
                )
            return self._triage(stats, exc, host, request.url, name)
        finally:
            stats.ms += int((time.perf_counter() - started) * 1000)
            self._charge(tally, name, credits, request.url)
        stats.success += 1
        self._count_status(stats, result.status)
        return result

    def _triage(
        self, stats: EngineStats, exc: FetchError, host: str, url: str, name: EngineName
    ) -> FetchError:
        """Return ``exc`` when the next engine should try, raise it when that is pointless."""
        if isinstance(exc, Blocked):
            stats.blocked += 1
            log.info("fetch.blocked", engine=name, host=host, url=url, vendor=exc.vendor)
            return exc
        if isinstance(exc, CircuitOpen):
            stats.circuit_open += 1
            raise exc
        if isinstance(exc, PermanentFetchError) and not isinstance(
            exc, UnsafeURL | ResponseTooLarge
        ):
            if exc.status is not None:
                self._count_status(stats, exc.status)
            if exc.status in {401, 403}:
                return exc  # refused without a known challenge: another engine may get through
        raise exc

    @staticmethod
    def _count_status(stats: EngineStats, status: int) -> None:
        stats.statuses[str(status)] = stats.statuses.get(str(status), 0) + 1

    def _charge(self, tally: Tally, name: EngineName, credits: float, url: str) -> None:
        if not credits:
            return
        self._stats(tally, name).credits += credits
        if name in tally.credits_left:
            tally.credits_left[name] -= credits
        if tally.on_cost is not None:
            tally.on_cost(CostEntry(name, credits, url, datetime.now(UTC)))


def _engine_gates(engines: Mapping[EngineName, Engine]) -> HostGates | None:
    """The gates the engines share (the usual stack), when the caller did not say."""
    for engine in engines.values():
        gates = getattr(engine, "gates", None)
        if isinstance(gates, HostGates):
            return gates
    return None
