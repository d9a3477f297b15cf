"""The lock-file gate backend (embedded mode): one JSON state per host in a directory, updated
under an exclusive ``flock``.

Several processes on one machine (two ``rareindex crawl`` commands, a crawl beside a scheduler)
point at the same directory and run the same :func:`decide` / :func:`settle` as the other
backends, so together they are as polite as one. The lock is held only while one state is read,
decided and written back (microseconds), never while a request is in flight. An idle host's file
is emptied, not removed (removing it would let a waiter lock a file nobody else sees), and a
state is forgotten once the host would be idle (like the Redis backend's key expiry), so a breaker
tripped by yesterday's run does not count against today's. POSIX only
(``fcntl``); a fleet on several machines shares its gates through Redis instead.

Example:
    >>> backend = FileGateBackend("/var/lib/rareindex/gates")   # doctest: +SKIP
    >>> gates = HostGates(backend)                               # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

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

__all__ = ["FileGateBackend"]

T = TypeVar("T")
_POLL_S = 0.005
"""How often a caller waiting for a free slot looks again (another process cannot wake it)."""
_MARGIN_S = 1.0


class FileGateBackend:
    """Host states shared by the processes of one machine through lock files.

    Args:
        directory: where the per-host files live (created on first use); every process that
            should share the gates uses the same one.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, host: str) -> Path:
        return self.directory / f"{quote(host.lower(), safe='.-')}.json"

    def _update(self, host: str, now: float, change: Callable[[HostState, float], T]) -> T:
        """Apply ``change`` under the host's exclusive lock. It is given the caller's ``now``
        advanced by the time spent waiting for the lock, so it decides at the time it decides."""
        entered = time.monotonic()
        try:
            fd = os.open(self._path(host), os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # the first host of this directory: created on first use
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path(host), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            now_here = now + (time.monotonic() - entered)
            state = _decode(_read_bytes(fd), now_here) or HostState()
            result = change(state, now_here)
            data = b"" if is_idle(state, now_here) else _encode(state, now_here)
            # Overwrite, then cut to length: truncating to zero before the write made ext4 flush
            # the file at close (its replace-by-truncate heuristic), ~2 ms of wall time a slot.
            # A crash between the two leaves a stale tail, which _decode refuses: a fresh state.
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            return result
        finally:
            os.close(fd)  # releases the lock

    async def try_acquire(
        self, host: str, limits: GateLimits, now: float, token: str, *, probe: bool
    ) -> Decision:
        return self._update(
            host, now, lambda state, at: decide(state, limits, at, token, probe=probe)
        )

    async def release(
        self, host: str, limits: GateLimits, now: float, token: str, outcome: Outcome
    ) -> None:
        self._update(host, now, lambda state, at: settle(state, limits, at, token, outcome))

    async def defer(self, host: str, until: float) -> None:
        # ``until`` is not the time now: expiry and idleness are judged at the time now
        self._update(host, time.time(), lambda state, _at: defer(state, until))

    async def wait_for_release(self, host: str, timeout: float) -> None:
        await asyncio.sleep(min(timeout, _POLL_S))

    async def snapshot(self, host: str) -> HostState | None:
        path = self._path(host)
        if not path.exists():
            return None
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            raw = _read_bytes(fd)
        finally:
            os.close(fd)
        return _decode(raw, time.time())


def _read_bytes(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(raw: bytes, now: float) -> HostState | None:
    """The stored state, or None when there is none, it expired, or a crash cut its write."""
    if not raw.strip():
        return None
    try:
        stored = json.loads(raw)
        if stored["expires_at"] <= now:
            return None
        return HostState.from_json(stored["state"])
    except (ValueError, TypeError, KeyError):  # a write cut short by a crash: start afresh
        return None


def _encode(state: HostState, now: float) -> bytes:
    stored = {"expires_at": idle_at(state, now) + _MARGIN_S, "state": state.to_json()}
    return json.dumps(stored, separators=(",", ":")).encode()
