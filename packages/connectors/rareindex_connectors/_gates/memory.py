"""The in-process gate backend (embedded mode): host states in a dict under a lock.

Thread-safe, so several event loops in one process (dramatiq worker threads) share one politeness
budget. A release wakes waiters at once, on whichever loop they wait. Idle hosts are forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from .state import Decision, GateLimits, HostState, Outcome, decide, defer, is_idle, settle

__all__ = ["MemoryGateBackend"]

_SWEEP_EVERY = 256


class MemoryGateBackend:
    """Host states for one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, HostState] = {}
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]] = {}
        self._calls = 0

    async def try_acquire(
        self, host: str, limits: GateLimits, now: float, token: str, *, probe: bool
    ) -> Decision:
        with self._lock:
            self._calls += 1
            if self._calls % _SWEEP_EVERY == 0:
                self._sweep(now)
            state = self._states.setdefault(host, HostState())
            return decide(state, limits, now, token, probe=probe)

    async def release(
        self, host: str, limits: GateLimits, now: float, token: str, outcome: Outcome
    ) -> None:
        with self._lock:
            state = self._states.setdefault(host, HostState())
            settle(state, limits, now, token, outcome)
            waiters, self._waiters[host] = self._waiters.get(host, []), []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_resolve, future)

    async def defer(self, host: str, until: float) -> None:
        with self._lock:
            defer(self._states.setdefault(host, HostState()), until)

    async def wait_for_release(self, host: str, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiters.setdefault(host, []).append((loop, future))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(future, timeout)

    async def snapshot(self, host: str) -> HostState | None:
        with self._lock:
            state = self._states.get(host)
            return None if state is None else HostState.from_json(state.to_json())

    def hosts(self) -> list[str]:
        """Hosts whose state is currently kept."""
        with self._lock:
            return sorted(self._states)

    def sweep(self, now: float) -> None:
        """Forget idle hosts now (otherwise done every few hundred calls)."""
        with self._lock:
            self._sweep(now)

    def _sweep(self, now: float) -> None:
        for host in [h for h, s in self._states.items() if is_idle(s, now)]:
            if not self._waiters.get(host):
                del self._states[host]


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
