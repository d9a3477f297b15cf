"""HostGates over the in-process backend: waits, refusals, wake-ups across threads, idle drop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from rareindex_connectors.errors import (
    BudgetExhausted,
    CircuitOpen,
    RateLimited,
    TransientFetchError,
)
from rareindex_connectors.runtime import DomainPolicy, HostGates, MemoryGateBackend


def test_two_event_loops_in_two_threads_share_one_concurrency_cap() -> None:
    backend = MemoryGateBackend()
    policy = DomainPolicy(concurrency=1, min_interval_ms=0)
    in_flight, peak, lock = [0], [0], threading.Lock()

    async def worker() -> None:
        gates = HostGates(backend)
        for _ in range(5):
            async with gates.slot("a.test", policy):
                with lock:
                    in_flight[0] += 1
                    peak[0] = max(peak[0], in_flight[0])
                await asyncio.sleep(0.01)
                with lock:
                    in_flight[0] -= 1

    threads = [threading.Thread(target=asyncio.run, args=(worker(),)) for _ in range(2)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert peak[0] == 1
    assert time.monotonic() - started >= 10 * 0.01
    assert time.monotonic() - started < 2.0  # woken on release, not by slow polling


def test_breaker_refusal_and_budget_refusal_send_nothing() -> None:
    gates = HostGates(MemoryGateBackend())
    policy = DomainPolicy(
        circuit_failures=1, circuit_cooldown_ms=60_000, min_interval_ms=0, budget_per_day=1
    )

    async def scenario() -> None:
        with pytest.raises(TransientFetchError):
            async with gates.slot("b.test", policy):
                raise TransientFetchError("503", url="http://b.test/")
        with pytest.raises(CircuitOpen) as excinfo:
            async with gates.slot("b.test", policy):
                pytest.fail("must not run while the breaker is open")
        assert excinfo.value.reopens_at is not None
        async with gates.slot("c.test", policy):
            pass
        with pytest.raises(BudgetExhausted, match="day's request budget"):
            async with gates.slot("c.test", policy):
                pytest.fail("must not run over budget")

    asyncio.run(scenario())


def test_long_waits_refuse_instead_of_blocking_a_worker() -> None:
    gates = HostGates(MemoryGateBackend())
    policy = DomainPolicy(
        min_interval_ms=0, budget_per_minute=1, max_wait_ms=1000, retry_after_cap_ms=1000
    )

    async def scenario() -> None:
        async with gates.slot("d.test", policy):
            pass
        with pytest.raises(BudgetExhausted, match="budget_minute"):
            async with gates.slot("d.test", policy):
                pass
        await gates.defer("e.test", 30)
        with pytest.raises(RateLimited) as excinfo:
            async with gates.slot("e.test", policy):
                pass
        assert excinfo.value.retry_after == pytest.approx(30, abs=0.5)

    asyncio.run(scenario())


def test_idle_hosts_are_dropped() -> None:
    backend = MemoryGateBackend()
    gates = HostGates(backend)
    policy = DomainPolicy(min_interval_ms=0, budget_per_minute=100)

    async def scenario() -> None:
        for host in ("x.test", "y.test"):
            async with gates.slot(host, policy):
                pass

    asyncio.run(scenario())
    assert backend.hosts() == ["x.test", "y.test"]
    backend.sweep(time.time() + 10)
    assert backend.hosts() == ["x.test", "y.test"]  # still inside the minute window
    backend.sweep(time.time() + 120)
    assert backend.hosts() == []
