"""The full crawl path (fetch → parse → persist): RareIndex ``run_connector`` against Scrapy, the
ingest ceiling, and the memory of a long crawl — every number measured in this run.

    python -m bench.crawl [--quick] [--pages 200] [--memory-pages 50000] [--repeat 3] [--profile]

1. ``run_connector`` with a :class:`ShopifyStoreConnector` paging ``/products.json`` (250 products
   of ~1 KB a page, then the empty page that ends a store) into ``raw_records`` on SQLite and on
   PostgreSQL; Scrapy paging the same store into a JSON-lines file (one item per product) the same
   way (the next page after this one), and with every page requested up front.
2. Ingest ceiling on PostgreSQL: psycopg ``COPY … FROM STDIN`` of the same rows (serialised and
   hashed in the loop) into a scratch table shaped like ``raw_records``, against ``commit_batch``
   (``RawRecordStore.insert`` per record) in run_connector's batches of 500.
3. Memory: a subprocess crawls ``--memory-pages`` one-product pages through ``run_connector`` on
   SQLite (a code connector, cursor moved every page); its RSS at start, 10%, 50% and 100% of the
   pages, its peak (``ru_maxrss`` and ``VmHWM``), and the time and RSS after 1,000, 10,000, 10%
   and 50% of the pages (how cost grows with pages). "Flat": RSS at the end within 10% of RSS
   after 10,000 pages (after 10% on a shorter crawl). It runs first, while this process is small:
   on Linux a child's ``ru_maxrss`` also counts the parent image it was started from.

Rows 1 and 2 alternate within each of ``--repeat`` repetitions; the run of median wall time of
each row is shown.

The page server runs in its own process; PostgreSQL is 127.0.0.1:5432 (user postgres), where the
run creates and drops a scratch database ``ri_bench_<pid>``. A missed target prints a cProfile of
the missed path on a quarter of the pages (``--profile``: always; ``--quick``: only then). Logs
are rendered at info into /dev/null. On 2 vCPUs ``--quick`` (20 pages, 1,000 memory pages, 3
repetitions, no automatic profile) takes under a minute, the default run (200 pages, 50,000 memory
pages) about 10.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import hashlib
import json
import os
import pstats
import re
import resource
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.crawl_server import SHOPIFY_LIMIT, product

REPO = Path(__file__).resolve().parents[1]
SHOP_HOST = "shop.bench.test"
SMALL_HOST = "small.bench.test"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"
BATCH = 500  # run_connector's default batch size
TARGET_VS_SCRAPY = 2.0  # issue 21
TARGET_VS_COPY = 0.7  # issue 21
TARGET_RSS_MB = 300.0
FLAT_GROWTH = 0.10  # "flat": RSS at the end within 10% of RSS at 10,000 pages (or at 10%)
POLICY = {
    "defaults": {
        "min_interval_ms": 0,
        "concurrency": 64,
        "max_retries": 0,
        "allow_private_network": True,
        "engines": ["api"],
    }
}


@dataclass(slots=True)
class Row:
    """One measured line of the table."""

    name: str
    wall: float
    cpu: float | None
    pages: int
    rows: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pages_s(self) -> float:
        return self.pages / self.wall

    @property
    def rows_s(self) -> float:
        return self.rows / self.wall


# --- processes ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int, shop_pages: int, small_pages: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(  # noqa: S603 - our own module
        [sys.executable, "-m", "bench.crawl_server", str(port), str(shop_pages), str(small_pages)],
        cwd=REPO,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit("the benchmark page server exited at start-up")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return server
        except OSError:
            time.sleep(0.05)
    server.kill()
    raise SystemExit("the benchmark page server did not start")


@contextlib.contextmanager
def scratch_postgres() -> Iterator[str]:
    """A fresh database ``ri_bench_<pid>``, dropped afterwards; yields its SQLAlchemy URL."""
    import psycopg

    name = f"ri_bench_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def settle(db_url: str) -> None:
    """Start every measured PostgreSQL phase from the same quiet server: vacuum and analyse what
    the earlier phases wrote (so autovacuum does not wake up inside the next measurement) and
    checkpoint (so no phase pays for another's full-page writes or a checkpoint forced by WAL)."""
    import psycopg

    dsn = db_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        conn.execute("CHECKPOINT")


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident set now (``VmHWM``: its peak), in MiB, from /proc (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


# --- RareIndex ------------------------------------------------------------------------------------


def _prepare(db_url: str, connector: Any) -> Any:
    from rareindex.storage import make_engine, upgrade
    from rareindex.storage.connector_rows import sync_connectors

    engine = make_engine(db_url)
    upgrade(engine)
    with engine.begin() as conn:
        sync_connectors(conn, [connector])
    return engine


def _stack(port: int) -> Any:
    from rareindex.fetching import build_fetch_stack
    from rareindex.settings import Settings
    from rareindex_connectors.runtime import PolicySet

    address = f"127.0.0.1:{port}"
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, connect_to={SHOP_HOST: address, SMALL_HOST: address}
    )
    return build_fetch_stack(settings, policies=PolicySet.from_mapping(POLICY))


def bench_shop(slug: str = "bench-shop", *, max_pages: int | None = None) -> Any:
    """The shipped Shopify connector configured for the benchmark's store."""
    from rareindex_adapters.stores.shopify import ShopifyStoreConnector

    config: dict[str, Any] = {
        "source": "Bench Shop",
        "base_url": f"http://{SHOP_HOST}",
        "currency": "USD",
        "categories": ["tcg_card"],
    }
    if max_pages is not None:
        config["max_pages"] = max_pages
    return ShopifyStoreConnector.from_config(config, slug=slug)


def crawl_rareindex(
    name: str,
    db_url: str,
    port: int,
    pages: int,
    blob_dir: Path,
    *,
    slug: str = "bench-shop",
    stop_after: int | None = None,
    profiler: cProfile.Profile | None = None,
) -> Row:
    """``run_connector`` over the whole store of ``pages`` pages (or its first ``stop_after``, the
    connector's page cap); times the run alone (not migrations, not setup)."""
    from rareindex.crawl import run_connector
    from rareindex.storage import BlobStore, RawRecordStore

    connector = bench_shop(slug, max_pages=stop_after or pages + 10)
    engine = _prepare(db_url, connector)
    store = RawRecordStore(BlobStore(blob_dir))

    async def go() -> tuple[float, float, Any]:
        stack = _stack(port)
        try:
            if profiler is not None:
                profiler.enable()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            summary = await run_connector(connector, db=engine, stack=stack, store=store)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            if profiler is not None:
                profiler.disable()
            return wall, cpu, summary
        finally:
            await stack.aclose()

    try:
        wall, cpu, summary = asyncio.run(go())
    finally:
        engine.dispose()
    expected = (stop_after or pages) * SHOPIFY_LIMIT
    if summary.status != "succeeded" or summary.records != expected:
        raise SystemExit(
            f"{name}: {summary.status} {summary.failure_reason} {summary.error}: "
            f"{summary.records} of {expected} records"
        )
    return Row(name, wall, cpu, summary.pages, summary.records)


# --- Scrapy ---------------------------------------------------------------------------------------

SCRAPY_SPIDER = textwrap.dedent(
    """
    import json, sys, time
    import scrapy
    from scrapy.crawler import CrawlerProcess

    port, pages, mode, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    concurrency = int(sys.argv[5])
    counts = {"pages": 0, "items": 0}

    def request(page):
        return scrapy.Request(
            f"http://127.0.0.1:{port}/products.json?limit=250&page={page}",
            headers={"Host": "shop.bench.test"}, dont_filter=True, cb_kwargs={"page": page})

    class Shop(scrapy.Spider):
        name = "shop"
        async def start(self):  # Scrapy >= 2.13; older ones call start_requests
            for item in self.start_requests():
                yield item
        def start_requests(self):
            if mode == "paged":
                yield request(1)
            else:  # every page up front, and the empty one after them
                for page in range(1, pages + 2):
                    yield request(page)
        def parse(self, response, page):
            counts["pages"] += 1
            products = json.loads(response.body)["products"]
            for item in products:
                counts["items"] += 1
                yield item
            if products and mode == "paged":
                yield request(page + 1)

    process = CrawlerProcess(settings={
        "LOG_LEVEL": "ERROR", "ROBOTSTXT_OBEY": False, "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency, "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False, "TELNETCONSOLE_ENABLED": False, "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False, "FEEDS": {out: {"format": "jsonlines", "overwrite": True}},
    })
    process.crawl(Shop)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    process.start()
    print(json.dumps({"wall": time.perf_counter() - start_wall,
                      "cpu": time.process_time() - start_cpu, **counts}))
    """
)


def crawl_scrapy(name: str, port: int, pages: int, mode: str, out: Path, concurrency: int) -> Row:
    result = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "-c", SCRAPY_SPIDER, *map(str, (port, pages, mode, out, concurrency))],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    with out.open("rb") as handle:
        written = sum(1 for _ in handle)
    out.unlink()
    expected = pages * SHOPIFY_LIMIT
    if written != expected or data["pages"] != pages + 1:
        raise SystemExit(f"{name}: {data['pages']} pages, {written} of {expected} items written")
    return Row(name, data["wall"], data["cpu"], data["pages"], written)


