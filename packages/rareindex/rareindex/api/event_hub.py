"""One API process's fan-out of change events to its Server-Sent-Events subscribers.

The hub reads the outbox once for all subscribers: it wakes on PostgreSQL ``NOTIFY`` (one
``LISTEN`` connection per process; the notification is sent by the writing transaction, so it
arrives at its commit) or, on SQLite, every ``RI_EVENTS_POLL_SECONDS`` (on PostgreSQL the same
poll, ten times slower, is a fallback for a lost listener), reads the events after the newest
cursor it has, encodes each as an SSE frame once, keeps the newest :data:`RECENT` and wakes the
subscribers. A subscriber within that window takes its frames from memory (filtered in
Python, by the same rule as the SQL filter); one further behind — resuming from an old
``Last-Event-ID`` — reads pages from the database with its filter in SQL until it has caught up.

Cursors are given in commit order (:mod:`rareindex.storage.outbox`), so "every event after
cursor *n*" is a prefix that only grows: a subscriber never misses one and never gets one twice,
whichever API process it reconnects to.

Example:
    >>> hub = EventHub(engine, settings)                             # doctest: +SKIP
    >>> async for frame in hub.frames(Subscription(cursor=41)): ...   # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import structlog

from ..settings import Settings
from ..storage import Engine
from ..storage.events_store import (
    CursorExpired,
    EventFilter,
    event_json,
    head,
    read_after,
    read_page,
)
from ..storage.outbox import NOTIFY_CHANNEL

__all__ = ["COALESCE_SECONDS", "RECENT", "EventHub", "Subscription", "sse_frame"]

log = structlog.get_logger(__name__)

RECENT = 5000
"""Frames the hub keeps in memory: a subscriber less far behind reads no database."""
COALESCE_SECONDS = 0.05
"""The hub reads at most this often: the commits of 50 ms wake each subscriber once, not once
a commit (200 subscribers and 50 commits a second would be 10,000 wake-ups a second)."""
_PAGE = 1000


def sse_frame(kind: str, data: Mapping[str, Any], cursor: int | None = None) -> bytes:
    """One Server-Sent-Events message: ``id:`` (when given), ``event:`` and one ``data:`` line."""
    head_line = b"" if cursor is None else b"id: %d\n" % cursor
    return head_line + b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


@dataclass(frozen=True, slots=True)
class _Frame:
    cursor: int
    event: dict[str, Any]
    data: bytes


@dataclass(slots=True)
class Subscription:
    """What one subscriber wants and where it stands."""

    cursor: int | None
    """The last cursor it has seen; None: only events from now on."""
    where: EventFilter = field(default_factory=EventFilter)
    watchlists: Callable[[Mapping[str, Any]], list[str]] | None = None
    """The ids of the caller's watchlists an event matches (a watchlist filter), or None."""
    tags: Callable[[Mapping[str, Any]], list[str]] | None = None
    """Without a watchlist filter: the ids of every caller's watchlist an event matches, put in
    the event's ``watchlists`` (None: the caller has none, the frames go as they are)."""


