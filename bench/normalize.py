"""The stages after the crawl on the fake web's raw records: the normalizer and the resolver with
its writers, on SQLite and PostgreSQL, against the connectors' bare ``normalize()`` — every number
measured in this run.

    python -m bench.normalize [--quick] [--repeat 5] [--shopify-pages 200] [--no-postgres]

Setup (not timed): ``crawl_connectors`` crawls every registered connector from the local fake web
once into SQLite (what ``rareindex demo`` does); the same raw records go into PostgreSQL through
``commit_batch``; the fake web's catalog is imported into both. Each repetition then starts from a
fresh copy of those databases (a file copy; ``CREATE DATABASE … TEMPLATE``) and times, in turn:

* the ceiling: each raw record (already in memory) through its connector's ``normalize()``;
* ``process``, the embedded pipeline: per chunk of raw ids, ``normalize_raw`` (load, normalize,
  validate, rule flags, field stats, insert), then ``resolve_pending`` until nothing is pending
  (resolver index build, matching, the observation writers, price anomalies), the records the
  chunk stored handed over as validated; its two stages are also shown apart (their seconds
  within the pass);
* ``replay`` afterwards: every record resolved again, nothing new to normalize.

A second table does the same on a Shopify crawl of ``--shopify-pages`` pages of 250 products
(``bench.crawl``'s store, crawled once by the shipped Shopify connector; default 200 pages: 50,000
raw records, one repetition; no catalog is imported, so its rows measure normalizing, resolving
and writing without a match).

Every timed pass starts with the title caches empty (``cold_caches``), as a new worker would.

Rates are raw records per second, so every row compares with the ceiling ("vs bare"); records/s
counts the normalized records each stage stored or resolved. Peer and stages alternate per
repetition and the table shows medians. ``--quick`` crawls four small connectors (about 450 raw
records, 3 repetitions, and an 8-page Shopify case; about 40 s on 2 vCPUs); the default run
crawls all seven (about 1,900 raw records, 5 repetitions) and the 50,000-record Shopify case
(about 6 minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import (
    StatementCounter,
    console,
    machine,
    median,
    quiet_logs,
    scratch_postgres,
    spread,
)

SEED = 7  # the fake web's seed (the demo's)
# --quick: the small connectors (listings with some empty products, population reports, news);
# not the two with hundreds of pages (auction lots, market sales) nor the 656-product card shop.
QUICK_SLUGS = ("coins-woo", "comics-woo", "grading-registry", "hobby-news")


@dataclass(slots=True)
class Stage:
    """One timed row, over repetitions."""

    name: str
    backend: str
    raw: int = 0
    records: list[int] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    """This process's CPU seconds (``time.process_time``), where the row measures them."""

    def add(
        self, wall: float, records: int, statements: int | None = None, cpu: float | None = None
    ) -> None:
        self.walls.append(wall)
        self.records.append(records)
        if statements is not None:
            self.statements.append(statements)
        if cpu is not None:
            self.cpus.append(cpu)

    @property
    def wall(self) -> float:
        return median(self.walls)

    @property
    def raw_s(self) -> float:
        return self.raw / self.wall if self.wall else float("nan")

    @property
    def records_s(self) -> float:
        return median(self.records) / self.wall if self.wall else float("nan")


# --- setup ----------------------------------------------------------------------------------------


def crawl_fake_web(root: Path, slugs: Sequence[str] | None) -> tuple[float, Path]:
    """Crawl the fake web into ``root/crawled.db`` as the demo does; the seconds it took and the
    blob directory (the settings' ``blob_dir`` under ``root``)."""
    from rareindex.cli import fake_web_settings
    from rareindex.cli.crawl_cmd import crawl_connectors
    from rareindex.settings import Settings
    from rareindex.storage import make_engine, upgrade

    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=root, database_url=f"sqlite:///{root / 'crawled.db'}"
    )
    engine = make_engine(settings.database_url_or_default())
    upgrade(engine)
    began = time.perf_counter()
    with fake_web_settings(settings) as (local, _):
        summaries = asyncio.run(
            crawl_connectors(local, engine, list(slugs) if slugs else None, show_progress=False)
        )
    wall = time.perf_counter() - began
    engine.dispose()
    failed = [(s.connector_id, s.status, s.error) for s in summaries if s.status != "succeeded"]
    if failed:
        raise SystemExit(f"the fake-web crawl failed: {failed}")
    return wall, settings.blob_dir


