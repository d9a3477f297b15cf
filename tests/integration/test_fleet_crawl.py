"""Fleet mode end to end: one scheduler and two worker processes on Redis and PostgreSQL crawl
the fake web's stores and end with the same raw-record set as an embedded crawl, while per-host
limits hold across both workers; the workers' normalize and resolve actors then build the same
index (normalized records, decisions, listings) as the embedded pipeline; both processes stop
gracefully on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

from sqlalchemy import Engine, func, select

from rareindex.cli.crawl_cmd import crawl_connectors
from rareindex.pipeline import process as run_pipeline
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, make_engine, upgrade
from rareindex.storage.catalog_store import import_catalog
from rareindex.storage.normalized_store import pending_count, raw_ids_in_scope
from rareindex.storage.schema import connector_runs, listings, normalized_records, raw_records
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.catalog import world_catalog
from tests.integration.test_fetch_politeness import GAP_TOLERANCE_S
from tests.subprocess_env import start_module, subprocess_env

STORES = ("shopify/cards-shop.toml", "woocommerce/comics-woo.toml", "woocommerce/coins-woo.toml")


def _connectors_dir(tmp_path: Path) -> Path:
    root = tmp_path / "connectors"
    for relative in STORES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / "connectors" / relative, root / relative)
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", root / "domains.json")
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", root / "domains.d")
    return root


def _raw_set(db: Engine) -> set[tuple[str, str, str]]:
    with db.connect() as conn:
        rows = conn.execute(
            select(
                raw_records.c.connector_id, raw_records.c.external_id, raw_records.c.content_hash
            )
        )
        return {tuple(r) for r in rows}  # type: ignore[misc]


def _succeeded(db: Engine) -> set[str]:
    with db.connect() as conn:
        return set(
            conn.execute(
                select(connector_runs.c.connector_id).where(connector_runs.c.status == "succeeded")
            ).scalars()
        )


def _index(db: Engine) -> tuple[set[tuple[object, ...]], set[tuple[object, ...]]]:
    """What the pipeline made, without per-database values (raw ids, times)."""
    with db.connect() as conn:
        records = {
            (r.connector_id, r.kind, json.dumps(r.record, sort_keys=True), r.status,
             r.match_method, r.asset_id, r.variant_id)
            for r in conn.execute(select(normalized_records))
        }  # fmt: skip
        offers = {
            (r.id, r.asset_id, r.variant_id, r.price, r.currency, r.available)
            for r in conn.execute(select(listings))
        }
    return records, offers


def _settled(db: Engine) -> bool:
    with db.connect() as conn:
        raw = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
        normalized = conn.execute(
            select(func.count(func.distinct(normalized_records.c.raw_id)))
        ).scalar_one()
        return raw > 0 and raw == normalized and pending_count(conn) == 0


def test_scheduler_and_two_workers_match_embedded(
    redis_url: str, pg_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    connectors_dir = _connectors_dir(tmp_path)
    web = FakeWeb()
    with serve_asgi(web.app) as base:
        port = urlsplit(base).port
        connect_to = {h: f"127.0.0.1:{port}" for h in FAKE_HOSTS}

        # Embedded baseline: SQLite, in-process, the same connectors and pages.
        sqlite = make_engine(f"sqlite:///{tmp_path / 'embedded.db'}")
        upgrade(sqlite)
        embedded = Settings(
            _env_file=None,
            connectors_dir=connectors_dir,  # type: ignore[call-arg]
            data_dir=tmp_path / "embedded",
            connect_to=connect_to,
        )
        asyncio.run(crawl_connectors(embedded, sqlite, show_progress=False))
        expected = _raw_set(sqlite)
        assert len(expected) > 1000
        import_catalog(sqlite, world_catalog(7))
        with sqlite.connect() as conn:
            raw_ids = raw_ids_in_scope(conn)
        registry = load_registry(connectors_dir)
        run_pipeline(sqlite, registry, raw_ids, blobs=BlobStore(tmp_path / "embedded" / "blobs"))
        expected_index = _index(sqlite)
        assert len(expected_index[0]) > 1000
        web.logs.clear()

        # Fleet: PostgreSQL + Redis, one scheduler, two workers, all separate processes.
        upgrade(pg_engine)
        import_catalog(pg_engine, world_catalog(7))
        broker_url = f"{redis_url.rsplit('/', 1)[0]}/{secrets.randbelow(8) + 8}"
        env = subprocess_env(
            {
                "RI_DATABASE_URL": pg_url,
                "RI_BROKER_URL": broker_url,
                "RI_CONNECTORS_DIR": str(connectors_dir),
                "RI_DATA_DIR": str(tmp_path / "fleet"),
                "RI_CONNECT_TO": json.dumps(connect_to),
                "RI_LOG_LEVEL": "warning",
            }
        )
        import redis

        redis.Redis.from_url(broker_url).flushdb()

        def start(*args: str) -> subprocess.Popen[str]:
            return start_module("workers", *args, env=env)

        processes = [
            start("worker", "--threads", "2"),
            start("worker", "--threads", "2"),
            start("scheduler", "--interval", "1"),
        ]
        try:
            deadline = time.monotonic() + 90
            while _succeeded(pg_engine) != {"cards-shop", "comics-woo", "coins-woo"}:
                assert time.monotonic() < deadline, "the fleet did not finish in 90 s"
                assert all(p.poll() is None for p in processes), "a fleet process died"
                time.sleep(0.5)
            deadline = time.monotonic() + 90
            while not _settled(pg_engine):  # the normalize and resolve actors
                assert time.monotonic() < deadline, "the fleet did not build the index in 90 s"
                assert all(p.poll() is None for p in processes), "a fleet process died"
                time.sleep(0.5)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            outputs = [p.communicate(timeout=60) for p in processes]
        assert [p.returncode for p in processes] == [0, 0, 0], outputs
        assert all("stopped" in out for out, _ in outputs)

    assert _raw_set(pg_engine) == expected
    assert _index(pg_engine) == expected_index
    for host in ("cards-shop.fake.test", "comics-woo.fake.test", "coins-woo.fake.test"):
        log = web.log(host)
        assert log.requests > 0 and log.max_in_flight <= 4  # the *.fake.test policy
        gap = log.min_gap()
        assert gap is None or gap >= 0.020 - GAP_TOLERANCE_S
