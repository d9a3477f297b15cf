"""The health worker: a ``connector_health`` snapshot per connector (docs/health.md, every 30 min).

For each connector of the registry, :func:`run_health`

1. loads its recent runs, last success and field-presence history
   (:func:`rareindex.storage.health_store.load_health_inputs`);
2. when its data is fresh (the last succeeded run is within its refresh interval) and it is
   active, runs a **light probe**: the connector's own ``health_check(ctx)``, whose fetches go
   through the router with ``probe=True`` — they skip the host gate's queue (concurrency and
   minimum interval) but still count against the host's budgets and breaker, and pass the SSRF
   policy like any fetch (the api engine resolves and checks every hop before its gate);
3. reads the breaker of every host the connector fetched from lately (its latest captures, and
   the probe's) from the host gates — shared through Redis in a fleet, so what the crawlers
   tripped is what the health worker sees;
4. applies the rule table of :mod:`rareindex.health` and upserts the snapshot.

Example:
    >>> snapshots = asyncio.run(run_health(engine, settings, load_registry(dir)))  # doctest: +SKIP
    >>> [(s.connector_id, s.status, s.reasons) for s in snapshots]                 # doctest: +SKIP
    [('card-market', 'UP', []), ('coins-woo', 'DEGRADED', ['stale'])]
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import structlog

from rareindex_connectors import Connector, CrawlContext, CrawlOptions, scorer_of
from rareindex_connectors.runtime import CostEntry, HostGates

from .fetching import FetchStack, build_fetch_stack
from .health import (
    DEFAULT_RULES,
    BreakerState,
    HealthInputs,
    HealthRules,
    HealthSnapshot,
    ProbeResult,
    assess,
    is_fresh,
)
from .registry import load_registry
from .settings import Settings
from .storage import Engine
from .storage.connector_rows import sync_connectors
from .storage.health_store import (
    last_health_check,
    load_health,
    load_health_inputs,
    recent_hosts,
    save_health,
)
from .storage.runs import add_costs

__all__ = [
    "HEALTH_EVERY",
    "PROBE_SKIPS",
    "breaker_states",
    "health_due",
    "health_snapshot",
    "probe_connector",
    "run_health",
]

log = structlog.get_logger(__name__)

HEALTH_EVERY = timedelta(minutes=30)
"""How often the health worker snapshots every connector (docs/health.md)."""

PROBE_SKIPS = frozenset({"probe_off", "not_active", "not_fresh", "missing_requires"})
"""Why a connector was not probed (``details["probe_skipped"]``): a closed vocabulary."""


async def breaker_states(gates: HostGates, hosts: Iterable[str]) -> dict[str, BreakerState]:
    """Each host's breaker as the gates hold it. A host the gates do not remember is idle, so
    closed; an open breaker whose cooldown is over is half-open (its next request is the trial)."""
    now = gates.clock.time()
    states: dict[str, BreakerState] = {}
    for host in sorted(set(hosts)):
        state = await gates.state(host)
        if state is None:
            states[host] = "closed"
        elif state.breaker == "open" and now >= state.reopens_at:
            states[host] = "half_open"
        else:
            states[host] = state.breaker
    return states


async def probe_connector(
    connector: Connector,
    stack: FetchStack,
    *,
    timeout_s: float = 60.0,
    on_cost: Callable[[CostEntry], None] | None = None,
) -> tuple[ProbeResult, set[str]]:
    """Run ``connector.health_check()`` with probe fetches; the result and the hosts it touched.

    A probe that raises, or overruns ``timeout_s``, is BROKEN with the reason; a fetch error the
    connector caught itself is still named in :attr:`ProbeResult.error`. A paid engine's charges
    go to ``on_cost`` (the health worker puts them in the ``costs`` ledger).
    """
    meta = connector.meta
    session = stack.router.session(
        meta.engines, scorer=scorer_of(connector), on_cost=on_cost, probe=True
    )
    hosts: set[str] = set()
    fetch_errors: list[str] = []

    def touch(url: str) -> None:
        hosts.add((urlsplit(url).hostname or "").lower())

    # A probe has no stored validators: a conditional fetch is a full one.
    fetch = session.fetcher(
        before=touch, on_error=lambda exc: fetch_errors.append(type(exc).__name__)
    )

    ctx = CrawlContext(
        connector_id=meta.id,
        fetch=fetch,
        options=CrawlOptions(max_pages=1),
        log=log.bind(component="health", connector=meta.id),
        robots_source=session.robots_rules,
    )
    started = time.perf_counter()
    try:
        health = await asyncio.wait_for(connector.health_check(ctx), timeout_s)
    except TimeoutError:
        result = ProbeResult(
            "BROKEN", message=f"no answer within {timeout_s:g} s", error="TimeoutError"
        )
    except Exception as exc:  # a connector's bug is its health, not the worker's crash
        result = ProbeResult(
            "BROKEN", message=f"{type(exc).__name__}: {exc}"[:300], error=type(exc).__name__
        )
    else:
        elapsed_ms = int((time.perf_counter() - started) * 1000)
        result = ProbeResult(
            health.status,
            latency_ms=health.latency_ms if health.latency_ms is not None else elapsed_ms,
            message=health.message,
            error=fetch_errors[0] if fetch_errors else None,
        )
    return result, hosts - {""}


def _probe_skip(
    connector: Connector, inputs: HealthInputs, *, probe: bool, env: Mapping[str, str]
) -> str | None:
    if not probe:
        return "probe_off"
    if inputs.connector_status != "active":
        return "not_active"
    if not is_fresh(inputs):
        return "not_fresh"  # the runs say enough; a stale source is not probed between crawls
    if connector.meta.missing_requires(env):
        return "missing_requires"
    return None


async def _check_one(
    connector: Connector,
    *,
    db: Engine,
    stack: FetchStack,
    probe: bool,
    now: datetime,
    rules: HealthRules,
    env: Mapping[str, str],
    probe_timeout_s: float,
) -> HealthSnapshot:
    connector_id = connector.meta.id
    with db.connect() as conn:
        inputs = load_health_inputs(conn, connector_id, now=now, rules=rules)
        hosts = set(recent_hosts(conn, connector_id))
        previous = load_health(conn, connector_id)
    if inputs is None:  # synced just before, so only a concurrent delete gets here
        raise LookupError(f"connector {connector_id!r} is not in the connectors table")
    skipped = _probe_skip(connector, inputs, probe=probe, env=env)
    result: ProbeResult | None = None
    charges: list[CostEntry] = []
    if skipped is None:
        result, touched = await probe_connector(
            connector, stack, timeout_s=probe_timeout_s, on_cost=charges.append
        )
        hosts |= touched
    breakers = await breaker_states(stack.gates, hosts)
    inputs = dataclasses.replace(inputs, breakers=breakers, probe=result, probe_skipped=skipped)
    snapshot = assess(inputs, rules)
    with db.begin() as conn:
        save_health(conn, snapshot)
        if charges:  # a probe through a paid engine is spend like a crawl's
            add_costs(conn, connector_id, charges)
    log.info(
        "health.assessed",
        component="health",
        connector=connector_id,
        status=snapshot.status,
        reasons=snapshot.reasons,
        probe=result.status if result else skipped,
    )
    if previous is not None and previous.status != snapshot.status:
        log.warning(
            "health.changed",
            component="health",
            connector=connector_id,
            status=snapshot.status,
            previous=previous.status,
            reasons=snapshot.reasons,
        )
    return snapshot


async def run_health(
    engine: Engine,
    settings: Settings,
    registry: Iterable[Connector],
    *,
    probe: bool = True,
    now: datetime | None = None,
    stack: FetchStack | None = None,
    rules: HealthRules = DEFAULT_RULES,
    env: Mapping[str, str] | None = None,
    probe_timeout_s: float = 60.0,
    concurrency: int = 8,
) -> list[HealthSnapshot]:
    """Assess, probe (where fresh) and store the health of every connector in ``registry``.

    Args:
        engine: the database (migrated).
        settings: for the fetch stack (gates, engines, ``connect_to``) when ``stack`` is None.
        registry: the connectors to check; each is synced into ``connectors`` first.
        probe: False skips every probe (the snapshot comes from stored runs and gates only).
        now: the time the snapshot is taken at (default: now).
        stack: a fetch stack to probe through (the caller closes it); default: one built from
            ``settings`` the way the crawler builds it, closed at the end.
        rules: the thresholds of the rule table.
        env: where ``meta.requires`` are looked up (default: the process environment).
        probe_timeout_s: how long one connector's probe may take.
        concurrency: how many connectors are checked at once.

    Returns:
        The snapshots, in the registry's order.
    """
    connectors = list(registry)
    now = now or datetime.now(UTC)
    with engine.begin() as conn:
        sync_connectors(conn, connectors)
    own_stack = stack is None
    stack = stack or build_fetch_stack(settings)
    limit = asyncio.Semaphore(concurrency)
    environ = os.environ if env is None else env

    async def one(connector: Connector) -> HealthSnapshot:
        async with limit:
            return await _check_one(
                connector,
                db=engine,
                stack=stack,
                probe=probe,
                now=now,
                rules=rules,
                env=environ,
                probe_timeout_s=probe_timeout_s,
            )

    try:
        return list(await asyncio.gather(*(one(c) for c in connectors)))
    finally:
        if own_stack:
            await stack.aclose()


def health_snapshot(
    engine: Engine,
    settings: Settings,
    registry: Iterable[Connector] | None = None,
    *,
    probe: bool = True,
) -> list[HealthSnapshot]:
    """:func:`run_health` for a synchronous caller (the ``health_snapshot`` actor): the registry
    is loaded from ``settings`` when not given. Idempotent: a duplicate message re-checks and
    replaces the same rows."""
    if registry is None:
        registry = load_registry(settings.connectors_dir)
    return asyncio.run(run_health(engine, settings, registry, probe=probe))


def health_due(
    engine: Engine, *, now: datetime | None = None, every: timedelta = HEALTH_EVERY
) -> bool:
    """Whether the last snapshot is ``every`` old (or there is none): for the scheduler's tick."""
    with engine.connect() as conn:
        last = last_health_check(conn)
    return last is None or (now or datetime.now(UTC)) - last >= every