def load_raw(db_url: str, blobs: Path) -> list[Any]:
    """Every stored raw record (with its snapshot), oldest first."""
    from rareindex.storage import BlobStore, RawRecordStore, make_engine
    from rareindex.storage.normalized_store import raw_ids_in_scope

    engine = make_engine(db_url)
    store = RawRecordStore(BlobStore(blobs))
    with engine.connect() as conn:
        raws = [store.get(conn, raw_id) for raw_id in raw_ids_in_scope(conn)]
    engine.dispose()
    return raws


def copy_raw(raws: Sequence[Any], db_url: str, blobs: Path, registry: Any) -> None:
    """The same raw records into an empty database, through ``commit_batch`` (one run per
    connector, batches of 500)."""
    from rareindex.storage import BlobStore, RawRecordStore, make_engine, upgrade
    from rareindex.storage.connector_rows import sync_connectors
    from rareindex.storage.runs import commit_batch, finish_run, start_run
    from rareindex_connectors.records import RawRecordInput

    engine = make_engine(db_url)
    upgrade(engine)
    with engine.begin() as conn:
        sync_connectors(conn, registry)
    store = RawRecordStore(BlobStore(blobs))
    fields = set(RawRecordInput.model_fields)
    by_connector: dict[str, list[Any]] = defaultdict(list)
    for raw in raws:
        by_connector[raw.connector_id].append(RawRecordInput(**raw.model_dump(include=fields)))
    stored = 0
    for connector_id, inputs in by_connector.items():
        connector = registry.get(connector_id)
        run = start_run(engine, connector_id=connector_id, mode="incremental")
        for start in range(0, len(inputs), 500):
            result = commit_batch(
                engine,
                run,
                store,
                inputs[start : start + 500],
                connector_version=connector.version,
                parser_version=connector.parser_version,
                cursor=None,
            )
            stored += result.records
        finish_run(engine, run, status="succeeded", outcome="complete")
    engine.dispose()
    if stored != len(raws):
        raise SystemExit(f"copying raw records stored {stored} of {len(raws)}")


def import_world_catalog(db_url: str) -> int:
    from rareindex.storage import make_engine
    from rareindex.storage.catalog_store import import_catalog
    from rareindex_fakeweb.sites.catalog import world_catalog

    engine = make_engine(db_url)
    imported = import_catalog(engine, world_catalog(SEED))
    engine.dispose()
    return int(imported.assets)