# --- Ingest ceiling -------------------------------------------------------------------------------

COPY_COLUMNS = (
    "id, fetched_at, connector_id, run_id, external_id, url, payload, engine, http_status, "
    "content_hash, connector_version, parser_version"
)


def ingest_copy(db_url: str, rows: int, table: str = "bench_copy") -> Row:
    """psycopg COPY of ``rows`` products (serialised and hashed in the loop) into a scratch table
    with raw_records' columns, primary key and indexes — no partitions, no dedupe keys."""
    import psycopg
    from psycopg import sql

    from rareindex.heap import frozen_heap
    from rareindex.storage import new_id

    dsn = db_url.replace("postgresql+psycopg://", "postgresql://")
    payloads = [product(i) for i in range(1, rows + 1)]
    now = datetime.now(UTC)
    with psycopg.connect(dsn) as conn:
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (LIKE raw_records INCLUDING DEFAULTS INCLUDING INDEXES)"
            ).format(sql.Identifier(table))
        )
        conn.commit()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        with (
            frozen_heap(),  # as commit_batch runs in a crawl: see ingest_commit_batch
            conn.transaction(),
            conn.cursor() as cur,
            cur.copy(
                sql.SQL("COPY {} ({}) FROM STDIN").format(
                    sql.Identifier(table), sql.SQL(COPY_COLUMNS)
                )
            ) as copy,
        ):
            for payload in payloads:
                doc = json.dumps(payload)
                copy.write_row(
                    (
                        new_id("raw"),
                        now,
                        "bench-copy",
                        None,
                        str(payload["id"]),
                        f"http://{SHOP_HOST}/products/{payload['handle']}",
                        doc,
                        "api",
                        200,
                        hashlib.sha256(doc.encode()).hexdigest(),
                        "1",
                        "1",
                    )
                )
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        count = sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
        stored = conn.execute(count).fetchone()
    if stored is None or stored[0] != rows:
        raise SystemExit(f"COPY stored {stored} of {rows} rows")
    return Row("psycopg COPY FROM STDIN", wall, cpu, 0, rows)


