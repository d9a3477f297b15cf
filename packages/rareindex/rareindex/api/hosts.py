"""Which hosts a connector uses, and what the host gates say about each: breaker and budget left.

A connector's hosts are read from its declared ``url_patterns`` (``^https?://grader\\.fake\\.test``
-> ``grader.fake.test``) plus the hosts of its most recent raw records (for connectors that
declare no pattern). The gate state comes from :meth:`HostGates.state`: from Redis in a fleet, so
the API sees what every worker sees; in embedded mode only this process's own (idle) gates.

Example:
    >>> hosts_in_patterns([r"^https?://grader\\.fake\\.test(?::\\d+)?/cert/(\\d+)$"])
    ['grader.fake.test']
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

import structlog

from rareindex_connectors.runtime import DomainPolicy, HostGates

from .schemas import Breaker

__all__ = [
    "BREAKER_VALUE",
    "GATE_READ_TIMEOUT_S",
    "GateReading",
    "GateState",
    "HostView",
    "connector_hosts",
    "host_view",
    "hosts_in_patterns",
    "read_gates",
]

log = structlog.get_logger(__name__)

GATE_READ_TIMEOUT_S = 2.0
"""How long a read of the shared gates may take before the answer says they are unavailable."""
BREAKER_VALUE: dict[Breaker, int] = {"closed": 0, "half_open": 1, "open": 2}
"""The ``rareindex_breaker_state`` gauge's encoding."""

_MINUTE_S = 60.0
"""The gate's per-minute budget window (the SDK's ``WINDOW_S``): a request counts until 60 s
after it finished."""
_HOST_IN_PATTERN = re.compile(r"://((?:[A-Za-z0-9-]|\\[.-]|\.)+)")
_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$"
)
_MAX_HOSTS = 10


class GateState(Protocol):
    """The fields of the SDK's ``HostState`` read here."""

    @property
    def breaker(self) -> str: ...
    @property
    def failures(self) -> int: ...
    @property
    def reopens_at(self) -> float: ...
    @property
    def minute(self) -> dict[str, float]: ...
    @property
    def day(self) -> str: ...
    @property
    def day_count(self) -> int: ...


def hosts_in_patterns(patterns: Iterable[str]) -> list[str]:
    """The literal host names at the start of URL regexes (patterns without one are skipped)."""
    hosts: set[str] = set()
    for pattern in patterns:
        match = _HOST_IN_PATTERN.search(pattern)
        if match is None:
            continue
        host = match.group(1).replace("\\.", ".").replace("\\-", "-").lower().rstrip(".")
        if _HOSTNAME.match(host):
            hosts.add(host)
    return sorted(hosts)


def connector_hosts(meta: Mapping[str, Any], recent: Iterable[str] = ()) -> list[str]:
    """A connector's hosts: declared by its URL patterns, then seen in its recent raw records."""
    hosts = set(hosts_in_patterns(meta.get("url_patterns") or ()))
    hosts.update(h for h in recent if _HOSTNAME.match(h))
    return sorted(hosts)[:_MAX_HOSTS]


@dataclass(frozen=True, slots=True)
class HostView:
    host: str
    breaker: Breaker
    failures: int
    reopens_at: datetime | None
    left_per_minute: int | None
    left_per_day: int | None
    budget_per_minute: int | None
    budget_per_day: int | None


def host_view(host: str, state: GateState | None, policy: DomainPolicy, now: float) -> HostView:
    """The breaker and the budgets left on ``host`` at ``now`` (epoch seconds).

    An open breaker whose cooldown has passed is reported ``half_open``: the next request is the
    trial (the gate itself switches lazily, on that request)."""
    per_minute, per_day = policy.budget_per_minute, policy.budget_per_day
    if state is None:  # the gates forget idle hosts: nothing in flight, nothing counted
        return HostView(host, "closed", 0, None, per_minute, per_day, per_minute, per_day)
    breaker: Breaker = "closed"
    reopens_at = None
    if state.breaker == "open" and now < state.reopens_at:
        breaker, reopens_at = "open", datetime.fromtimestamp(state.reopens_at, UTC)
    elif state.breaker in ("open", "half_open"):
        breaker = "half_open"
    used_minute = sum(1 for at in state.minute.values() if at > now - _MINUTE_S)
    today = datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")
    used_day = state.day_count if state.day == today else 0
    return HostView(
        host,
        breaker,
        state.failures,
        reopens_at,
        None if per_minute is None else max(0, per_minute - used_minute),
        None if per_day is None else max(0, per_day - used_day),
        per_minute,
        per_day,
    )


@dataclass(frozen=True, slots=True)
class GateReading:
    """The gate state of each host, or why the gates could not be read (Redis down)."""

    states: dict[str, GateState | None]
    error: str | None = None


async def read_gates(gates: HostGates, hosts: Iterable[str]) -> GateReading:
    """The gate state of each host, read concurrently; an unreachable gate store is reported,
    never raised, so monitoring keeps answering during a broker outage."""
    names = sorted(set(hosts))
    try:
        states = await asyncio.wait_for(
            asyncio.gather(*(gates.state(host) for host in names)), GATE_READ_TIMEOUT_S
        )
    except Exception as exc:  # a Redis outage, a timeout: the answer, not a 500
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else "timed out"
        error = f"{type(exc).__name__}: {detail}"
        log.warning("gates.read_failed", error=type(exc).__name__, hosts=len(names))
        return GateReading({}, error)
    return GateReading(dict(zip(names, states, strict=True)))
