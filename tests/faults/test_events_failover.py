"""The event stream under faults, on real PostgreSQL and real ``rareindex api`` processes.

* Two API processes on one database; a subscriber on the first, which is SIGKILLed while events
  are written (by a plain writer, and by resolve batches of the pipeline); the subscriber
  reconnects to the second with ``Last-Event-ID`` and receives exactly the events it had not
  seen: none twice, none missing.
* A slow transaction that starts before faster ones and commits after them: the reader's
  cursors still only go up, and it misses nothing (the slow one's event comes last).
* A revoked token's stream ends within the check interval; SIGTERM ends open streams.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, insert

from rareindex.storage.outbox import emit, event
from rareindex.storage.schema import sources
from rareindex.storage.tokens import revoke_token
from tests.sse_client import Subscriber
from tests.unit.rareindex.api.api_helpers import seed

from .conftest import Processes, connectors_dir, fleet_env, free_port, wait_until

CHECK_SECONDS = 1.0


@dataclass
class Fleet:
    processes: Processes
    bases: list[str]
    names: list[str]
    token: str


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def fleet(pg_engine: Engine, tmp_path: Path) -> Iterator[Fleet]:
    """Two ``rareindex api`` processes on one seeded PostgreSQL database."""
    data = seed(pg_engine)
    url = pg_engine.url.render_as_string(hide_password=False)
    env = fleet_env(
        database_url=url,
        broker_url=None,
        connectors_dir=connectors_dir(tmp_path, {}),
        data_dir=tmp_path / "data",
        web_port=free_port(),
        RI_EVENTS_POLL_SECONDS="0.2",
        RI_EVENTS_TOKEN_CHECK_SECONDS=str(CHECK_SECONDS),
        RI_EVENTS_HEARTBEAT_SECONDS="2",
    )
    processes = Processes(tmp_path, env)
    bases, names = [], []
    for name in ("api-a", "api-b"):
        port = free_port()
        processes.start(name, "api", "--host", "127.0.0.1", "--port", str(port))
        bases.append(f"http://127.0.0.1:{port}")
        names.append(name)
    try:
        for base in bases:
            wait_until(lambda b=base: _answers(f"{b}/health"), timeout=60, what=f"api at {base}")
        yield Fleet(processes, bases, names, data.admin_token)
    finally:
        processes.stop_all()


class Writer:
    """Writes events in a thread: transactions of 1-3 events, every few milliseconds."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.written = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        batch = 0
        while not self._stop.is_set():
            size = 1 + batch % 3
            with self.engine.begin() as conn:
                emit(
                    conn,
                    [
                        event("sale.recorded", connector_id="w", payload={"n": self.written + k})
                        for k in range(size)
                    ],
                )
            self.written += size
            batch += 1
            time.sleep(0.01)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_a_subscriber_fails_over_to_another_process_without_gap_or_repeat(
    fleet: Fleet, pg_engine: Engine
) -> None:
    started = time.monotonic()
    sub = Subscriber(fleet.bases, fleet.token, params={"cursor": 0}).start()
    try:
        with Writer(pg_engine) as writer:
            wait_until(lambda: len(sub.events) >= 30, timeout=15, what="30 events on api-a")
            fleet.processes.running[fleet.names[0]].send_signal(signal.SIGKILL)
            wait_until(lambda: len(sub.connections) >= 2, timeout=15, what="a reconnect")
            seen_at_reconnect = len(sub.events)
            time.sleep(1.0)  # writes go on, read through api-b
        sub.wait_for(writer.written, timeout=15)
    finally:
        sub.stop()
    assert sub.connections[:2] == fleet.bases  # a, then b
    assert sub.cursors() == list(range(1, writer.written + 1))  # none twice, none missing
    assert [m.data["payload"]["n"] for m in sub.events] == list(range(writer.written))
    assert len(sub.events) > seen_at_reconnect  # some arrived only through api-b
    assert time.monotonic() - started < 30