class _Nothing:
    """A connector that is only a row in ``connectors``: the ingest path needs a run to fence."""

    version = "1"
    parser_version = "1"

    def __init__(self, slug: str) -> None:
        from rareindex_connectors import ConnectorMeta

        self.meta = ConnectorMeta(
            id=slug,
            source="Bench Ingest",
            engines=("api",),
            categories=("tcg_card",),
            capabilities=("listing",),
        )


def ingest_commit_batch(
    db_url: str,
    rows: int,
    blob_dir: Path,
    *,
    slug: str = "bench-ingest",
    profiler: cProfile.Profile | None = None,
) -> Row:
    """``commit_batch`` (``RawRecordStore.insert`` per record), batches of run_connector's size,
    with the heap frozen as a crawl's commits run (``run_connector``), the COPY row too: the
    50,000 records held here would otherwise be visited by every full collection of both."""
    from rareindex.heap import frozen_heap
    from rareindex.storage import BlobStore, RawRecordStore
    from rareindex.storage.runs import commit_batch, finish_run, start_run
    from rareindex_connectors.records import RawRecordInput

    engine = _prepare(db_url, _Nothing(slug))
    store = RawRecordStore(BlobStore(blob_dir))
    records = [
        RawRecordInput(
            external_id=str(i),
            url=f"http://{SHOP_HOST}/products/charizard-base-set-{i}",
            payload=product(i),
            http_status=200,
        )
        for i in range(1, rows + 1)
    ]
    run = start_run(engine, connector_id=slug, mode="incremental")
    stored = 0
    if profiler is not None:
        profiler.enable()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with frozen_heap():
        for start in range(0, rows, BATCH):
            result = commit_batch(
                engine,
                run,
                store,
                records[start : start + BATCH],
                connector_version="1",
                parser_version="1",
                cursor={"page": start // BATCH + 2},
                pages=1,
            )
            stored += result.records
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    if profiler is not None:
        profiler.disable()
    finish_run(engine, run, status="succeeded", outcome="complete")
    engine.dispose()
    if stored != rows:
        raise SystemExit(f"commit_batch stored {stored} of {rows} rows")
    return Row("rareindex commit_batch", wall, cpu, 0, rows)


# --- Memory ---------------------------------------------------------------------------------------


class SmallPages:
    """small.bench.test/small.json?page=N: one product a page until an empty page; the cursor
    moves after every page (so every page is its own commit, as in a real paged crawl)."""

    version = "1"
    parser_version = "1"

    def __init__(self, on_page: Callable[[int], None]) -> None:
        from rareindex_connectors import ConnectorMeta

        self.meta = ConnectorMeta(
            id="bench-small",
            source="Bench Small",
            engines=("api",),
            categories=("tcg_card",),
            capabilities=("listing",),
        )
        self.on_page = on_page

    async def crawl(self, ctx: Any) -> AsyncIterator[Any]:
        from rareindex_connectors.records import RawRecordInput

        page = (ctx.cursor or {}).get("next_page", 1)
        while True:
            url = f"http://{SMALL_HOST}/small.json?page={page}"
            result = await ctx.fetch(url, expect="json")
            products = result.json()["products"]
            for item in products:
                yield RawRecordInput(
                    external_id=str(item["id"]), url=url, payload=item, http_status=result.status
                )
            self.on_page(page)
            if not products:
                ctx.set_cursor({"next_page": 1, "complete": True})
                return
            page += 1
            ctx.set_cursor({"next_page": page})

    def normalize(self, raw: Any) -> list[Any]:
        return []

    async def health_check(self, ctx: Any) -> Any:
        from rareindex_connectors import ConnectorHealth

        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: Any) -> list[Any]:
        return []


