"""A clock that runs faster than real time, for politeness tests measured in minutes.

Every participant that must agree on time (the gates, the fake web's rate limiter) gets the same
:class:`ScaledClock`; at ``factor=20`` a "30 requests a minute" budget is exercised in 3 real
seconds per minute, with real sockets and real concurrency.

Example:
    >>> clock = ScaledClock(factor=20)
    >>> start = clock.time()
    >>> import asyncio; asyncio.run(clock.sleep(2.0))   # 0.1 real seconds
    >>> round(clock.time() - start) >= 2
    True
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["ScaledClock"]


class ScaledClock:
    """``time()`` advances ``factor`` times faster than the wall clock; ``sleep`` likewise."""

    def __init__(self, factor: float, *, start: float | None = None):
        if factor <= 0:
            raise ValueError("factor must be positive")
        self.factor = factor
        self._real0 = time.monotonic()
        self._virtual0 = time.time() if start is None else start

    def time(self) -> float:
        return self._virtual0 + (time.monotonic() - self._real0) * self.factor

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.factor)
