"""Machinery the fault exercises share: throwaway PostgreSQL and Redis servers a test may crash
and restart (never the shared ones on 5432/6379), fleet processes started as an operator starts
them (``python -m workers worker|scheduler|…``), a fake web that misbehaves per host on request,
and a connectors directory holding only the connectors an exercise needs.

Everything listens on 127.0.0.1, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from rareindex.settings import REPO_ROOT
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from tests.subprocess_env import subprocess_env

GUARD_DIR = Path(__file__).parent / "loopback_only"
"""``sitecustomize.py`` there refuses non-loopback connections in every process started with it."""
STORES = {
    "cards-shop": "shopify/cards-shop.toml",
    "comics-woo": "woocommerce/comics-woo.toml",
    "coins-woo": "woocommerce/coins-woo.toml",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every exercise here needs real services: the ``integration`` marker, as for
    tests/integration/ (CI=true turns a missing service into a failure)."""
    for item in items:
        if "tests/faults/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.integration)


def _missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {what}", pytrace=False)
    pytest.skip(what)


def free_port() -> int:
    """A TCP port nobody listens on right now (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(
    check: Callable[[], object], *, timeout: float, what: str, every: float = 0.05
) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


# --- a PostgreSQL of our own ---------------------------------------------------------------------


class OwnPostgres:
    """A throwaway PostgreSQL cluster on 127.0.0.1:``port`` (trust auth, no fsync), in a temporary
    directory outside pytest's (the server runs as ``postgres`` when we are root, and pytest's
    directories are private to root). ``crash()`` is ``pg_ctl stop -m immediate``: every backend
    dies at once and the next start runs crash recovery, as after a killed server."""

    def __init__(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")) or [
            p for p in [shutil.which("pg_ctl")] if p
        ]
        if not found:
            _missing("PostgreSQL server binaries (pg_ctl, initdb) are not installed")
        self.bin = Path(found[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="ri-faults-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str, timeout: float = 60) -> None:
        command = [str(self.bin / tool), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        assert done.returncode == 0, f"{tool} failed: {done.stdout}\n{done.stderr}"

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c max_connections=60"
        )
        log = str(self.root / "server.log")
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", "30", "-o", options, "start"
        )

    def crash(self) -> None:
        """Stop at once, as a crash would (no checkpoint; connections are cut)."""
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "30", "-m", "immediate", "stop")

    def close(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            self.crash()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def own_postgres() -> Iterator[OwnPostgres]:
    server = OwnPostgres()
    try:
        server.start()
        yield server
    finally:
        server.close()


# --- a Redis of our own --------------------------------------------------------------------------


class OwnRedis:
    """A throwaway ``redis-server`` on 127.0.0.1:``port`` with persistence off, so ``kill()`` then
    ``start()`` is a restart that loses everything the server held — as a crashed Redis without
    AOF does."""

    def __init__(self, log: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            _missing("redis-server is not installed")
        self.binary = str(binary)
        self.port = free_port()
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    self.binary,
                    "--port", str(self.port),
                    "--bind", "127.0.0.1",
                    "--save", "",
                    "--appendonly", "no",
                    "--daemonize", "no",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=1)
        try:
            wait_until(lambda: _pings(client), timeout=10, what="redis-server to answer PING")
        finally:
            client.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def _pings(client: Any) -> bool:
    try:
        return bool(client.ping())
    except Exception:
        return False


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    server = OwnRedis(tmp_path / "redis.log")
    try:
        server.start()
        yield server
    finally:
        server.kill()


# --- fleet processes -----------------------------------------------------------------------------


class Processes:
    """``python -m workers ARGS`` processes with the given environment, each logging to
    ``<tmp>/<name>.log``; all are stopped (SIGTERM, then SIGKILL) when the test ends."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(
        self, name: str, *args: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        with (self.root / f"{name}.log").open("ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "workers", *args],
                env={**self.env, **(env or {})},
                cwd=REPO_ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.running[name] = process
        return process

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run one command to its end (a CLI call)."""
        return subprocess.run(
            [sys.executable, "-m", "workers", *args],
            env=self.env,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def log(self, name: str) -> str:
        path = self.root / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-3000:]}" for name in self.running)

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.running.values())

    def stop(self, name: str, timeout: float = 30, *, signalled: bool = False) -> int:
        """SIGTERM (once: a second one during its graceful stop would kill it), wait, then
        SIGKILL after ``timeout``."""
        process = self.running[name]
        if process.poll() is None:
            if not signalled:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        return process.returncode

    def stop_all(self) -> None:
        signalled = set()
        for name, process in self.running.items():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                signalled.add(name)
        for name in self.running:
            self.stop(name, signalled=name in signalled)


def fleet_env(
    *,
    database_url: str,
    broker_url: str | None,
    connectors_dir: Path,
    data_dir: Path,
    web_port: int,
    **extra: str,
) -> dict[str, str]:
    """A fleet process's environment (:func:`tests.subprocess_env.subprocess_env`, the loopback
    guard first on ``PYTHONPATH``): no inherited ``RI_*``, this database and broker, the fake
    web's hosts pointed at its port, and whatever ``extra`` adds (``RI_RUN_LEASE_SECONDS="3"``)."""
    env = subprocess_env(
        {
            "RI_DATABASE_URL": database_url,
            "RI_CONNECTORS_DIR": str(connectors_dir),
            "RI_DATA_DIR": str(data_dir),
            "RI_CONNECT_TO": json.dumps({h: f"127.0.0.1:{web_port}" for h in FAKE_HOSTS}),
            "RI_LOG_LEVEL": "info",
            "RI_LOG_FORMAT": "json",
            **extra,
        },
        first=[GUARD_DIR],
    )
    if broker_url is not None:
        env["RI_BROKER_URL"] = broker_url
    return env