def memory_child(port: int, pages: int, workdir: Path) -> None:
    """In its own process: crawl ``pages`` small pages on SQLite, print RSS samples as JSON."""
    from rareindex.crawl import run_connector
    from rareindex.storage import BlobStore, RawRecordStore

    marks = {max(1, pages // 10): "10%", max(1, pages // 2): "50%"}
    # fixed page counts too, with the time they were reached: how cost grows with pages
    counts = {n for n in (1_000, 10_000, pages // 10, pages // 2) if 0 < n < pages}
    samples: dict[str, float] = {}
    # page -> (seconds since start, CPU seconds of this process since start, RSS MB)
    at_pages: dict[int, tuple[float, float, float]] = {}
    began, cpu_began = time.perf_counter(), time.process_time()

    def on_page(page: int) -> None:
        if page in marks:
            samples[marks[page]] = rss_mb()
        if page in counts:
            at_pages[page] = (
                time.perf_counter() - began,
                time.process_time() - cpu_began,
                rss_mb(),
            )

    connector = SmallPages(on_page)
    engine = _prepare(f"sqlite:///{workdir / 'memory.db'}", connector)
    store = RawRecordStore(BlobStore(workdir / "blobs"))

    async def go() -> Any:
        stack = _stack(port)
        nonlocal began, cpu_began
        try:
            samples["start"] = rss_mb()
            began, cpu_began = time.perf_counter(), time.process_time()
            return await run_connector(connector, db=engine, stack=stack, store=store)
        finally:
            await stack.aclose()

    wall0 = time.perf_counter()
    summary = asyncio.run(go())
    wall = time.perf_counter() - wall0
    samples["100%"] = rss_mb()
    at_pages[pages] = (
        time.perf_counter() - began,
        time.process_time() - cpu_began,
        samples["100%"],
    )
    engine.dispose()
    # ru_maxrss (KiB on Linux) also covers the parent's memory image this process was started
    # from (Linux carries the pre-exec high-water mark over): the parent runs this first, while it
    # is small. VmHWM is this process's own peak.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ids_mb = (sys.getsizeof(summary.raw_ids) + sum(map(sys.getsizeof, summary.raw_ids))) / 2**20
    print(
        json.dumps(
            {
                "status": summary.status,
                "error": summary.error,
                "pages": summary.pages,
                "records": summary.records,
                "wall": wall,
                "rss": samples,
                "at_pages": sorted((page, *values) for page, values in at_pages.items()),
                "peak": peak,
                "hwm": rss_mb("VmHWM"),
                "raw_ids": len(summary.raw_ids),
                "raw_ids_mb": ids_mb,
            }
        )
    )


def crawl_memory(port: int, pages: int, workdir: Path) -> dict[str, Any]:
    result = subprocess.run(  # noqa: S603 - our interpreter, our module
        [sys.executable, "-m", "bench.crawl", "--memory-child", *map(str, (port, pages, workdir))],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    if data["status"] != "succeeded" or data["records"] != pages:
        raise SystemExit(f"memory crawl: {data}")
    return data


# --- Profiles -------------------------------------------------------------------------------------


def _where(filename: str) -> str:
    """A short name for a profiled function's home: package, stdlib module or built-in."""
    if filename == "~":
        return "built-in"
    if filename.startswith("<"):  # code generated at run time: "<sqlalchemy generated …>"
        return re.sub(r"\W.*", "", filename[1:]) or "generated"
    path = filename.replace(os.sep, "/")
    for marker in ("/site-packages/", "/packages/rareindex/", "/packages/connectors/"):
        if marker in path:
            return path.split(marker, 1)[1].split("/", 1)[0].removesuffix(".py")
    match = re.search(r"/lib/python3\.\d+/([^/]+)", path)
    if match:
        return "stdlib " + match.group(1).removesuffix(".py")
    return Path(path).name


def _label(key: tuple[str, int, str]) -> str:
    filename, line, func = key
    if filename == "~":
        return func
    path = filename.replace(os.sep, "/")
    for marker in ("/site-packages/", "/packages/rareindex/", "/packages/connectors/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    else:
        path = re.sub(r".*/lib/python3\.\d+/", "", path)
    return f"{path}:{line} {func}"


def print_profile(title: str, profiler: cProfile.Profile) -> None:
    entries: dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
    entries = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(value[2] for value in entries.values()) or 1.0
    # cProfile's default timer is the wall clock: time spent waiting for the database server
    # shows up as the own time of the client function that waits (psycopg's ``wait``).
    print(f"\nprofile: {title} — {total:.2f} s profiled (cProfile, wall clock)")
    by_home: dict[str, float] = defaultdict(float)
    for key, value in entries.items():
        by_home[_where(key[0])] += value[2]
    homes = sorted(by_home.items(), key=lambda kv: kv[1], reverse=True)
    shares = [f"{home} {t / total:.0%}" for home, t in homes if t / total >= 0.01]
    print("  own time by package: " + ", ".join(shares))
    print(f"  {'own ms':>8}{'share':>7}{'calls':>9}  top 10 functions by own time")
    top = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)[:10]
    for key, (_cc, calls, own, _cum, _callers) in top:
        print(f"  {own * 1000:>8.0f}{own / total:>7.1%}{calls:>9}  {_label(key)}")
    ours = [
        (key, value)
        for key, value in entries.items()
        if _where(key[0]) in {"rareindex", "rareindex_connectors"}
    ]
    print(f"  {'cum ms':>8}{'share':>7}{'calls':>9}  top 10 RareIndex functions by inclusive time")
    for key, (_cc, calls, _own, cum, _callers) in sorted(
        ours, key=lambda kv: kv[1][3], reverse=True
    )[:10]:
        print(f"  {cum * 1000:>8.0f}{cum / total:>7.1%}{calls:>9}  {_label(key)}")


# --- Main -----------------------------------------------------------------------------------------


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def median(runs: list[Row]) -> Row:
    """The run of median wall time (the lower middle one of an even count)."""
    return sorted(runs, key=lambda row: row.wall)[(len(runs) - 1) // 2]


def main() -> None:
    from bench.common import quiet_logs, spread

    # As a process entry point would: info and above, rendered (into /dev/null: the tables stay
    # readable; the cost of logging stays in the measurement).
    quiet_logs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer pages: under a minute")
    parser.add_argument("--pages", type=int, help="store pages of 250 products (default 200)")
    parser.add_argument("--memory-pages", type=int, help="small pages (default 50,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the median is shown")
    parser.add_argument("--concurrency", type=int, default=16, help="Scrapy up front")
    parser.add_argument("--profile", action="store_true", help="profile even when targets are met")
    parser.add_argument("--memory-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        port, pages, workdir = args.memory_child
        memory_child(int(port), int(pages), Path(workdir))
        return
    pages = args.pages or (20 if args.quick else 200)
    memory_pages = args.memory_pages or (1_000 if args.quick else 50_000)
    repeat = max(1, args.repeat)
    rows = pages * SHOPIFY_LIMIT
    profile_pages = max(1, pages // 4)  # the cost is per row: a quarter of the pages shows it
    began = time.perf_counter()
    port = free_port()
    server = start_server(port, pages, memory_pages)
    crawls: list[Row] = []
    ingest: list[Row] = []
    spreads: dict[str, float] = {}
    profiles: list[tuple[str, cProfile.Profile]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="ri-bench-") as tmp, scratch_postgres() as pg:
            work = Path(tmp)
            # First, while this process is small: the child's ru_maxrss includes our image.
            parent_mb = rss_mb()
            memory = crawl_memory(port, memory_pages, work)
            sqlite = f"sqlite:///{work / 'crawl.db'}"
            runs: dict[str, list[Row]] = defaultdict(list)
            for k in range(repeat):
                slug = f"bench-shop-{k}"
                runs["paged"].append(
                    crawl_scrapy("scrapy → JSON lines, paged", port, pages, "paged", work / "a", 1)
                )
                runs["upfront"].append(
                    crawl_scrapy(
                        f"scrapy → JSON lines, {args.concurrency} concurrent",
                        port,
                        pages,
                        "upfront",
                        work / "b",
                        args.concurrency,
                    )
                )
                runs["sqlite"].append(
                    crawl_rareindex(
                        "rareindex → SQLite", sqlite, port, pages, work / "b1", slug=slug
                    )
                )
                settle(pg)
                runs["pg"].append(
                    crawl_rareindex(
                        "rareindex → PostgreSQL", pg, port, pages, work / "b2", slug=slug
                    )
                )
                settle(pg)
                runs["copy"].append(ingest_copy(pg, rows, table=f"bench_copy_{k}"))
                settle(pg)
                runs["commit"].append(
                    ingest_commit_batch(pg, rows, work / "b3", slug=f"bench-ingest-{k}")
                )
            crawls = [median(runs[key]) for key in ("paged", "upfront", "sqlite", "pg")]
            ingest = [median(runs[key]) for key in ("copy", "commit")]
            spreads = {key: spread([row.wall for row in rows_]) for key, rows_ in runs.items()}
            scrapy_rate = crawls[0].pages_s
            vs_scrapy = crawls[3].pages_s / scrapy_rate
            vs_copy = ingest[1].rows_s / ingest[0].rows_s
            rss = memory["rss"]
            # flat: from 10,000 pages (10% of a shorter crawl) to the end
            at_pages = {int(p): (t, cpu, mb) for p, t, cpu, mb in memory["at_pages"]}
            flat_from = 10_000 if 10_000 in at_pages else max(1, memory_pages // 10)
            flat_base = at_pages[flat_from][2] if flat_from in at_pages else rss["10%"]
            growth = rss["100%"] - flat_base
            memory_ok = growth <= FLAT_GROWTH * flat_base and memory["peak"] < TARGET_RSS_MB
            # --quick is a smoke run: its profiles only on request
            auto = not args.quick
            if args.profile or (auto and vs_scrapy < TARGET_VS_SCRAPY):
                profiler = cProfile.Profile()
                crawl_rareindex(
                    "profile",
                    pg,
                    port,
                    pages,
                    work / "b4",
                    slug="bench-shop-profile",
                    stop_after=profile_pages,
                    profiler=profiler,
                )
                profiles.append((f"run_connector → PostgreSQL, {profile_pages} pages", profiler))
            if args.profile or (auto and vs_copy < TARGET_VS_COPY):
                profiler = cProfile.Profile()
                profile_rows = profile_pages * SHOPIFY_LIMIT
                ingest_commit_batch(
                    pg, profile_rows, work / "b5", slug="bench-ingest-profile", profiler=profiler
                )
                profiles.append((f"commit_batch, {profile_rows:,} rows on PostgreSQL", profiler))
    finally:
        server.terminate()
        server.wait(timeout=10)

    from bench.common import machine

    runs_note = (
        f"median of {repeat} alternating runs"
        if repeat > 1
        else "1 run each (spread run to run ~25%)"
    )
    print(
        "\ncrawl benchmark (fetch → parse → persist), loopback, page server in its own process; "
        f"{runs_note}\n{machine()}"
    )
    print(
        f"store: {pages} pages × {SHOPIFY_LIMIT} products (~1 KB JSON each) + the empty last "
        f"page = {pages + 1} requests, {rows:,} records"
    )
    print(
        f"{'crawl':<36}{'pages/s':>9}{'records/s':>11}{'CPU ms/page':>13}{'spread':>8}"
        f"{'vs Scrapy':>11}"
    )
    for key, row in zip(("paged", "upfront", "sqlite", "pg"), crawls, strict=True):
        cpu = f"{row.cpu * 1000 / row.pages:.1f}" if row.cpu is not None else "-"
        print(
            f"{row.name:<36}{row.pages_s:>9.1f}{row.rows_s:>11,.0f}{cpu:>13}"
            f"{spreads[key]:>8.0%}{row.pages_s / scrapy_rate:>10.2f}x"
        )
    title = f"ingest, PostgreSQL, {rows:,} rows"
    print(f"\n{title:<36}{'rows/s':>9}{'CPU µs/row':>11}{'spread':>10}{'vs COPY':>11}")
    for key, row in zip(("copy", "commit"), ingest, strict=True):
        cpu = f"{row.cpu * 1e6 / row.rows:.0f}" if row.cpu is not None else "-"
        print(
            f"{row.name:<36}{row.rows_s:>9,.0f}{cpu:>11}{spreads[key]:>10.0%}"
            f"{row.rows_s / ingest[0].rows_s:>10.2f}x"
        )
    print("spread: (slowest - fastest) / median wall time of the repetitions")
    print(
        f"\nmemory: run_connector → SQLite in a subprocess, {memory['pages']:,} requests "
        f"({memory_pages:,} pages × 1 product + the empty one), "
        f"{memory['pages'] / memory['wall']:.0f} pages/s"
    )
    print(
        f"RSS MB at start {rss['start']:.0f}, 10% {rss['10%']:.0f}, 50% {rss['50%']:.0f}, "
        f"100% {rss['100%']:.0f}; peak: ru_maxrss {memory['peak']:.0f}, VmHWM "
        f"{memory['hwm']:.0f} (parent at spawn {parent_mb:.0f})"
    )
    # CPU ms/page (the crawler process only; the page server is another) is what load on a
    # shared machine disturbs least: if cost grew with pages, it would grow here.
    print(
        f"{'after pages':>13}{'seconds':>9}{'pages/s since last':>20}"
        f"{'CPU ms/page since last':>24}{'RSS MB':>8}"
    )
    last_page, last_t, last_cpu = 0, 0.0, 0.0
    for page, (t, cpu, mb) in sorted(at_pages.items()):
        segment = (page - last_page) / (t - last_t) if t > last_t else float("nan")
        cpu_ms = (cpu - last_cpu) * 1000 / (page - last_page)
        print(f"{page:>13,}{t:>9.1f}{segment:>20.0f}{cpu_ms:>24.2f}{mb:>8.0f}")
        last_page, last_t, last_cpu = page, t, cpu
    per_k = growth * 1024 / max(1, memory["records"] - flat_from) * 1000
    print(
        f"growth {flat_from:,} pages → end: {growth:+.1f} MB ({per_k:+.0f} KB per 1,000 "
        f"records); RunSummary.raw_ids holds {memory['raw_ids']:,} ids = "
        f"{memory['raw_ids_mb']:.1f} MB"
    )
    print("\ntargets")
    print(
        f"  rareindex → PostgreSQL vs Scrapy (paged)  ≥ {TARGET_VS_SCRAPY:.1f}x   "
        f"measured {vs_scrapy:.2f}x   {_verdict(vs_scrapy >= TARGET_VS_SCRAPY)}"
    )
    print(
        f"  commit_batch vs COPY                      ≥ {TARGET_VS_COPY:.1f}x   "
        f"measured {vs_copy:.2f}x   {_verdict(vs_copy >= TARGET_VS_COPY)}"
    )
    print(
        f"  memory: flat ({flat_from:,} pages → end ≤ +{FLAT_GROWTH:.0%}), peak < "
        f"{TARGET_RSS_MB:.0f} MB   measured {growth / flat_base:+.1%}, peak "
        f"{memory['peak']:.0f} MB   "
        f"{_verdict(memory_ok)}"
    )
    for title, profiler in profiles:
        print_profile(title, profiler)
    print(f"\nelapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