def sqlite_copy(source: Path, target: Path) -> str:
    """A consistent copy of a SQLite database (WAL included), as a URL."""
    target.unlink(missing_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    return f"sqlite:///{target}"


# --- the measured passes --------------------------------------------------------------------------


def cold_caches() -> None:
    """Forget the titles read so far (``lift_grading``, the resolver's tokenizer): every timed pass
    starts as a fresh process would, not from the previous repetition's answers."""
    from rareindex.resolution.text import fold, tokenize
    from rareindex_adapters import lift_grading

    # The adapters' Grading models (one per distinct grade, 116 in the fake web) and their card
    # grades' readings stay built: private caches of a few hundred grades, not of titles; building
    # the models costs about 0.2 ms of a pass (1.63 us each, timeit, 17:56 UTC).
    for cached in (lift_grading, tokenize, fold):
        cached.cache_clear()


def bare_normalize(registry: Any, raws: Sequence[Any]) -> tuple[float, int, float]:
    """Each raw record through its connector's ``normalize()``, nothing else: the ceiling.
    Returns its wall seconds, the records it produced and its CPU seconds."""
    from rareindex.heap import frozen_heap

    connectors = {c.meta.id: c for c in registry}
    cold_caches()
    # The garbage collector as the pipeline has it (``process`` freezes the long-lived heap), so
    # the ratio compares the work, not the collector's passes.
    with frozen_heap():
        began, cpu = time.perf_counter(), time.process_time()
        produced = 0
        for raw in raws:
            try:
                produced += len(connectors[raw.connector_id].normalize(raw))
            except Exception:  # noqa: S112 - a ParseError is a result here, as in the normalizer
                continue
        return time.perf_counter() - began, produced, time.process_time() - cpu


def pipeline_pass(
    db_url: str, registry: Any, blobs: Path, stages: dict[str, Stage], raw_count: int
) -> None:
    """``process`` (normalize, then resolve, with the validated records handed over), then
    ``replay``, on one fresh database; adds to ``stages``."""
    from rareindex.pipeline import process, replay
    from rareindex.storage import BlobStore, make_engine
    from rareindex.storage.normalized_store import raw_ids_in_scope

    engine = make_engine(db_url)
    store = BlobStore(blobs)
    with engine.connect() as conn:
        raw_ids = raw_ids_in_scope(conn)
    if len(raw_ids) != raw_count:
        raise SystemExit(f"{db_url}: {len(raw_ids)} raw records, expected {raw_count}")
    sent = StatementCounter(engine)
    cold_caches()
    began, cpu = time.perf_counter(), time.process_time()
    result = process(engine, registry, raw_ids, blobs=store)
    t_res, s_res, c_res = time.perf_counter(), sent.count, time.process_time()
    replayed = replay(engine, registry, blobs=store)
    t_rep, s_rep, c_rep = time.perf_counter(), sent.count, time.process_time()
    engine.dispose()
    normalized, resolved = result.normalized, result.resolved
    if normalized.raw != raw_count or resolved.resolved == 0:
        raise SystemExit(f"{db_url}: normalized {normalized.raw} of {raw_count}, resolved 0")
    if replayed.normalized.raw != 0 or replayed.resolved.resolved != resolved.resolved:
        raise SystemExit(
            f"{db_url}: replay normalized {replayed.normalized.raw} (expected 0) and resolved "
            f"{replayed.resolved.resolved} (expected {resolved.resolved})"
        )
    # The stages interleave (a chunk of raw ids at a time): each row is its share of the pass.
    stages["normalize"].add(result.normalize_seconds, normalized.records + normalized.failed)
    stages["resolve"].add(result.resolve_seconds, resolved.resolved)
    stages["pipeline"].add(t_res - began, resolved.resolved, s_res, c_res - cpu)
    stages["replay"].add(t_rep - t_res, replayed.resolved.resolved, s_rep - s_res, c_rep - c_res)


# --- main -----------------------------------------------------------------------------------------


def measure(
    name: str,
    registry: Any,
    crawled: Path,
    blobs: Path,
    pg: Any,
    backends: Sequence[str],
    repeat: int,
    import_catalog: Any = None,
) -> tuple[Stage, list[Stage], int]:
    """The ceiling and the pipeline's stages over the raw records of ``crawled`` (SQLite), on
    each backend, ``repeat`` alternating repetitions. Returns the ceiling, the stages and the
    number of raw records."""
    raws = load_raw(f"sqlite:///{crawled}", blobs)
    if import_catalog is not None:
        import_catalog(f"sqlite:///{crawled}")
    if "PostgreSQL" in backends:
        template = pg.create(f"{name}_template")
        copy_raw(raws, template, blobs, registry)
        if import_catalog is not None:
            import_catalog(template)
    bare = Stage("connector.normalize() loop, in memory (ceiling)", "-", len(raws))
    stages = {
        backend: {
            key: Stage(label, backend, len(raws))
            for key, label in (
                ("normalize", "normalize_raw"),
                ("resolve", "resolve_pending (resolver + writers)"),
                ("pipeline", "normalize + resolve"),
                ("replay", "replay (re-resolve all)"),
            )
        }
        for backend in backends
    }
    bare_normalize(registry, raws)  # warm-up: first calls import and compile lazily
    for k in range(repeat):
        for backend in backends:  # the ceiling before each backend's pass: interleaved
            wall, produced, cpu = bare_normalize(registry, raws)
            bare.add(wall, produced, cpu=cpu)
            if backend == "SQLite":
                url = sqlite_copy(crawled, crawled.with_name(f"{name}-rep{k}.db"))
            else:
                url = pg.create(f"{name}_rep{k}", template=f"{name}_template")
            pipeline_pass(url, registry, blobs, stages[backend], len(raws))
            if backend == "PostgreSQL":
                pg.drop(f"{name}_rep{k}")
            else:
                crawled.with_name(f"{name}-rep{k}.db").unlink()
    rows = [s for backend in backends for s in stages[backend].values()]
    return bare, rows, len(raws)


def crawl_shopify(root: Path, pages: int) -> tuple[Any, Path, Path, float]:
    """``bench.crawl``'s Shopify store (250 products a page, one raw record each) crawled once
    into SQLite by the shipped Shopify connector (not timed): its registry, database, blobs."""
    from bench.crawl import bench_shop, crawl_rareindex, free_port, start_server
    from rareindex.registry import Registry

    port = free_port()
    server = start_server(port, pages, 0)
    began = time.perf_counter()
    try:
        crawled, blobs = root / "shopify.db", root / "shopify-blobs"
        crawl_rareindex("shopify", f"sqlite:///{crawled}", port, pages, blobs, slug="bench-shop")
    finally:
        server.terminate()
        server.wait()
    connector = bench_shop("bench-shop")
    return (
        Registry(connectors={"bench-shop": connector}),
        crawled,
        blobs,
        time.perf_counter() - began,
    )


def ceiling_by_cpu(bare: Stage) -> str:
    """The ceiling's rate by this process's CPU time: unlike the wall clock, not lengthened by
    what else the machine runs (its passes' spread says how much that was)."""
    cpus = sorted(bare.cpus)
    return (
        f"ceiling by CPU time: {bare.raw / median(cpus):,.0f} raw rec/s (median of {len(cpus)} "
        f"passes; {cpus[0]:.3f}-{cpus[-1]:.3f} s of CPU, {bare.wall:.3f} s median wall)"
    )


def table_of(title: str, bare: Stage, rows: list[Stage]) -> Any:
    from rich.table import Table

    table = Table(title=title, caption=machine())
    for column in ("stage", "backend", "raw records", "seconds", "raw rec/s", "records/s"):
        table.add_column(column, justify="left" if column in ("stage", "backend") else "right")
    table.add_column("CPU s", justify="right")
    table.add_column("SQL/raw rec", justify="right")
    table.add_column("spread", justify="right")
    table.add_column("vs bare", justify="right")
    for row in [bare, *rows]:
        table.add_row(
            row.name,
            row.backend,
            f"{row.raw:,}",
            f"{row.wall:.3f}",
            f"{row.raw_s:,.0f}",
            f"{row.records_s:,.0f}",
            f"{median(row.cpus):.3f}" if row.cpus else "-",
            f"{median(row.statements) / row.raw:.2f}" if row.statements else "-",
            f"{spread(row.walls):.0%}",
            f"{row.raw_s / bare.raw_s:.3f}x",
        )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four small connectors only")
    parser.add_argument("--repeat", type=int, help="repetitions (default 5, --quick 3)")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument(
        "--shopify-pages",
        type=int,
        help="pages of 250 products in the Shopify case (default 200: 50,000; --quick 8; 0: skip)",
    )
    args = parser.parse_args()
    quiet_logs()
    from rareindex.registry import load_registry
    from rareindex.settings import REPO_ROOT

    began = time.perf_counter()
    registry = load_registry(REPO_ROOT / "connectors")
    slugs = QUICK_SLUGS if args.quick else None
    repeat = max(1, args.repeat or (3 if args.quick else 5))
    shop_pages = (
        args.shopify_pages if args.shopify_pages is not None else (8 if args.quick else 200)
    )
    backends = ["SQLite"] if args.no_postgres else ["SQLite", "PostgreSQL"]
    out = console()
    with tempfile.TemporaryDirectory(prefix="ri-bench-normalize-") as tmp, scratch_postgres() as pg:
        root = Path(tmp)
        crawl_s, blobs = crawl_fake_web(root, slugs)
        crawled = root / "crawled.db"
        connectors = {raw.connector_id for raw in load_raw(f"sqlite:///{crawled}", blobs)}
        bare, rows, raw_count = measure(
            "fakeweb", registry, crawled, blobs, pg, backends, repeat, import_world_catalog
        )
        out.print(
            table_of(
                f"normalize → resolve on the fake web's raw records: {raw_count:,} raw records "
                f"from {len(connectors)} connectors (crawled in {crawl_s:.0f} s, not timed), the "
                f"fake web's catalog; median of {repeat} alternating repetitions",
                bare,
                rows,
            )
        )
        out.print(ceiling_by_cpu(bare))
        if shop_pages > 0:
            shop_registry, shop_db, shop_blobs, shop_s = crawl_shopify(root, shop_pages)
            shop_repeat = 1 if shop_pages >= 100 else min(repeat, 3)
            bare, rows, raw_count = measure(
                "shopify", shop_registry, shop_db, shop_blobs, pg, backends, shop_repeat
            )
            out.print(
                table_of(
                    f"normalize → resolve on a {raw_count:,}-record Shopify crawl (bench.crawl's "
                    f"store, crawled in {shop_s:.0f} s, not timed; no catalog: every title is "
                    f"resolved and stays unmatched); median of {shop_repeat}",
                    bare,
                    rows,
                )
            )
            out.print(ceiling_by_cpu(bare))
    out.print(
        "raw rec/s: raw records ÷ the stage's seconds; records/s: normalized records the stage "
        "stored (normalize) or resolved; CPU s: this process's CPU seconds (median), not the "
        "database server's; SQL/raw rec: statements sent per raw record (an "
        "executemany counts once); vs bare: raw rec/s ÷ the ceiling's (higher is better, 1.0 = "
        "no overhead)"
    )
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