def connectors_dir(root: Path, stores: dict[str, dict[str, Any]], *, extra: str = "") -> Path:
    """A connectors directory with only ``stores`` (slug -> keys appended to its TOML, such as
    ``{"page_size": 50}``), the shipped policy files, and ``extra`` appended to the fake web's
    policy fragment as more ``domains.d`` JSON (a stricter host entry)."""
    target = root / "connectors"
    target.mkdir(parents=True, exist_ok=True)
    for slug, keys in stores.items():
        relative = STORES[slug]
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        text = (REPO_ROOT / "connectors" / relative).read_text()
        text += "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
        (target / relative).write_text(text)
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", target / "domains.json")
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", target / "domains.d")
    if extra:
        (target / "domains.d" / "zz-faults.json").write_text(extra)
    return target


# --- a fake web that misbehaves on request -------------------------------------------------------

Fault = Callable[[str, str], Awaitable[tuple[int, dict[str, str], bytes] | None]]
"""``(path, query) -> (status, headers, body)`` to answer instead of the site, or None."""


@dataclass
class Hit:
    host: str
    path: str
    query: str
    started: float
    finished: float = 0.0
    status: int = 0


@dataclass
class FaultyWeb:
    """The fake web behind a recorder of every request (host, path, start, end, status), with
    per-host response delays and per-host faults that answer instead of the site."""

    port: int = 0
    hits: list[Hit] = field(default_factory=list)
    delay_s: dict[str, float] = field(default_factory=dict)
    delay_paged_only: bool = False
    """Delay only requests with a query string (the feeds' list pages), not fetches by id."""
    faults: dict[str, Fault] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    inner: Any = None

    async def original(self, host: str, target: str) -> tuple[int, dict[str, str], bytes]:
        """What the fake web itself answers for ``target`` (path and query) on ``host``, for a
        fault that serves a damaged copy."""
        transport = httpx.ASGITransport(app=self.inner)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as client:
            response = await client.get(target)
        return response.status_code, dict(response.headers), response.content

    def of(self, host: str) -> list[Hit]:
        with self.lock:
            return [h for h in self.hits if h.host == host]

    def clear(self) -> None:
        with self.lock:
            self.hits.clear()

    def wrap(self, inner: Any) -> Any:
        self.inner = inner

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await inner(scope, receive, send)
                return
            host = dict(scope["headers"]).get(b"host", b"").decode().split(":")[0]
            hit = Hit(host, scope["path"], scope["query_string"].decode(), time.monotonic())
            with self.lock:
                self.hits.append(hit)
            delay = self.delay_s.get(host, 0.0)
            if delay and (hit.query or not self.delay_paged_only):
                await asyncio.sleep(delay)
            fault = self.faults.get(host)
            answer = await fault(hit.path, hit.query) if fault else None

            async def recording_send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    hit.status = int(message["status"])
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    hit.finished = time.monotonic()
                await send(message)

            if answer is None:
                await inner(scope, receive, recording_send)
                return
            status, headers, body = answer
            raw = [
                (k.lower().encode(), v.encode())
                for k, v in headers.items()
                if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")
            ]
            raw.append((b"content-length", str(len(body)).encode()))
            await recording_send({"type": "http.response.start", "status": status, "headers": raw})
            await recording_send({"type": "http.response.body", "body": body})

        return app


@pytest.fixture
def faulty_web() -> Iterator[FaultyWeb]:
    """The fake web (seed 7) on a real loopback socket, behind :class:`FaultyWeb`."""
    web = FaultyWeb()
    with serve_asgi(web.wrap(FakeWeb().app)) as base:
        web.port = urlsplit(base).port or 0
        yield web


# --- a paid engine's fake ------------------------------------------------------------------------


class ToFaultyWeb(httpx.AsyncBaseTransport):
    """How a fake paid API reaches the fake web: any ``*.fake.test`` URL (whatever its port) goes
    to 127.0.0.1:``port`` with its ``Host`` header kept; anything else is refused, so the fakes
    never leave loopback."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._inner: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        if host not in FAKE_HOSTS:
            raise httpx.ConnectError(f"{host} is not on the fake web", request=request)
        request.headers["host"] = host
        request.url = request.url.copy_with(host="127.0.0.1", port=self.port)
        if self._inner is None:  # built in the fake's own event loop, on its first request
            self._inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_keepalive_connections=0))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """The fake closes its client after every fetch; this transport outlives them all."""


@pytest.fixture
def fake_firecrawl(faulty_web: FaultyWeb) -> Iterator[Callable[..., tuple[Any, str]]]:
    """``fake_firecrawl(**options)`` -> (the fake Firecrawl API, its base URL), fetching its
    targets from :func:`faulty_web`; key ``fc-test``."""
    from rareindex_fakeweb.fake_firecrawl import create_fake_firecrawl_app

    with contextlib.ExitStack() as stack:

        def start(**options: Any) -> tuple[Any, str]:
            transport = ToFaultyWeb(faulty_web.port)
            fake = create_fake_firecrawl_app(upstream_transport=transport, **options)
            return fake, stack.enter_context(serve_asgi(fake))

        yield start


# --- loopback only -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[str]:
    """Refuse every TCP connection to a non-loopback address in this process while an exercise
    runs, and yield the ``PYTHONPATH`` entry that does the same in the processes it starts
    (``loopback_only/sitecustomize.py``; :func:`fleet_env` puts it there). An exercise run with
    its protection removed must still never send a packet off this machine."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "ri_faults_loopback_guard", GUARD_DIR / "sitecustomize.py"
    )
    assert spec is not None and spec.loader is not None
    guard = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(guard)  # installs it
    try:
        yield str(GUARD_DIR)
    finally:
        guard.uninstall()
