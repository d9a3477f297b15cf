"""HostGates queues a process's requests to one host: one at a time asks the backend.

Requests that all asked for themselves woke together at each slot time and raced; on Redis the
losers' optimistic-transaction retries kept the event loop busy while the winner's request was
sent, and two worker processes' first requests reached the host 0.146-0.159 s apart for a 0.2 s
interval (``tests/integration/test_fleet_gates.py`` measures that at the host).
"""

from __future__ import annotations

import asyncio
import itertools
import time

from rareindex_connectors.runtime import DomainPolicy, HostGates, MemoryGateBackend


class CountingBackend(MemoryGateBackend):
    """The in-process backend, with a round trip in each ``try_acquire`` (as Redis has) and a
    count of how many are in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.asking = 0
        self.peak = 0

    async def try_acquire(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.asking += 1
        self.peak = max(self.peak, self.asking)
        try:
            await asyncio.sleep(0.001)  # the round trip
            return await super().try_acquire(*args, **kwargs)
        finally:
            self.asking -= 1


def test_one_request_of_an_event_loop_asks_the_backend_at_a_time() -> None:
    backend = CountingBackend()
    gates = HostGates(backend)
    policy = DomainPolicy(concurrency=2, min_interval_ms=20)
    granted: list[float] = []

    async def fetch() -> None:
        async with gates.slot("q.test", policy) as permit:
            granted.append(permit.started_at)  # the start the gate granted, on its clock
            await asyncio.sleep(0.03)

    async def scenario() -> None:
        await asyncio.gather(*(fetch() for _ in range(8)))

    asyncio.run(scenario())
    assert len(granted) == 8
    assert backend.peak == 1  # every one of the eight asked at once before the queue
    gaps = [b - a for a, b in itertools.pairwise(sorted(granted))]
    assert min(gaps) >= 0.02 - 1e-6  # the interval still holds between them


def test_a_probe_does_not_wait_behind_queued_requests() -> None:
    gates = HostGates(MemoryGateBackend())
    policy = DomainPolicy(concurrency=1, min_interval_ms=500)

    async def fetch() -> None:
        async with gates.slot("p.test", policy):
            await asyncio.sleep(0.01)

    async def scenario() -> float:
        queued = [asyncio.create_task(fetch()) for _ in range(3)]
        await asyncio.sleep(0.05)  # the first has its slot, the other two wait in the queue
        began = time.monotonic()
        async with gates.slot("p.test", policy, probe=True):
            waited = time.monotonic() - began
        await asyncio.gather(*queued)
        return waited

    assert asyncio.run(scenario()) < 0.2  # not the queue's two 0.5 s intervals


def test_one_gates_object_serves_one_event_loop_after_another() -> None:
    """A queue belongs to its event loop: a second ``asyncio.run`` (another CLI command in the
    same process) gets its own, not one bound to a loop that is gone."""
    gates = HostGates(MemoryGateBackend())
    policy = DomainPolicy(concurrency=1, min_interval_ms=5)

    async def burst() -> int:
        done: list[int] = []

        async def fetch() -> None:
            async with gates.slot("r.test", policy):
                await asyncio.sleep(0.001)
            done.append(1)

        await asyncio.gather(*(fetch() for _ in range(4)))  # contended: the queue is used
        return len(done)

    assert asyncio.run(burst()) == 4
    assert asyncio.run(burst()) == 4  # a lock bound to the first loop would raise here
