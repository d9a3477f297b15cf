"""The admin API over a real socket: ``/health`` latency on a kept-alive connection against a new
connection per request, and requests per second of the admin reads at 20 concurrent clients, on
SQLite and PostgreSQL — every number measured in this run.

    python -m bench.api [--quick] [--requests 400] [--seconds 5] [--clients 20]

For each database a fresh one is migrated and given a small fleet (not timed): 40 connectors of
three sources, 6 past runs each with engine stats, an admin token. ``rareindex api`` then runs as
an operator starts it (``python -m workers api`` on 127.0.0.1), logging at warning.

* ``/health`` latency: ``--requests`` sequential GETs on one kept-alive connection, and as many
  each on a new connection (connect, request, close), alternating in blocks of 50; p50 and p90.
  Before issue 22 the kept-alive client paid ~40 ms a request (Nagle's algorithm and delayed
  ACKs: the listening socket lacked ``TCP_NODELAY``), so it was slower than a new connection.
* admin reads: ``--clients`` concurrent clients, each on its own kept-alive connection, send
  ``GET /api/admin/connectors``, ``/coverage`` and ``/deadletters`` with the token for
  ``--seconds`` each; requests per second and p50 latency, every answer checked for 200.

The load generator shares the machine with the server (2 vCPUs here): the req/s are the pair's,
a floor for a server with its own cores. ``--quick``: 200 requests, 2 s a route (about 40 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from bench.common import console, machine, median, scratch_postgres

REPO_ROOT = Path(__file__).resolve().parents[1]

ROUTES = ("/api/admin/connectors", "/api/admin/coverage", "/api/admin/deadletters")
CONNECTORS = 40
RUNS_EACH = 6


def seed(url: str) -> str:
    """Migrate the database at ``url``, give it a small fleet, and return an admin token."""
    from sqlalchemy import insert

    from rareindex.storage import make_engine, upgrade
    from rareindex.storage.schema import connector_runs, connectors, sources
    from rareindex.storage.tokens import create_token

    engine = make_engine(url)
    upgrade(engine)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(insert(sources), [{"id": f"src-{i}", "name": f"Source {i}"} for i in range(3)])
        conn.execute(
            insert(connectors),
            [
                {
                    "id": f"shop-{i:02d}",
                    "source_id": f"src-{i % 3}",
                    "version": "1",
                    "parser_version": "1",
                    "refresh_class": ("HOT", "ACTIVE", "NORMAL")[i % 3],
                    "meta": {"hosts": [f"shop-{i:02d}.example"]},
                }
                for i in range(CONNECTORS)
            ],
        )
        conn.execute(
            insert(connector_runs),
            [
                {
                    "id": f"run_{i:02d}_{j}",
                    "connector_id": f"shop-{i:02d}",
                    "mode": "incremental",
                    "status": "succeeded",
                    "outcome": "complete",
                    "queued_at": now - timedelta(hours=j + 1),
                    "started_at": now - timedelta(hours=j + 1),
                    "finished_at": now - timedelta(hours=j + 1) + timedelta(seconds=30),
                    "pages": 10,
                    "records": 500,
                    "engine_stats": {"api": {"attempts": 10, "status": {"200": 10}}},
                }
                for i in range(CONNECTORS)
                for j in range(RUNS_EACH)
            ],
        )
    token = create_token(engine, "bench").token
    engine.dispose()
    return token


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(url: str, data_dir: Path) -> Iterator[str]:
    """``rareindex api`` on ``url``'s database; its base URL once ``/health`` answers."""
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
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise SystemExit(f"rareindex api exited: {(data_dir / 'api.log').read_text()}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("rareindex api did not answer /health within 60 s")
            time.sleep(0.2)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def health_latencies(base: str, requests: int) -> tuple[list[float], list[float]]:
    """(kept-alive, new connection) seconds per ``/health``, alternating blocks of 50."""
    kept: list[float] = []
    fresh: list[float] = []
    no_keep_alive = httpx.Limits(max_keepalive_connections=0)  # connect, ask, close, each time
    with (
        httpx.Client(base_url=base, timeout=10) as client,
        httpx.Client(base_url=base, timeout=10, limits=no_keep_alive) as once,
    ):
        client.get("/health")  # the connection is open before the first timed request
        once.get("/health")
        while len(kept) < requests:
            for _ in range(50):
                began = time.perf_counter()
                assert client.get("/health").status_code == 200
                kept.append(time.perf_counter() - began)
            for _ in range(50):
                began = time.perf_counter()
                assert once.get("/health").status_code == 200
                fresh.append(time.perf_counter() - began)
    return kept, fresh


@dataclass
class Load:
    route: str
    answers: int = 0
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0


async def load(base: str, token: str, route: str, clients: int, seconds: float) -> Load:
    """``clients`` concurrent clients, each on its own kept-alive connection, for ``seconds``."""
    result = Load(route)
    headers = {"Authorization": f"Bearer {token}"}

    async def client() -> None:
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=30) as http:
            assert (await http.get(route)).status_code == 200  # warm, not counted
            await ready.wait()
            while time.perf_counter() < stop:
                began = time.perf_counter()
                answer = await http.get(route)
                result.latencies.append(time.perf_counter() - began)
                assert answer.status_code == 200, answer.text[:200]
                result.answers += 1

    ready = asyncio.Event()
    stop = float("inf")
    tasks = [asyncio.create_task(client()) for _ in range(clients)]
    await asyncio.sleep(0.5)  # every client connected and warm
    began = time.perf_counter()
    stop = began + seconds
    ready.set()
    await asyncio.gather(*tasks)
    result.seconds = time.perf_counter() - began
    return result