class EventHub:
    """The events of one API process, read once and fanned out (see the module)."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.poll_seconds = settings.events_poll_seconds
        self.notify = engine.dialect.name == "postgresql"
        self.last: int | None = None
        """The newest cursor the hub has read (None before it started)."""
        self.subscribers = 0
        self.closing = False
        self._recent: list[_Frame] = []
        self._tick = asyncio.Event()
        self._wake = asyncio.Event()
        self._ready = asyncio.Event()
        self._listening = False
        self._tasks: list[asyncio.Task[None]] = []

    # --- the process side: read new events, wake subscribers ---------------------------------

    async def start(self) -> None:
        """Start reading (once; on the first subscriber) and wait until the head is known."""
        if self.closing:
            return
        if not self._tasks:
            self._tasks.append(asyncio.create_task(self._run(), name="events-hub"))
            if self.notify:
                self._tasks.append(asyncio.create_task(self._listen(), name="events-listen"))
        await self._ready.wait()

    async def aclose(self) -> None:
        """End every stream (each sends what it has and returns) and stop reading."""
        self.closing = True
        self._tick.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def wake(self) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while not self.closing:
            try:
                if self.last is None:
                    self.last = await asyncio.to_thread(self._head)
                    self._ready.set()
                await self._read_new()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a database outage: keep the streams, try again
                log.warning("events.read_failed", error=f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(min(5.0, self.poll_seconds * 4))
                continue
            every = self.poll_seconds * (10 if self._listening else 1)
            read_at = asyncio.get_running_loop().time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=every)
            self._wake.clear()
            rest = COALESCE_SECONDS - (asyncio.get_running_loop().time() - read_at)
            if rest > 0 and not self.closing:
                await asyncio.sleep(rest)

    def _head(self) -> int:
        with self.engine.connect() as conn:
            return head(conn).last

    def _read(self, after: int) -> list[dict[str, Any]]:
        with self.engine.connect() as conn:
            return read_after(conn, after, limit=_PAGE, check=False)

    async def _read_new(self) -> None:
        while self.last is not None:
            page = await asyncio.to_thread(self._read, self.last)
            if not page:
                return
            self._recent.extend(_frame(event) for event in page)
            if len(self._recent) > 2 * RECENT:
                del self._recent[: len(self._recent) - RECENT]
            self.last = page[-1]["cursor"]
            tick, self._tick = self._tick, asyncio.Event()
            tick.set()
            if len(page) < _PAGE:
                return

    async def _listen(self) -> None:
        """``LISTEN`` on a connection of its own; any notification wakes the reader."""
        import psycopg

        conninfo = self.engine.url.set(drivername="postgresql").render_as_string(
            hide_password=False
        )
        while not self.closing:
            try:
                async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    self._listening = True
                    self.wake()  # whatever was committed while not listening
                    async for _ in conn.notifies():
                        self.wake()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("events.listen_failed", error=f"{type(exc).__name__}: {exc}")
            self._listening = False
            await asyncio.sleep(1)

    # --- the subscriber side -----------------------------------------------------------------

    async def next_frames(self, sub: Subscription) -> list[bytes]:
        """The frames after ``sub.cursor`` that it wants (moving its cursor), at once: an empty
        list when there are none yet. A cursor past the retention horizon gives one ``reset``
        frame and moves the cursor to the horizon."""
        await self.start()
        if self.closing or self.last is None:
            return []
        if sub.cursor is None:
            sub.cursor = self.last
        if sub.cursor >= self.last:
            return []
        recent = self._recent
        if recent and recent[0].cursor <= sub.cursor + 1:
            start = bisect_right(recent, sub.cursor, key=lambda f: f.cursor)
            chosen = recent[start:]
            sub.cursor = chosen[-1].cursor if chosen else sub.cursor
            if sub.where.empty and sub.watchlists is None and sub.tags is None:  # as they are
                return [f.data for f in chosen]
            return [self._deliver(sub, f.event, f.data) for f in chosen if self._wants(sub, f)]
        try:
            page = await asyncio.to_thread(self._page, sub.cursor, sub.where)
        except CursorExpired as expired:
            sub.cursor = expired.pruned_through
            return [
                sse_frame(
                    "reset",
                    {
                        "error": "cursor_expired",
                        "detail": str(expired),
                        "oldest_cursor": expired.oldest_cursor,
                    },
                    cursor=expired.pruned_through,
                )
            ]
        frames = [
            self._deliver(sub, event, None)
            for event in page.events
            if sub.watchlists is None or sub.watchlists(event)
        ]
        sub.cursor = page.next_after
        return frames

    def _page(self, after: int, where: EventFilter) -> Any:
        with self.engine.connect() as conn:
            return read_page(conn, after, where, limit=_PAGE)

    @staticmethod
    def _wants(sub: Subscription, frame: _Frame) -> bool:
        if not sub.where.matches(frame.event):
            return False
        return sub.watchlists is None or bool(sub.watchlists(frame.event))

    @staticmethod
    def _deliver(sub: Subscription, event: dict[str, Any], data: bytes | None) -> bytes:
        tagger = sub.watchlists or sub.tags
        if tagger is not None:
            return sse_frame(event["type"], event_json(event, tagger(event)), event["cursor"])
        return data if data is not None else _frame(event).data

    async def wait(self, sub: Subscription, timeout: float) -> None:
        """Until events newer than ``sub.cursor`` may be there, the hub closes, or ``timeout``."""
        tick = self._tick
        behind = self.last is not None and sub.cursor is not None and self.last > sub.cursor
        if self.closing or behind:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(tick.wait(), timeout=timeout)

    async def frames(
        self,
        sub: Subscription,
        *,
        heartbeat: float,
        check_every: float,
        still_allowed: Callable[[], Any],
        clock: Callable[[], float] | None = None,
    ) -> AsyncIterator[bytes]:
        """The stream of one subscriber: its frames as they come, a ``: keep-alive`` comment
        after ``heartbeat`` seconds of silence, and its token checked every ``check_every``
        seconds (``still_allowed``, awaited: falsy ends the stream with a ``token_revoked``
        frame). Ends when the hub closes."""
        now = clock or asyncio.get_running_loop().time
        self.subscribers += 1
        try:
            yield b"retry: 1000\n: connected\n\n"
            quiet_since = checked_at = now()
            while not self.closing:
                sent = await self.next_frames(sub)
                if sent:
                    yield b"".join(sent)
                    quiet_since = now()
                    continue
                if now() - checked_at >= check_every:
                    checked_at = now()
                    if not await still_allowed():
                        yield sse_frame(
                            "token_revoked",
                            {"error": "invalid_token", "detail": "the token was revoked"},
                        )
                        log.info("events.stream_ended", why="token_revoked")
                        return
                if now() - quiet_since >= heartbeat:
                    yield b": keep-alive\n\n"
                    quiet_since = now()
                due = min(quiet_since + heartbeat, checked_at + check_every) - now()
                await self.wait(sub, max(0.01, due))
        finally:
            self.subscribers -= 1


def _frame(event: dict[str, Any]) -> _Frame:
    return _Frame(
        event["cursor"], event, sse_frame(event["type"], event_json(event), event["cursor"])
    )
