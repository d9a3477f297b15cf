"""The host-gate decision, as pure functions over a small state record.

Both backends (in-process and Redis) store a :class:`HostState` per host and call :func:`decide`
and :func:`settle`; only where the state lives differs. Order of checks in :func:`decide`:

1. circuit breaker: open -> refuse (``circuit_open``) until the cooldown ends, then exactly one
   half-open trial;
2. a ``Retry-After`` deferral -> wait (or reschedule when beyond the cap);
3. budgets, before anything is sent: per day -> refuse (``budget_day``); per minute (a sliding
   window) -> wait until the oldest start leaves the window;
4. concurrency -> wait for a release;
5. minimum interval -> wait until the previous start plus the interval, then ask again. Starts
   are spaced as they are granted, never reserved ahead: a caller that wakes late (a busy event
   loop, a slow process) cannot end up closer to the next caller than the interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "Decision",
    "GateLimits",
    "HostState",
    "Outcome",
    "decide",
    "defer",
    "idle_at",
    "is_idle",
    "settle",
]

Outcome = Literal["success", "failure", "neutral"]
_EARLY_S = 0.0005
"""A caller this close to its turn is granted (a sleep never wakes exactly on time)."""
WINDOW_S = 60.0
"""The per-minute budget window. A request stays in it from its start until 60 s after
it *finished*: the host saw it arrive somewhere in between, so however the network delayed it,
no minute of the host's can hold more than the budget."""


@dataclass(frozen=True, slots=True)
class GateLimits:
    """The part of a :class:`DomainPolicy` the gate enforces."""

    concurrency: int
    min_interval_s: float
    budget_per_minute: int | None
    budget_per_day: int | None
    circuit_failures: int
    circuit_cooldown_s: float
    lease_s: float
    """How long an unreleased slot counts as in flight (a crashed worker's slot is reclaimed)."""


@dataclass(slots=True)
class HostState:
    """Everything the gate remembers about one host. Serialisable to JSON (Redis backend)."""

    inflight: dict[str, float] = field(default_factory=dict)  # token -> lease expiry
    next_start: float = 0.0
    minute: dict[str, float] = field(default_factory=dict)  # token -> start, then end time
    day: str = ""
    day_count: int = 0
    deferred_until: float = 0.0
    breaker: Literal["closed", "open", "half_open"] = "closed"
    failures: int = 0
    reopens_at: float = 0.0
    trial: str | None = None
    day_budgeted: bool = False

    def to_json(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict that shares nothing mutable with the state (what
        ``dataclasses.asdict`` gives, without its recursive copy of every entry: about 750 µs
        for a 300-entry minute window, which the gate encodes on every slot)."""
        data = {name: getattr(self, name) for name in _STATE_FIELDS}
        data["inflight"] = dict(self.inflight)  # token -> float: a shallow copy is a deep one
        data["minute"] = dict(self.minute)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostState:
        return cls(**data)


_STATE_FIELDS = tuple(f.name for f in fields(HostState))


@dataclass(frozen=True, slots=True)
class Decision:
    """``grant`` (start now: ``at`` is the time it was granted), ``wait`` (``seconds``, then ask
    again) or ``refuse`` (``at``: when the breaker lets a trial through)."""

    action: Literal["grant", "wait", "refuse"]
    reason: str = ""
    at: float = 0.0
    seconds: float = 0.0
    trial: bool = False


def _utc_day(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def _expire(state: HostState, now: float) -> None:
    state.inflight = {t: exp for t, exp in state.inflight.items() if exp > now}
    state.minute = {t: at for t, at in state.minute.items() if at > now - WINDOW_S}
    if state.trial is not None and state.trial not in state.inflight:
        state.trial = None  # the trial's holder crashed: the next caller may try
    day = _utc_day(now)
    if state.day != day:
        state.day, state.day_count = day, 0


def decide(
    state: HostState, limits: GateLimits, now: float, token: str, *, probe: bool = False
) -> Decision:
    """Decide for one request. Mutates ``state`` only when it grants."""
    _expire(state, now)
    trial = False
    if state.breaker == "open":
        if now < state.reopens_at:
            return Decision("refuse", "circuit_open", at=state.reopens_at)
        state.breaker, state.trial = "half_open", None
    if state.breaker == "half_open":
        if state.trial is not None:
            return Decision("refuse", "circuit_open", at=now + limits.circuit_cooldown_s)
        trial = True
    if now < state.deferred_until:
        return Decision("wait", "retry_after", seconds=state.deferred_until - now)
    if limits.budget_per_day is not None and state.day_count >= limits.budget_per_day:
        return Decision("refuse", "budget_day")
    if limits.budget_per_minute is not None and len(state.minute) >= limits.budget_per_minute:
        oldest = min(state.minute.values())
        return Decision("wait", "budget_minute", seconds=oldest + WINDOW_S - now)
    if not probe and len(state.inflight) >= limits.concurrency:
        return Decision("wait", "concurrency", seconds=0.0)
    if not probe and now < state.next_start - _EARLY_S:
        return Decision("wait", "interval", seconds=state.next_start - now)
    if not probe:
        state.next_start = now + limits.min_interval_s
    state.inflight[token] = now + limits.lease_s
    if limits.budget_per_minute is not None:  # only tracked where a budget needs it: O(budget)
        state.minute[token] = now
    state.day_count += 1
    state.day_budgeted = limits.budget_per_day is not None
    if trial:
        state.trial = token
    return Decision("grant", at=now, trial=trial)


def settle(state: HostState, limits: GateLimits, now: float, token: str, outcome: Outcome) -> None:
    """Release ``token``'s slot and feed the breaker with how the request went."""
    state.inflight.pop(token, None)
    if token in state.minute:
        state.minute[token] = max(state.minute[token], now)
    was_trial = state.trial == token
    if was_trial:
        state.trial = None
    if outcome == "success":
        if was_trial:
            state.breaker = "closed"
        if state.breaker == "closed":
            state.failures = 0
    elif outcome == "failure":
        if was_trial:
            state.breaker = "open"
            state.reopens_at = now + limits.circuit_cooldown_s
        elif state.breaker == "closed":
            state.failures += 1
            if state.failures >= limits.circuit_failures:
                state.breaker = "open"
                state.reopens_at = now + limits.circuit_cooldown_s


def defer(state: HostState, until: float) -> None:
    """Do not start anything on this host before ``until`` (a ``Retry-After``)."""
    state.deferred_until = max(state.deferred_until, until)


def is_idle(state: HostState, now: float) -> bool:
    """True when forgetting this host changes nothing a policy enforces."""
    _expire(state, now)
    return (
        not (state.day_budgeted and state.day_count)
        and not state.inflight
        and not state.minute
        and state.breaker == "closed"
        and state.failures == 0
        and state.deferred_until <= now
        and state.next_start <= now
    )


def idle_at(state: HostState, now: float) -> float:
    """When this host becomes idle if nothing else happens: how long a shared store keeps it."""
    times = [now, state.next_start, state.deferred_until, *state.inflight.values()]
    times += [at + WINDOW_S for at in state.minute.values()]
    if state.breaker != "closed" or state.failures:
        times.append(max(state.reopens_at, now) + 3600.0)  # remember trouble for an hour
    if state.day_budgeted and state.day_count:
        day_end = datetime.strptime(state.day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() + 86400
        times.append(day_end)
    return max(times)