@dataclass
class Measured:
    backend: str
    kept: list[float]
    fresh: list[float]
    loads: list[Load]


def measure(backend: str, url: str, args: argparse.Namespace) -> Measured:
    token = seed(url)
    with (
        tempfile.TemporaryDirectory(prefix="ri-bench-api-") as data,
        serve(url, Path(data)) as base,
    ):
        kept, fresh = health_latencies(base, args.requests)
        loads = [
            asyncio.run(load(base, token, route, args.clients, args.seconds)) for route in ROUTES
        ]
    return Measured(backend, kept, fresh, loads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 requests, 2 s a route")
    parser.add_argument("--requests", type=int, default=400, help="/health requests per client")
    parser.add_argument("--seconds", type=float, default=5.0, help="load per admin route")
    parser.add_argument("--clients", type=int, default=20, help="concurrent admin clients")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()
    if args.quick:
        args.requests, args.seconds = 200, 2.0
    began = time.perf_counter()
    results: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="ri-bench-api-db-") as root:
        results.append(measure("SQLite", f"sqlite:///{Path(root) / 'rareindex.db'}", args))
    with scratch_postgres() as pg:
        results.append(measure("PostgreSQL", pg.create("api"), args))

    from rich.table import Table

    out = console()
    health = Table(
        title=f"GET /health, {args.requests} sequential requests each way (ms)", caption=machine()
    )
    for column in ("backend", "kept-alive p50", "p90", "new connection p50", "p90", "kept ÷ new"):
        health.add_column(column, justify="left" if column == "backend" else "right")
    for r in results:
        health.add_row(
            r.backend,
            f"{median(r.kept) * 1000:.2f}",
            f"{percentile(r.kept, 0.9) * 1000:.2f}",
            f"{median(r.fresh) * 1000:.2f}",
            f"{percentile(r.fresh, 0.9) * 1000:.2f}",
            f"{median(r.kept) / median(r.fresh):.2f}",
        )
    out.print(health)
    admin = Table(
        title=f"admin reads, {args.clients} concurrent kept-alive clients, {args.seconds:g} s each",
        caption=machine(),
    )
    for column in ("backend", "route", "requests", "req/s", "p50 ms", "p90 ms"):
        admin.add_column(column, justify="left" if column in ("backend", "route") else "right")
    for r in results:
        for one in r.loads:
            admin.add_row(
                r.backend,
                one.route,
                f"{one.answers:,}",
                f"{one.answers / one.seconds:.0f}",
                f"{median(one.latencies) * 1000:.1f}",
                f"{percentile(one.latencies, 0.9) * 1000:.1f}",
            )
    out.print(admin)
    if args.json:
        figures = {
            r.backend: {
                "health_kept_p50_ms": median(r.kept) * 1000,
                "health_new_p50_ms": median(r.fresh) * 1000,
                **{f"{one.route} req/s": one.answers / one.seconds for one in r.loads},
            }
            for r in results
        }
        out.print(json.dumps(figures, indent=1))
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
