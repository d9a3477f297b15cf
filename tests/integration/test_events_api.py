"""``GET /api/events`` (SSE) and ``GET /api/events/page`` over a real socket, on SQLite and
PostgreSQL: resuming with ``Last-Event-ID`` and ``?cursor=``, filters, heartbeats, the retention
horizon (a ``reset`` event, a 410), the token checked again while streaming, and the schema."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, update

from rareindex.storage import upgrade
from rareindex.storage.events_store import prune
from rareindex.storage.outbox import emit, event
from rareindex.storage.schema import events
from rareindex.storage.tokens import create_token, revoke_token
from rareindex_connectors.testing import serve_asgi
from tests.sse_client import Subscriber
from tests.unit.rareindex.api.api_helpers import bearer, make_app


def _write(engine: Engine, n: int, *, kind: str = "sale.recorded", **fields: Any) -> None:
    for i in range(n):
        with engine.begin() as conn:
            emit(conn, [event(kind, payload={"i": i}, connector_id="c1", **fields)])


@pytest.fixture
def served(any_engine: Engine, tmp_path: Path) -> Iterator[tuple[str, str, Engine]]:
    upgrade(any_engine)
    token = create_token(any_engine, "watcher", role="read").token
    app = make_app(
        any_engine,
        tmp_path,
        events_poll_seconds=0.05,
        events_heartbeat_seconds=0.3,
        events_token_check_seconds=0.3,
    )
    with serve_asgi(app) as base:
        yield base, token, any_engine


def test_a_stream_resumes_after_the_last_event_id(served: tuple[str, str, Engine]) -> None:
    base, token, engine = served
    _write(engine, 3)
    first = Subscriber([base], token, params={"cursor": 0}).start()
    try:
        first.wait_for(3, timeout=10)
        _write(engine, 2)
        first.wait_for(5, timeout=10)
    finally:
        first.stop()
    assert first.cursors() == [1, 2, 3, 4, 5]
    assert first.events[0].event == "sale.recorded"
    assert first.events[0].data["payload"] == {"i": 0}
    assert first.events[0].data["stream"] == "connector:c1"
    _write(engine, 2)
    again = Subscriber([base], token, last_id="5").start()  # the header wins over no cursor
    try:
        again.wait_for(7, timeout=10)
    finally:
        again.stop()
    assert again.cursors() == [6, 7]


def test_no_cursor_means_from_now_and_heartbeats_keep_it_open(
    served: tuple[str, str, Engine],
) -> None:
    base, token, engine = served
    _write(engine, 2)
    sub = Subscriber([base], token).start()
    try:
        time.sleep(0.8)  # idle: keep-alive comments
        _write(engine, 1)
        sub.wait_for(3, timeout=10)
    finally:
        sub.stop()
    assert sub.cursors() == [3]
    assert any(m.comment and m.data == "keep-alive" for m in sub.others)


def test_filters(served: tuple[str, str, Engine]) -> None:
    base, token, engine = served
    _write(engine, 2, kind="listing.ended", category="coin")
    _write(engine, 2, kind="sale.recorded", category="coin")
    _write(engine, 2, kind="sale.recorded", category="comic")
    sub = Subscriber(
        [base], token, params={"cursor": 0, "type": "sale.recorded", "category": "comic"}
    ).start()
    try:
        sub.wait_for(6, timeout=10)
    finally:
        sub.stop()
    assert sub.cursors() == [5, 6]
    page = httpx.get(
        f"{base}/api/events/page",
        params={"after": 0, "type": ["listing.ended", "sale.recorded"], "category": "coin"},
        headers=bearer(token),
    ).json()
    assert [e["cursor"] for e in page["events"]] == [1, 2, 3, 4]
    assert page["next_after"] == 6 and page["head"] == 6  # nothing else matches up to the head
    two = httpx.get(
        f"{base}/api/events/page", params={"after": 1, "limit": 2}, headers=bearer(token)
    ).json()
    assert [e["cursor"] for e in two["events"]] == [2, 3] and two["next_after"] == 3
    bad = httpx.get(f"{base}/api/events", params={"type": "nope"}, headers=bearer(token))
    assert bad.status_code == 422 and bad.json()["error"] == "bad_request"
    assert httpx.get(f"{base}/api/events/page").status_code == 401
    assert httpx.get(f"{base}/api/events").status_code == 401


def test_a_cursor_behind_the_horizon_is_told_so(served: tuple[str, str, Engine]) -> None:
    base, token, engine = served
    _write(engine, 5)
    with engine.begin() as conn:
        old = datetime.now(UTC) - timedelta(days=60)
        conn.execute(update(events).where(events.c.cursor <= 3).values(created_at=old))
        prune(conn, before=datetime.now(UTC) - timedelta(days=30))
    gone = httpx.get(f"{base}/api/events/page", params={"after": 1}, headers=bearer(token))
    assert gone.status_code == 410
    assert gone.json()["error"] == "cursor_expired" and "after=3" in gone.json()["detail"]
    oldest = httpx.get(f"{base}/api/events/page", headers=bearer(token)).json()
    assert [e["cursor"] for e in oldest["events"]] == [4, 5] and oldest["oldest_cursor"] == 4
    sub = Subscriber([base], token, params={"cursor": 1}).start()
    try:
        sub.wait_for(5, timeout=10)
    finally:
        sub.stop()
    [reset] = [m for m in sub.others if m.event == "reset"]
    assert reset.id == "3" and reset.data["oldest_cursor"] == 4
    assert sub.cursors() == [4, 5]


def test_a_revoked_token_ends_the_stream(served: tuple[str, str, Engine]) -> None:
    base, token, engine = served
    sub = Subscriber([base], token).start()
    try:
        time.sleep(0.2)
        revoke_token(engine, "watcher")
        revoked_at = time.monotonic()
        deadline = revoked_at + 5
        while sub.ended is None and time.monotonic() < deadline:
            time.sleep(0.02)
        took = time.monotonic() - revoked_at
    finally:
        sub.stop()
    assert sub.ended == "token_revoked", sub.ended
    assert took < 0.3 + 1.0  # the check interval, plus a busy machine's slack
    again = httpx.get(f"{base}/api/events", headers=bearer(token))
    assert again.status_code == 401


def test_both_routes_are_in_the_openapi_document(served: tuple[str, str, Engine]) -> None:
    from typing import get_args

    from rareindex.api.routes.events import EventType
    from rareindex.storage.schema import EVENT_TYPES

    assert set(get_args(EventType)) == set(EVENT_TYPES)  # every type the outbox may hold
    base, _, _ = served
    spec = httpx.get(f"{base}/openapi.json").json()
    stream = spec["paths"]["/api/events"]["get"]
    assert "text/event-stream" in stream["responses"]["200"]["content"]
    page = spec["paths"]["/api/events/page"]["get"]
    assert page["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/EventPage"
    )
    assert "410" in page["responses"]
    live = httpx.get(f"{base}/events/live")
    assert live.status_code == 200 and "EventSource" in live.text


def test_many_writers_one_reader_sees_every_cursor_once(served: tuple[str, str, Engine]) -> None:
    base, token, engine = served
    sub = Subscriber([base], token, params={"cursor": 0}).start()
    writers = [threading.Thread(target=_write, args=(engine, 15)) for _ in range(3)]
    try:
        for w in writers:
            w.start()
        for w in writers:
            w.join()
        sub.wait_for(45, timeout=20)
    finally:
        sub.stop()
    assert sub.cursors() == list(range(1, 46))
