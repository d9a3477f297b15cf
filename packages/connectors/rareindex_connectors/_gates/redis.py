"""The Redis gate backend (fleet mode): one JSON state per host, updated atomically.

Every worker process on every machine reads and writes ``ri:gate:<host>`` with optimistic
transactions (``WATCH`` / ``MULTI``), running the same :func:`decide` / :func:`settle` as the
in-process backend, so N processes together respect one host's limits. Times come from the
callers' clocks (NTP-synchronised machines). A host's key expires when the host would be idle.

Example:
    >>> backend = RedisGateBackend.from_url("redis://127.0.0.1:6379/0")   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .state import (
    Decision,
    GateLimits,
    HostState,
    Outcome,
    decide,
    defer,
    idle_at,
    is_idle,
    settle,
)

__all__ = ["RedisGateBackend"]

T = TypeVar("T")
_MARGIN_MS = 1000
_POLL_S = 0.005


class RedisGateBackend:
    """Host states shared through Redis."""

    def __init__(self, client: Any, *, prefix: str = "ri:gate:"):
        self._redis = client
        self._prefix = prefix

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "ri:gate:") -> RedisGateBackend:
        """A backend on ``url`` (``redis://host:6379/0``)."""
        import redis.asyncio

        return cls(redis.asyncio.Redis.from_url(url), prefix=prefix)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()

    def _key(self, host: str) -> str:
        return f"{self._prefix}{host}"

    async def _update(self, host: str, now: float, change: Callable[[HostState, float], T]) -> T:
        """Apply ``change`` atomically. It is given the caller's ``now`` advanced by the time
        spent here, so a decision retried after a conflict is made at the time it is made."""
        import redis.exceptions

        key = self._key(host)
        entered = time.monotonic()
        while True:
            async with self._redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    state = HostState.from_json(json.loads(raw)) if raw else HostState()
                    now_here = now + (time.monotonic() - entered)
                    result = change(state, now_here)
                    pipe.multi()
                    if is_idle(state, now_here):
                        pipe.delete(key)
                    else:  # expires by itself when it would be idle: idle hosts are dropped
                        ttl_ms = int((idle_at(state, now_here) - now_here) * 1000) + _MARGIN_MS
                        pipe.set(key, json.dumps(state.to_json()), px=max(ttl_ms, _MARGIN_MS))
                    await pipe.execute()
                    return result
                except redis.exceptions.WatchError:
                    continue  # another process changed the host meanwhile: decide again

    async def try_acquire(
        self, host: str, limits: GateLimits, now: float, token: str, *, probe: bool
    ) -> Decision:
        return await self._update(
            host, now, lambda state, at: decide(state, limits, at, token, probe=probe)
        )

    async def release(
        self, host: str, limits: GateLimits, now: float, token: str, outcome: Outcome
    ) -> None:
        await self._update(host, now, lambda state, at: settle(state, limits, at, token, outcome))

    async def defer(self, host: str, until: float) -> None:
        await self._update(host, until, lambda state, _at: defer(state, until))

    async def wait_for_release(self, host: str, timeout: float) -> None:
        await asyncio.sleep(min(timeout, _POLL_S))

    async def snapshot(self, host: str) -> HostState | None:
        raw = await self._redis.get(self._key(host))
        return HostState.from_json(json.loads(raw)) if raw else None
