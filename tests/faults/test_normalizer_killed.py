"""Fault: the normalizer process is killed with SIGKILL in the middle of a batch.

The fake web's three stores are crawled once into database A (1,056 raw records), and the same raw
rows are copied into database B. B gets a clean ``replay``. On A, ``rareindex replay`` runs in a
process of its own and is sent SIGKILL once its first batch is committed, at a moment PostgreSQL
shows a later batch's transaction open with rows already written (``pg_stat_activity.backend_xid``
set); then ``rareindex replay`` runs again to its end.

What must hold: the batch in flight is rolled back whole (the normalized raw records are a whole
number of 200-record batches, and the field-presence counters match exactly the rows stored), and
after the second replay A holds the same ``normalized_records`` (ids, records, decisions), the same
``connector_field_stats`` and the same listings as B — nothing lost, nothing counted twice.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, insert, select, text

from rareindex.cli.crawl_cmd import crawl_connectors
from rareindex.normalizer import BATCH
from rareindex.pipeline import replay
from rareindex.quality import count_fields
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, make_engine, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import (
    connector_field_stats,
    listings,
    normalized_records,
    raw_records,
)
from rareindex_connectors.records import parse_normalized
from rareindex_fakeweb import FAKE_HOSTS
from tests.conftest import PG_ADMIN_URL
from tests.subprocess_env import subprocess_env

from .conftest import GUARD_DIR, FaultyWeb, connectors_dir, wait_until

APP = f"ri-faults-replay-{os.getpid()}"  # unique: other sessions share the server
VOLATILE = {"created_at", "updated_at", "resolved_at", "first_seen_at", "last_seen_at"}


@pytest.fixture
def second_db(pg_url: str) -> Iterator[str]:
    """Another empty database on the session's PostgreSQL server, dropped afterwards."""
    name = f"ri_faults_{os.getpid()}_{secrets.token_hex(3)}"
    admin = make_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def rows(db: Engine, table: Any, *order: Any) -> list[dict[str, Any]]:
    with db.connect() as conn:
        found = conn.execute(select(table).order_by(*order)).mappings().all()
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in found]


def in_flight(db: Engine) -> tuple[bool, bool]:
    """(the replay holds a transaction, that transaction has written something)."""
    with db.connect() as conn:
        found = conn.execute(
            text(
                "select backend_xid is not null from pg_stat_activity "
                "where application_name = :app and xact_start is not null"
            ),
            {"app": APP},
        ).first()
    return (found is not None, bool(found and found[0]))


def normalized_raw(db: Engine) -> int:
    with db.connect() as conn:
        query = select(func.count(func.distinct(normalized_records.c.raw_id)))
        return int(conn.execute(query).scalar_one())


def stats_of_stored_rows(db: Engine) -> dict[tuple[Any, ...], tuple[int, int]]:
    """What the field counters must say for the rows stored (each pending row counted once)."""
    expected: dict[tuple[Any, ...], tuple[int, int]] = {}
    with db.connect() as conn:
        stored = conn.execute(
            select(
                normalized_records.c.connector_id,
                normalized_records.c.record,
                raw_records.c.fetched_at,
            )
            .join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
            .where(normalized_records.c.kind != "none")
        ).all()
    by_day: dict[tuple[str, Any], list[Any]] = {}
    for connector_id, record, fetched_at in stored:
        by_day.setdefault((connector_id, fetched_at.date()), []).append(parse_normalized(record))
    for (connector_id, day), records in by_day.items():
        for (kind, name), (present, total) in count_fields(records).items():
            expected[(connector_id, day, kind, name)] = (present, total)
    return expected


def stats(db: Engine) -> dict[tuple[Any, ...], tuple[int, int]]:
    with db.connect() as conn:
        return {
            (r.connector_id, r.day, r.record_kind, r.field): (r.present, r.total)
            for r in conn.execute(select(connector_field_stats))
        }


def replay_process(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "workers", "replay"],
            env=env,
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def test_a_normalizer_killed_mid_batch_loses_and_duplicates_nothing(
    pg_url: str, pg_engine: Engine, second_db: str, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    root = connectors_dir(tmp_path, {"cards-shop": {}, "comics-woo": {}, "coins-woo": {}})
    settings = Settings(
        _env_file=None,
        database_url=pg_url,
        connectors_dir=root,
        data_dir=tmp_path,
        connect_to={h: f"127.0.0.1:{faulty_web.port}" for h in FAKE_HOSTS},
    )
    upgrade(pg_engine)
    summaries = asyncio.run(crawl_connectors(settings, pg_engine, show_progress=False))
    assert [s.status for s in summaries] == ["succeeded"] * 3
    total = sum(s.records for s in summaries)
    assert total > 3 * BATCH

    clean = make_engine(second_db)
    try:
        upgrade(clean)
        registry = load_registry(root)
        with clean.begin() as conn:
            sync_connectors(conn, registry)
            copied = rows(pg_engine, raw_records, raw_records.c.id)
            conn.execute(insert(raw_records), copied)
        replay(clean, registry, blobs=BlobStore(settings.blob_dir))
        expected = (
            rows(clean, normalized_records, normalized_records.c.id),
            stats(clean),
            rows(clean, listings, listings.c.id),
        )
    finally:
        clean.dispose()
    assert len(expected[0]) > total and expected[1] and expected[2]

    env = subprocess_env(
        {
            "RI_DATABASE_URL": f"{pg_url}?application_name={APP}",
            "RI_CONNECTORS_DIR": str(root),
            "RI_DATA_DIR": str(tmp_path),
            "RI_LOG_LEVEL": "warning",
        },
        first=[GUARD_DIR],
    )
    killed = replay_process(env, tmp_path / "killed.log")
    try:
        # Kill after the first batch committed, while a later batch's transaction is open and
        # has written rows not yet committed.
        wait_until(
            lambda: killed.poll() is not None or normalized_raw(pg_engine) >= BATCH,
            timeout=60,
            what="the first batch",
            every=0.005,
        )
        wait_until(
            lambda: killed.poll() is not None or in_flight(pg_engine)[1],
            timeout=60,
            what="the replay to write inside a batch transaction",
            every=0.002,
        )
        assert killed.poll() is None, "the replay finished before it could be killed"
        os.kill(killed.pid, signal.SIGKILL)
    finally:
        if killed.poll() is None:
            killed.kill()
        killed.wait(timeout=10)
    assert killed.returncode == -signal.SIGKILL
    wait_until(lambda: not in_flight(pg_engine)[0], timeout=30, what="PostgreSQL to roll it back")

    done = normalized_raw(pg_engine)
    assert BATCH <= done < total, "the kill did not land in the middle of the replay"
    assert done % BATCH == 0, f"{done} raw records normalized: part of a batch was committed"
    assert stats(pg_engine) == stats_of_stored_rows(pg_engine), "counters and rows disagree"

    again = subprocess.run(
        [sys.executable, "-m", "workers", "replay"],
        env=env,
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"({total - done} normalized anew, {done} already)" in again.stdout, again.stdout

    assert rows(pg_engine, normalized_records, normalized_records.c.id) == expected[0]
    assert stats(pg_engine) == expected[1]
    assert rows(pg_engine, listings, listings.c.id) == expected[2]
