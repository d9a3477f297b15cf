"""A Server-Sent-Events client for the tests: parse a stream into messages, and a subscriber that
runs in a thread, remembers every event it got and reconnects (to the next of its servers) with
``Last-Event-ID`` when its connection dies, as ``EventSource`` does."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True, slots=True)
class Message:
    event: str
    data: Any
    id: str | None
    comment: bool = False


def parse(lines: Iterator[str]) -> Iterator[Message]:
    """Messages from the lines of an event stream (comments as ``comment=True`` messages)."""
    kind, data, ident = "message", [], None
    for line in lines:
        if line == "":
            if data:
                yield Message(kind, json.loads("\n".join(data)), ident)
            kind, data, ident = "message", [], None
        elif line.startswith(":"):
            yield Message("", line[1:].strip(), None, comment=True)
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "event":
                kind = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                ident = value


@dataclass
class Subscriber:
    """Reads ``/api/events`` from ``bases`` (the first that answers), in a thread, into
    :attr:`events`; after a broken connection it goes to the next base with ``Last-Event-ID``."""

    bases: Sequence[str]
    token: str
    params: dict[str, Any] = field(default_factory=dict)
    events: list[Message] = field(default_factory=list)
    others: list[Message] = field(default_factory=list)
    connections: list[str] = field(default_factory=list)
    last_id: str | None = None
    ended: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _connected: threading.Event = field(default_factory=threading.Event)

    def start(self, *, timeout: float = 10) -> Subscriber:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        assert self._connected.wait(timeout), "the subscriber did not connect"
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def cursors(self) -> list[int]:
        return [int(m.id) for m in self.events if m.id is not None]

    def wait_for(self, cursor: int, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.cursors() or self.cursors()[-1] < cursor:
            if time.monotonic() > deadline:
                got = self.cursors()[-1:] or None
                raise AssertionError(f"waited {timeout} s for cursor {cursor}; last {got}")
            time.sleep(0.02)

    def _run(self) -> None:
        turn = 0
        while not self._stop.is_set() and self.ended is None:
            base = self.bases[turn % len(self.bases)]
            headers = {"Authorization": f"Bearer {self.token}"}
            if self.last_id is not None:
                headers["Last-Event-ID"] = self.last_id
            try:
                with httpx.stream(
                    "GET",
                    f"{base}/api/events",
                    params=self.params,
                    headers=headers,
                    timeout=httpx.Timeout(5, read=30),
                ) as response:
                    if response.status_code != 200:
                        self.ended = f"status {response.status_code}"
                        self._connected.set()
                        return
                    self.connections.append(base)
                    self._connected.set()
                    for message in parse(response.iter_lines()):
                        if self._stop.is_set():
                            return
                        if message.comment:
                            self.others.append(message)
                            continue
                        if message.event in ("token_revoked",):
                            self.others.append(message)
                            self.ended = message.event
                            return
                        if message.event == "reset":
                            self.others.append(message)
                        else:
                            self.events.append(message)
                        if message.id is not None:
                            self.last_id = message.id
            except httpx.HTTPError:
                pass
            turn += 1
            time.sleep(0.05)
