"""Time, behind a protocol so politeness can be tested without waiting real minutes.

Gates use wall-clock seconds (``time()``), the one time base that worker processes on several
machines share. Tests substitute :class:`rareindex_connectors.testing.ScaledClock`.

Example:
    >>> clock = SystemClock()
    >>> clock.time() > 1.7e9
    True
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    """Wall-clock seconds and an async sleep measured in the same seconds."""

    def time(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def time(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))
