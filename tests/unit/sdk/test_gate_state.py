"""The gate's decisions, as pure functions of a state and a time: no sleeping, no sockets."""

from __future__ import annotations

import pytest

from rareindex_connectors._gates.state import (
    WINDOW_S,
    GateLimits,
    HostState,
    decide,
    defer,
    is_idle,
    settle,
)

LIMITS = GateLimits(
    concurrency=2,
    min_interval_s=0.2,
    budget_per_minute=None,
    budget_per_day=None,
    circuit_failures=3,
    circuit_cooldown_s=10.0,
    lease_s=60.0,
)


def limits(**changes: object) -> GateLimits:
    values = {name: getattr(LIMITS, name) for name in LIMITS.__slots__}  # type: ignore[attr-defined]
    values.update(changes)
    return GateLimits(**values)  # type: ignore[arg-type]


def test_interval_spaces_starts_as_they_are_granted() -> None:
    state = HostState()
    first = decide(state, LIMITS, 100.0, "a")
    early = decide(state, LIMITS, 100.0, "b")
    assert (first.action, first.at) == ("grant", 100.0)
    assert (early.action, early.reason, early.seconds) == ("wait", "interval", pytest.approx(0.2))
    # A caller that wakes late starts late, and the next one is spaced from its real start:
    # nothing is reserved ahead, so lateness never shortens the gap the host sees.
    late = decide(state, LIMITS, 100.35, "b")
    assert (late.action, late.at) == ("grant", 100.35)
    assert decide(state, LIMITS, 100.4, "c").reason == "concurrency"
    settle(state, LIMITS, 100.5, "a", "success")
    assert decide(state, LIMITS, 100.5, "c").seconds == pytest.approx(0.05)
    assert decide(state, LIMITS, 100.55, "c").action == "grant"


def test_per_minute_budget_is_a_sliding_window() -> None:
    budget = limits(budget_per_minute=3, min_interval_s=0.0, concurrency=10)
    state = HostState()
    for i, now in enumerate((0.0, 10.0, 20.0)):
        assert decide(state, budget, now, f"t{i}").action == "grant"
        settle(state, budget, now + 1, f"t{i}", "success")  # each took a second
    wait = decide(state, budget, 30.0, "t3")
    assert (wait.action, wait.reason) == ("wait", "budget_minute")
    # The first request ended at 1.0: the host saw it arrive at the latest then.
    assert wait.seconds == pytest.approx(1.0 + WINDOW_S - 30.0)
    assert decide(state, budget, 1.0 + WINDOW_S - 0.01, "t3").action == "wait"
    assert decide(state, budget, 1.0 + WINDOW_S + 0.01, "t3").action == "grant"


def test_day_budget_refuses_and_resets_at_utc_midnight() -> None:
    budget = limits(budget_per_day=2, min_interval_s=0.0)
    state = HostState()
    midnight = 1_795_996_800.0  # 2026-12-01T00:00:00Z
    for token in ("a", "b"):
        decide(state, budget, midnight - 100, token)
        settle(state, budget, midnight - 99, token, "success")
    assert decide(state, budget, midnight - 50, "c").reason == "budget_day"
    assert decide(state, budget, midnight + 1, "c").action == "grant"
    assert not is_idle(state, midnight + 200)  # a counted day budget is kept, not forgotten


def test_breaker_opens_fails_fast_and_half_opens_for_one_trial() -> None:
    state = HostState()
    for i in range(3):
        decide(state, LIMITS, float(i), f"f{i}")
        settle(state, LIMITS, float(i), f"f{i}", "failure")
    assert state.breaker == "open"
    refused = decide(state, LIMITS, 5.0, "x")
    assert (refused.action, refused.reason, refused.at) == ("refuse", "circuit_open", 12.0)

    trial = decide(state, LIMITS, 12.5, "trial")
    assert trial.action == "grant" and trial.trial
    assert decide(state, LIMITS, 12.6, "other").reason == "circuit_open"  # one trial only
    settle(state, LIMITS, 13.0, "trial", "failure")
    assert state.breaker == "open" and state.reopens_at == 23.0

    trial = decide(state, LIMITS, 23.0, "trial2")
    settle(state, LIMITS, 23.1, "trial2", "success")
    assert state.breaker == "closed" and state.failures == 0
    assert decide(state, LIMITS, 23.2, "after").action == "grant"


def test_successes_reset_the_failure_count_and_neutral_does_not_count() -> None:
    state = HostState()
    for i, outcome in enumerate(["failure", "failure", "success", "failure", "neutral", "failure"]):
        decide(state, LIMITS, float(i), f"t{i}")
        settle(state, LIMITS, float(i), f"t{i}", outcome)  # type: ignore[arg-type]
    assert state.breaker == "closed" and state.failures == 2


def test_retry_after_defers_the_host() -> None:
    state = HostState()
    defer(state, 102.0)
    wait = decide(state, LIMITS, 100.0, "a")
    assert (wait.action, wait.reason, wait.seconds) == ("wait", "retry_after", 2.0)
    assert decide(state, LIMITS, 102.0, "a").action == "grant"


def test_a_crashed_holder_s_slot_is_reclaimed_after_its_lease() -> None:
    state = HostState()
    short = limits(concurrency=1, lease_s=5.0, min_interval_s=0.0)
    decide(state, short, 0.0, "crashed")  # never settled
    assert decide(state, short, 4.0, "b").reason == "concurrency"
    assert decide(state, short, 5.1, "b").action == "grant"


def test_probes_skip_the_queue_but_count_against_budgets() -> None:
    state = HostState()
    budget = limits(concurrency=1, budget_per_minute=2)
    decide(state, budget, 0.0, "a")
    probe = decide(state, budget, 0.0, "probe", probe=True)
    assert probe.action == "grant" and probe.at == 0.0
    assert decide(state, budget, 0.0, "probe2", probe=True).reason == "budget_minute"


def test_idle_hosts_are_recognised() -> None:
    budgeted = limits(budget_per_minute=10)
    state = HostState()
    decide(state, budgeted, 0.0, "a")
    assert not is_idle(state, 1.0)
    settle(state, budgeted, 1.0, "a", "success")
    assert not is_idle(state, 30.0)  # still inside the minute window
    assert is_idle(state, 100.0)
    assert HostState.from_json(state.to_json()) == state

    unbudgeted = HostState()  # without a minute budget nothing is kept per request
    decide(unbudgeted, LIMITS, 0.0, "a")
    settle(unbudgeted, LIMITS, 0.1, "a", "success")
    assert unbudgeted.minute == {} and is_idle(unbudgeted, 0.3)


def test_a_state_encodes_as_asdict_would_and_shares_nothing_mutable() -> None:
    from dataclasses import asdict

    state = HostState(
        inflight={"t1": 10.5, "t2": 11.0},
        next_start=3.25,
        minute={f"m{i}": float(i) for i in range(300)},
        day="2026-12-03",
        day_count=7,
        deferred_until=1.5,
        breaker="half_open",
        failures=2,
        reopens_at=9.0,
        trial="t1",
        day_budgeted=True,
    )
    encoded = state.to_json()
    assert encoded == asdict(state) and list(encoded) == list(asdict(state))
    assert HostState.from_json(encoded) == state
    encoded["inflight"]["t3"] = 1.0
    encoded["minute"].clear()
    assert "t3" not in state.inflight and len(state.minute) == 300
