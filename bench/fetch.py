"""Fetch throughput: the RareIndex router (gates on, 4 hosts) against a plain httpx.AsyncClient
loop, a plain aiohttp loop and Scrapy, fetching the same local pages at the same concurrency.

    python -m bench.fetch [--quick] [--pages 3000] [--concurrency 64] [--repeat 3]

The page server runs in its own process. Every client parses each JSON body. Each repetition runs
every client once, the order rotating; printed are medians: pages/s, client CPU ms per page, and
each one's ratio to plain httpx (target: the router ≥ 0.8x) and to Scrapy — all measured in this
run. On 2 vCPUs the default run takes about 2 minutes, ``--quick`` (500 pages) about 35 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HOSTS = [f"h{i}.bench.test" for i in range(1, 5)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(  # noqa: S603 - our own module
        [sys.executable, "-m", "bench.fake_server", str(port)],
        cwd=REPO,
    )
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the benchmark page server did not start")


def urls(port: int, pages: int, *, named: bool) -> list[tuple[str, str]]:
    """(url, host) pairs; ``named`` URLs carry the host name, the others 127.0.0.1 + Host."""
    out = []
    for i in range(pages):
        host = HOSTS[i % len(HOSTS)]
        netloc = f"{host}:{port}" if named else f"127.0.0.1:{port}"
        out.append((f"http://{netloc}/products/{i}.json", host))
    return out


def measure(run: Callable[[], int]) -> tuple[float, float, int]:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    done = run()
    return time.perf_counter() - wall0, time.process_time() - cpu0, done


async def _bounded(concurrency: int, jobs: list[tuple[str, str]], one) -> int:  # type: ignore[no-untyped-def]
    queue = list(reversed(jobs))
    done = 0

    async def worker() -> None:
        nonlocal done
        while queue:
            url, host = queue.pop()
            await one(url, host)
            done += 1

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done


def run_router(port: int, pages: int, concurrency: int) -> int:
    from rareindex_connectors.runtime import (
        ApiEngine,
        HostGates,
        MemoryGateBackend,
        PolicySet,
        Router,
        SafeResolver,
    )

    per_host = max(1, concurrency // len(HOSTS))
    policy = {
        "defaults": {
            "min_interval_ms": 0,
            "concurrency": per_host,
            "max_retries": 0,
            "allow_private_network": True,
        }
    }
    policies = PolicySet.from_mapping(policy)
    engine = ApiEngine(
        policies=policies,
        gates=HostGates(MemoryGateBackend()),
        resolver=SafeResolver(static=dict.fromkeys(HOSTS, "127.0.0.1")),
    )
    router = Router({"api": engine}, policies)

    async def one(url: str, host: str) -> None:
        json.loads((await router.fetch(url, expect="json")).content)

    async def main() -> int:
        try:
            return await _bounded(concurrency, urls(port, pages, named=True), one)
        finally:
            await engine.aclose()

    return asyncio.run(main())


def run_httpx(port: int, pages: int, concurrency: int) -> int:
    import httpx

    async def main() -> int:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(limits=limits) as client:

            async def one(url: str, host: str) -> None:
                json.loads((await client.get(url, headers={"host": host})).content)

            return await _bounded(concurrency, urls(port, pages, named=False), one)

    return asyncio.run(main())


def run_aiohttp(port: int, pages: int, concurrency: int) -> int:
    import aiohttp

    async def main() -> int:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def one(url: str, host: str) -> None:
                async with session.get(url, headers={"host": host}) as response:
                    json.loads(await response.read())

            return await _bounded(concurrency, urls(port, pages, named=False), one)

    return asyncio.run(main())


SCRAPY_SPIDER = textwrap.dedent(
    """
    import json, sys, time, resource
    import scrapy
    from scrapy.crawler import CrawlerProcess

    port, pages, concurrency = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    hosts = [f"h{i}.bench.test" for i in range(1, 5)]
    count = 0

    class Bench(scrapy.Spider):
        name = "bench"
        async def start(self):  # Scrapy >= 2.13; older ones call start_requests
            for request in self.start_requests():
                yield request
        def start_requests(self):
            for i in range(pages):
                yield scrapy.Request(f"http://127.0.0.1:{port}/products/{i}.json",
                                     headers={"Host": hosts[i % 4]}, dont_filter=True)
        def parse(self, response):
            global count
            json.loads(response.body)
            count += 1

    process = CrawlerProcess(settings={
        "LOG_LEVEL": "ERROR", "ROBOTSTXT_OBEY": False, "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False, "TELNETCONSOLE_ENABLED": False, "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
    })
    process.crawl(Bench)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    process.start()
    print(json.dumps({"wall": time.perf_counter() - start_wall,
                      "cpu": time.process_time() - start_cpu, "done": count}))
    """
)


def run_scrapy(port: int, pages: int, concurrency: int) -> tuple[float, float, int]:
    out = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "-c", SCRAPY_SPIDER, str(port), str(pages), str(concurrency)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["wall"], result["cpu"], result["done"]


TARGET_VS_HTTPX = 0.8


def main() -> None:
    import logging
    import statistics

    import structlog
    from rich.table import Table

    from bench.common import console, machine, spread

    # As a process entry point would: info and above (debug events are filtered, not rendered).
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 pages a client")
    parser.add_argument("--pages", type=int, help="pages a client a repetition (default 3000)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; medians are shown")
    args = parser.parse_args()
    pages = args.pages or (500 if args.quick else 3000)
    repeat = max(1, args.repeat)
    began = time.perf_counter()
    port = free_port()
    server = start_server(port)
    clients: list[tuple[str, Callable[[], tuple[float, float, int]]]] = [
        ("scrapy", lambda: run_scrapy(port, pages, args.concurrency)),
        ("plain httpx", lambda: measure(lambda: run_httpx(port, pages, args.concurrency))),
        ("plain aiohttp", lambda: measure(lambda: run_aiohttp(port, pages, args.concurrency))),
        ("rareindex router", lambda: measure(lambda: run_router(port, pages, args.concurrency))),
    ]
    walls: dict[str, list[float]] = {name: [] for name, _ in clients}
    cpus: dict[str, list[float]] = {name: [] for name, _ in clients}
    try:
        for k in range(repeat):  # every client once a repetition, the order rotating
            for name, run in clients[k % 4 :] + clients[: k % 4]:
                wall, cpu, done = run()
                if done != pages:
                    raise SystemExit(f"{name} fetched {done} of {pages} pages")
                walls[name].append(wall)
                cpus[name].append(cpu)
    finally:
        server.terminate()
        server.wait(timeout=10)
    rate = {name: pages / statistics.median(walls[name]) for name in walls}
    table = Table(
        title=(
            f"fetch: {pages:,} local JSON pages (~20 KB) a client, concurrency "
            f"{args.concurrency}, 4 hosts, page server in its own process; median of {repeat} "
            "repetitions, client order rotating"
        ),
        caption=machine(),
    )
    for column in ("client", "pages/s", "CPU ms/page", "spread", "vs plain httpx", "vs Scrapy"):
        table.add_column(column, justify="left" if column == "client" else "right")
    for name in walls:
        table.add_row(
            name,
            f"{rate[name]:,.0f}",
            f"{statistics.median(cpus[name]) * 1000 / pages:.2f}",
            f"{spread(walls[name]):.0%}",
            f"{rate[name] / rate['plain httpx']:.2f}x",
            f"{rate[name] / rate['scrapy']:.2f}x",
        )
    out = console()
    out.print(table)
    ratio = rate["rareindex router"] / rate["plain httpx"]
    verdict = "[green]met[/]" if ratio >= TARGET_VS_HTTPX else "[red]MISSED[/]"
    out.print(
        f"target: rareindex router ≥ {TARGET_VS_HTTPX}x plain httpx   measured {ratio:.2f}x   "
        f"{verdict}"
    )
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
