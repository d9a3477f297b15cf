"""The event stream under load: ``--subscribers`` SSE clients on one ``rareindex api`` process
while ``--rate`` events a second are committed for ``--seconds``, against a plain polling client
reading the same table in the same run.

    python -m bench.events [--quick] [--subscribers 200] [--rate 100] [--seconds 20]
                           [--poll 0.5] [--sqlite]

A scratch PostgreSQL database is migrated and given a token (``--sqlite``: a SQLite file
instead, where the API polls every ``RI_EVENTS_POLL_SECONDS`` instead of LISTEN/NOTIFY). The
API runs as an operator starts it (``python -m workers api``). Every subscriber connects to
``/api/events`` first (raw asyncio sockets, chunked HTTP read by hand: a light client, so the
load generator leaves the server its CPU); then a writer thread commits transactions of two
events (``sale.recorded``) at the rate, each carrying a sequence number, and notes when each
commit returned. The polling client reads ``SELECT … FROM events WHERE cursor > last`` every
``--poll`` seconds on its own connection.

* delivery latency: from the writer's commit returning to the line arriving at a subscriber (or
  the poller), over every event and subscriber; p50, p99, max.
* CPU per event: the API process's user+system CPU (``/proc/<pid>/stat``) over the run, per event
  written and per frame delivered; for the poller, its thread's CPU per event (the database's
  work for its queries is not counted on either side).
* every subscriber must receive every event once, in cursor order (checked).

The load generator shares the machine (2 vCPUs here) with the server and PostgreSQL: the
latencies are the three's together, an upper bound. ``--quick``: 50 subscribers for 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.common import console, machine, quiet_logs, scratch_postgres

REPO_ROOT = Path(__file__).resolve().parents[1]
FRAME = re.compile(rb'id: (\d+)\n[^\n]*\ndata: [^\n]*?"seq":(\d+)')
TICKS = os.sysconf("SC_CLK_TCK")


def seed(url: str) -> str:
    from rareindex.storage import make_engine, upgrade
    from rareindex.storage.tokens import create_token

    engine = make_engine(url)
    upgrade(engine)
    token = create_token(engine, "bench-events", role="read").token
    engine.dispose()
    return token


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(url: str, data_dir: Path) -> Iterator[tuple[int, int]]:
    """``rareindex api`` on ``url``'s database: (port, pid) once ``/health`` answers."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RI_")}
    paths = [REPO_ROOT / "packages/connectors", REPO_ROOT / "packages/rareindex", REPO_ROOT]
    env |= {
        "PYTHONPATH": os.pathsep.join(str(p) for p in paths),
        "RI_DATABASE_URL": url,
        "RI_DATA_DIR": str(data_dir),
        "RI_LOG_LEVEL": "warning",
    }
    command = [sys.executable, "-m", "workers", "api", "--host", "127.0.0.1", "--port", str(port)]
    log = (data_dir / "api.log").open("w")
    process = subprocess.Popen(  # noqa: S603 - our interpreter, our module
        command, env=env, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"rareindex api exited: {(data_dir / 'api.log').read_text()}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("rareindex api did not answer /health within 60 s")
            time.sleep(0.2)
        yield port, process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Received:
    times: dict[int, float] = field(default_factory=dict)
    cursors: list[int] = field(default_factory=list)


async def subscribe(port: int, token: str, into: Received, connected: asyncio.Event) -> None:
    """One SSE client: GET /api/events from now on, chunked body decoded by hand."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        (
            f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    buffer = b""
    try:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.strip().split(b";")[0], 16)
            if size == 0:
                return
            chunk = await reader.readexactly(size + 2)
            now = time.monotonic()
            buffer += chunk[:-2]
            end = buffer.rfind(b"\n\n") + 2  # whole frames only (a chunk holds whole ones)
            if end < 2:
                continue
            whole, buffer = buffer[:end], buffer[end:]
            if not connected.is_set() and (b"retry:" in whole or whole.startswith(b":")):
                connected.set()
            for found in FRAME.finditer(whole):
                into.times[int(found[2])] = now
                into.cursors.append(int(found[1]))
    except (asyncio.CancelledError, asyncio.IncompleteReadError, ConnectionError):
        return
    finally:
        writer.close()


class Writer(threading.Thread):
    """Commits transactions of two events at ``rate`` events a second; notes each commit."""

    def __init__(self, url: str, rate: float, seconds: float) -> None:
        super().__init__(daemon=True)
        self.url, self.rate, self.seconds = url, rate, seconds
        self.committed: dict[int, float] = {}

    def run(self) -> None:
        from rareindex.storage import make_engine
        from rareindex.storage.outbox import emit, event

        engine = make_engine(self.url)
        per_commit = 2
        interval = per_commit / self.rate
        began = time.monotonic()
        seq = 0
        while time.monotonic() - began < self.seconds:
            due = began + (seq // per_commit) * interval
            if due > time.monotonic():
                time.sleep(due - time.monotonic())
            with engine.begin() as conn:
                emit(
                    conn,
                    [
                        event(
                            "sale.recorded",
                            connector_id="bench",
                            category="tcg_card",
                            payload={"seq": seq + k, "price": "10.00", "currency": "USD"},
                        )
                        for k in range(per_commit)
                    ],
                )
            done = time.monotonic()
            for k in range(per_commit):
                self.committed[seq + k] = done
            seq += per_commit
        engine.dispose()


class Poller(threading.Thread):
    """Reads the events table every ``every`` seconds, as a monitor polling it would."""

    def __init__(self, url: str, every: float) -> None:
        super().__init__(daemon=True)
        self.url, self.every = url, every
        self.received = Received()
        self.queries = 0
        self.cpu = 0.0
        self.stop = threading.Event()

    def run(self) -> None:
        from sqlalchemy import select

        from rareindex.storage import make_engine
        from rareindex.storage.events_store import head
        from rareindex.storage.schema import events

        engine = make_engine(self.url)
        with engine.connect() as conn:
            last = head(conn).last
        started = time.thread_time()
        while not self.stop.wait(self.every):
            with engine.connect() as conn:
                rows = conn.execute(
                    select(events.c.cursor, events.c.payload)
                    .where(events.c.cursor > last)
                    .order_by(events.c.cursor)
                ).all()
            now = time.monotonic()
            self.queries += 1
            for cursor, payload in rows:
                self.received.times[payload["seq"]] = now
                self.received.cursors.append(cursor)
                last = cursor
        self.cpu = time.thread_time() - started
        engine.dispose()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class Result:
    backend: str
    written: int
    subscriber_latencies: list[float]
    poller_latencies: list[float]
    api_cpu: float
    poller_cpu: float
    poller_queries: int
    complete: bool
    subscribers: int


async def _run(port: int, pid: int, url: str, token: str, args: argparse.Namespace) -> Result:
    received = [Received() for _ in range(args.subscribers)]
    connected = [asyncio.Event() for _ in received]
    tasks = [
        asyncio.create_task(subscribe(port, token, r, c))
        for r, c in zip(received, connected, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(c.wait() for c in connected)), timeout=60)
    await asyncio.sleep(1.0)  # every stream open and idle
    writer = Writer(url, args.rate, args.seconds)
    poller = Poller(url, args.poll)
    poller.start()
    cpu_before = cpu_seconds(pid)
    writer.start()
    await asyncio.to_thread(writer.join)
    deadline = time.monotonic() + 15
    total = len(writer.committed)
    while time.monotonic() < deadline and any(len(r.times) < total for r in received):
        await asyncio.sleep(0.1)
    cpu_after = cpu_seconds(pid)
    await asyncio.sleep(args.poll * 2)
    poller.stop.set()
    await asyncio.to_thread(poller.join)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies = [
        r.times[seq] - committed
        for r in received
        for seq, committed in writer.committed.items()
        if seq in r.times
    ]
    polled = [
        poller.received.times[seq] - committed
        for seq, committed in writer.committed.items()
        if seq in poller.received.times
    ]
    complete = all(len(r.times) == total and r.cursors == sorted(set(r.cursors)) for r in received)
    return Result(
        "PostgreSQL" if url.startswith("postgresql") else "SQLite",
        total,
        latencies,
        polled,
        cpu_after - cpu_before,
        poller.cpu,
        poller.queries,
        complete,
        args.subscribers,
    )


def measure(url: str, args: argparse.Namespace) -> Result:
    token = seed(url)
    with (
        tempfile.TemporaryDirectory(prefix="ri-bench-events-") as data,
        serve(url, Path(data)) as (port, pid),
    ):
        return asyncio.run(_run(port, pid, url, token, args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 subscribers, 5 s")
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--rate", type=float, default=100.0, help="events written a second")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long events are written")
    parser.add_argument("--poll", type=float, default=0.5, help="the polling client's interval")
    parser.add_argument("--sqlite", action="store_true", help="also on SQLite (polling API)")
    args = parser.parse_args()
    if args.quick:
        args.subscribers, args.seconds = 50, 5.0
    quiet_logs()
    began = time.perf_counter()
    results: list[Result] = []
    with scratch_postgres() as pg:
        results.append(measure(pg.create("events"), args))
    if args.sqlite:
        with tempfile.TemporaryDirectory(prefix="ri-bench-events-db-") as root:
            results.append(measure(f"sqlite:///{Path(root) / 'rareindex.db'}", args))

    from rich.table import Table

    out = console()
    table = Table(
        title=(
            f"event delivery: {args.subscribers} SSE subscribers on one API process vs one "
            f"polling client ({args.poll:g} s), {args.rate:g} events/s for {args.seconds:g} s"
        ),
        caption=machine(),
    )
    for column in (
        "backend",
        "client",
        "events",
        "deliveries",
        "p50 ms",
        "p99 ms",
        "max ms",
        "CPU ms/event",
        "CPU µs/delivery",
        "all, in order",
    ):
        table.add_column(column, justify="left" if column in ("backend", "client") else "right")
    for r in results:
        sse, polled = r.subscriber_latencies, r.poller_latencies
        table.add_row(
            r.backend,
            f"SSE x{r.subscribers}",
            f"{r.written:,}",
            f"{len(sse):,}",
            f"{percentile(sse, 0.5) * 1000:.0f}",
            f"{percentile(sse, 0.99) * 1000:.0f}",
            f"{max(sse) * 1000:.0f}",
            f"{r.api_cpu / r.written * 1000:.2f}",
            f"{r.api_cpu / max(1, len(sse)) * 1e6:.0f}",
            "yes" if r.complete else "NO",
        )
        table.add_row(
            r.backend,
            f"poll every {args.poll:g} s",
            f"{r.written:,}",
            f"{len(polled):,}",
            f"{percentile(polled, 0.5) * 1000:.0f}",
            f"{percentile(polled, 0.99) * 1000:.0f}",
            f"{max(polled) * 1000:.0f}",
            f"{r.poller_cpu / r.written * 1000:.2f}",
            f"{r.poller_cpu / max(1, len(polled)) * 1e6:.0f}",
            f"{r.poller_queries} queries",
        )
    out.print(table)
    for r in results:
        p99 = percentile(r.subscriber_latencies, 0.99)
        verdict = "met" if p99 < 1.0 else "MISSED"
        out.print(f"{r.backend}: SSE p99 {p99 * 1000:.0f} ms, target < 1000 ms: {verdict}")
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