class Pipeline(threading.Thread):
    """Stores, normalizes and resolves raw records batch after batch, as a crawl's stages do:
    each resolve batch writes its sales, listings and lots and their events together."""

    def __init__(self, engine: Engine, root: Path, batches: int) -> None:
        super().__init__(daemon=True)
        self.engine, self.root, self.batches = engine, root, batches
        self.error: BaseException | None = None

    def run(self) -> None:
        from rareindex.indexer import resolve_pending
        from rareindex.normalizer import normalize_raw
        from rareindex.storage import BlobStore, RawRecordStore
        from tests.integration.test_pipeline_statements import REGISTRY, _store, _workload

        try:
            store = RawRecordStore(BlobStore(self.root / "blobs"))
            for batch in range(self.batches):
                ids = _store(self.engine, store, _workload(f"b{batch}-", 8))
                normalize_raw(self.engine, REGISTRY, ids, blobs=store.blobs)
                resolve_pending(self.engine)
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_failover_while_resolve_batches_write(
    fleet: Fleet, pg_engine: Engine, tmp_path: Path
) -> None:
    """The same failover, the events written by the resolver: several event types per batch,
    many events per commit."""
    from rareindex.storage.events_store import head
    from tests.integration.test_pipeline_statements import _setup

    _setup(pg_engine)  # the scripted connector and the catalog
    sub = Subscriber(fleet.bases, fleet.token, params={"cursor": 0}).start()
    try:
        pipeline = Pipeline(pg_engine, tmp_path, batches=40)
        pipeline.start()
        wait_until(lambda: len(sub.events) >= 10, timeout=20, what="events on api-a")
        fleet.processes.running[fleet.names[0]].send_signal(signal.SIGKILL)
        with pg_engine.connect() as conn:
            at_kill = head(conn).last
        pipeline.join(timeout=90)
        assert pipeline.error is None, repr(pipeline.error)
        with pg_engine.connect() as conn:
            last = head(conn).last
        sub.wait_for(last, timeout=15)
    finally:
        sub.stop()
    assert sub.connections[:2] == fleet.bases
    assert sub.cursors() == list(range(1, last + 1))
    assert last > at_kill  # the resolver went on writing after the kill
    kinds = {m.event for m in sub.events}
    assert {"sale.recorded", "listing.appeared", "auction_lot.result"} <= kinds


def test_a_slow_transaction_committing_last_still_gets_the_highest_cursor(
    fleet: Fleet, pg_engine: Engine
) -> None:
    sub = Subscriber(fleet.bases[1:], fleet.token, params={"cursor": 0}).start()
    slow_began = threading.Event()
    fast_done = threading.Event()

    def slow() -> None:
        with pg_engine.begin() as conn:
            conn.execute(insert(sources).values(id="slow-source", name="Slow"))
            emit(conn, [event("listing.ended", connector_id="slow", payload={"who": "slow"})])
            slow_began.set()
            assert fast_done.wait(20)  # commits only after the fast ones
            time.sleep(0.3)

    thread = threading.Thread(target=slow)
    thread.start()
    try:
        assert slow_began.wait(10)
        for i in range(10):
            with pg_engine.begin() as conn:
                emit(conn, [event("sale.recorded", connector_id="fast", payload={"who": i})])
        sub.wait_for(10, timeout=10)
        fast_done.set()
        thread.join(timeout=20)
        sub.wait_for(11, timeout=10)
    finally:
        fast_done.set()
        sub.stop()
    cursors = sub.cursors()
    assert cursors == list(range(1, 12))  # strictly increasing, nothing skipped
    assert [m.data["payload"]["who"] for m in sub.events] == [*range(10), "slow"]


def test_a_revoked_token_ends_its_stream_and_sigterm_ends_the_rest(
    fleet: Fleet, pg_engine: Engine
) -> None:
    from rareindex.storage.tokens import create_token

    doomed = create_token(pg_engine, "doomed", role="read").token
    victim = Subscriber(fleet.bases[:1], doomed).start()
    other = Subscriber(fleet.bases[:1], fleet.token).start()
    try:
        time.sleep(0.3)
        revoke_token(pg_engine, "doomed")
        revoked = time.monotonic()
        wait_until(lambda: victim.ended, timeout=CHECK_SECONDS + 5, what="the revoked stream's end")
        took = time.monotonic() - revoked
        assert victim.ended == "token_revoked"
        assert took <= CHECK_SECONDS + 1.5, took  # the interval, and a busy machine's slack
        assert other.ended is None  # the other token's stream goes on
        stopping = time.monotonic()
        status = fleet.processes.stop(fleet.names[0], timeout=15)
        assert time.monotonic() - stopping < 10  # open streams do not hold the shutdown
        assert status == 0
    finally:
        victim.stop()
        other.stop()
