"""Checks of a dependency, each answering a :class:`CheckResult` instead of raising: the broker
(Redis ``PING``, or a TCP connect for AMQP) within :data:`TIMEOUT_S`, passwords scrubbed from
what it says. Readiness and ``/metrics`` both use them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from .schemas import CheckResult

__all__ = ["TIMEOUT_S", "broker_check", "timed"]

TIMEOUT_S = 3.0


def _scrub(message: str, url: str) -> str:
    password = urlsplit(url).password
    return message.replace(password, "***") if password else message


async def _redis_ping(url: str) -> None:
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(
        url, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S
    )
    try:
        if not await client.ping():
            raise ConnectionError("PING was not answered with PONG")
    finally:
        await client.aclose()


async def _tcp_connect(url: str) -> None:
    parts = urlsplit(url)
    port = parts.port or (5671 if parts.scheme == "amqps" else 5672)
    _, writer = await asyncio.open_connection(parts.hostname or "localhost", port)
    writer.close()
    await writer.wait_closed()


def broker_check(url: str) -> Callable[[], Awaitable[None]]:
    """The check of the broker (or gate store) at ``url``."""
    if url.startswith(("redis://", "rediss://")):
        return lambda: _redis_ping(url)
    return lambda: _tcp_connect(url)


async def timed(check: Callable[[], Awaitable[None]], scrub_url: str = "") -> CheckResult:
    """Run ``check`` within :data:`TIMEOUT_S`: ok, or what went wrong (``scrub_url``'s password
    never in it)."""
    started = time.perf_counter()
    try:
        await asyncio.wait_for(check(), TIMEOUT_S)
    except Exception as exc:  # any failure is the answer, not a crash
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "timed out"
        detail = _scrub(f"{type(exc).__name__}: {message}", scrub_url)
        return CheckResult(ok=False, elapsed_ms=_ms(started), detail=detail)
    return CheckResult(ok=True, elapsed_ms=_ms(started))


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
