"""Embedded politeness and workflow: two ``rareindex crawl`` processes on one machine share each
host's gate (lock files under RI_DATA_DIR), so together they keep the host's interval — measured
at the host over real sockets; the crawl normalizes and resolves what it stored unless
``--raw-only``; ``rareindex backfill run`` does the same slice by slice."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import structlog
from sqlalchemy import func, select
from typer.testing import CliRunner

from rareindex.cli import app
from rareindex.settings import REPO_ROOT
from rareindex.storage import make_engine, upgrade
from rareindex.storage.schema import connector_runs, normalized_records, raw_records
from rareindex_connectors._gates import GateLimits
from rareindex_connectors._gates.filelock import FileGateBackend
from tests.integration.fetch_helpers import running_fake_web
from tests.integration.test_fetch_politeness import GAP_TOLERANCE_S
from tests.subprocess_env import start_module, subprocess_env

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files

HOST = "cards-shop.fake.test"
INTERVAL_S = 0.4
STORE = (REPO_ROOT / "connectors" / "shopify" / "cards-shop.toml").read_text()


def _connectors(root: Path) -> Path:
    """Two store connectors of one host, and a base policy with a long interval on it."""
    for slug in ("cards-a", "cards-b"):
        path = root / "shopify" / f"{slug}.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(STORE.replace('source = "Cards Shop"', f'source = "Cards {slug}"'))
    policy = json.loads((REPO_ROOT / "connectors" / "domains.json").read_text())
    policy["domains"][HOST] = {"min_interval_ms": int(INTERVAL_S * 1000), "concurrency": 1}
    (root / "domains.json").write_text(json.dumps(policy))
    return root


def _env(tmp_path: Path, base: str) -> dict[str, str]:
    port = urlsplit(base).port
    return subprocess_env(
        {
            "RI_DATA_DIR": str(tmp_path),
            "RI_CONNECTORS_DIR": str(_connectors(tmp_path / "connectors")),
            "RI_CONNECT_TO": json.dumps({HOST: f"127.0.0.1:{port}"}),
            "RI_LOG_LEVEL": "warning",
        }
    )


def test_two_embedded_crawls_of_one_host_keep_its_interval_and_index_what_they_stored(
    tmp_path: Path,
) -> None:
    db = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    upgrade(db)
    with running_fake_web() as (web, base):
        env = _env(tmp_path, base)
        crawls = [
            start_module("workers", "crawl", slug, *extra, env=env)
            for slug, extra in (("cards-a", ()), ("cards-b", ("--raw-only",)))
        ]
        outputs = [crawl.communicate(timeout=90) for crawl in crawls]
    assert [c.returncode for c in crawls] == [0, 0], outputs

    with db.connect() as conn:
        runs = conn.execute(
            select(connector_runs.c.started_at, connector_runs.c.finished_at).where(
                connector_runs.c.status == "succeeded"
            )
        ).all()
        raws = dict(
            conn.execute(
                select(raw_records.c.connector_id, func.count()).group_by(
                    raw_records.c.connector_id
                )
            ).all()
        )
        indexed = dict(
            conn.execute(
                select(normalized_records.c.connector_id, func.count()).group_by(
                    normalized_records.c.connector_id
                )
            ).all()
        )
    db.dispose()
    assert len(runs) == 2
    (a_start, a_end), (b_start, b_end) = runs
    assert a_start < b_end and b_start < a_end, "the two crawls did not overlap: nothing shown"

    log = web.log(HOST)
    assert log.requests >= 8  # at least 4 pages each
    assert log.max_in_flight == 1
    gap = log.min_gap()
    assert gap is not None and gap >= INTERVAL_S - GAP_TOLERANCE_S, sorted(log.starts)

    assert raws["cards-a"] == raws["cards-b"] > 500
    assert indexed.get("cards-a", 0) >= raws["cards-a"]  # normalized (and resolved) here
    assert "cards-b" not in indexed  # --raw-only
    assert "cards-a: indexed: " in outputs[0][0] and "indexed" not in outputs[1][0]


def test_backfill_run_indexes_each_slice_unless_raw_only(tmp_path: Path) -> None:
    db = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    upgrade(db)
    with running_fake_web() as (_, base):
        env = _env(tmp_path, base)
        env["RI_CONNECTORS_DIR"] = str(tmp_path / "fast")
        shutil.copytree(tmp_path / "connectors", tmp_path / "fast")
        (tmp_path / "fast" / "domains.json").write_text(
            (REPO_ROOT / "connectors" / "domains.json").read_text()
        )
        printed = {}
        for slug, extra in (("cards-a", ()), ("cards-b", ("--raw-only",))):
            started = CliRunner().invoke(
                app,
                ["backfill", "start", slug, "--page-budget", "2", "--run", *extra],
                env=env,
            )
            structlog.reset_defaults()  # the CLI logged to the runner's stderr, closed now
            assert started.exit_code == 0, started.output
            printed[slug] = started.stdout
    with db.connect() as conn:
        indexed = dict(
            conn.execute(
                select(normalized_records.c.connector_id, func.count()).group_by(
                    normalized_records.c.connector_id
                )
            ).all()
        )
        raws = dict(
            conn.execute(
                select(raw_records.c.connector_id, func.count()).group_by(
                    raw_records.c.connector_id
                )
            ).all()
        )
    db.dispose()
    assert raws["cards-a"] == raws["cards-b"] > 500
    assert indexed["cards-a"] >= raws["cards-a"] and "cards-b" not in indexed
    assert printed["cards-a"].count("indexed: ") == 2  # one line per slice (2 + 2 pages)
    assert "indexed: " not in printed["cards-b"]


# --- the lock-file backend itself (in this process: two instances are two processes' views) --

LIMITS = GateLimits(
    concurrency=1,
    min_interval_s=0.5,
    budget_per_minute=None,
    budget_per_day=None,
    circuit_failures=2,
    circuit_cooldown_s=10.0,
    lease_s=60.0,
)


def test_lock_file_backends_on_one_directory_share_interval_breaker_and_deferral(
    tmp_path: Path,
) -> None:
    one, two = FileGateBackend(tmp_path / "gates"), FileGateBackend(tmp_path / "gates")
    now = time.time()

    async def scenario() -> None:
        granted = await one.try_acquire("shop.test", LIMITS, now, "t1", probe=False)
        assert granted.action == "grant"
        busy = await two.try_acquire("shop.test", LIMITS, now + 0.01, "t2", probe=False)
        assert (busy.action, busy.reason) == ("wait", "concurrency")  # the other's slot
        await one.release("shop.test", LIMITS, now + 0.1, "t1", "failure")
        spaced = await two.try_acquire("shop.test", LIMITS, now + 0.2, "t2", probe=False)
        assert (spaced.action, spaced.reason) == ("wait", "interval")
        assert spaced.seconds == pytest.approx(0.3, abs=0.05)
        again = await two.try_acquire("shop.test", LIMITS, now + 0.6, "t2", probe=False)
        assert again.action == "grant"
        await two.release("shop.test", LIMITS, now + 0.7, "t2", "failure")
        refused = await one.try_acquire("shop.test", LIMITS, now + 0.8, "t3", probe=False)
        assert (refused.action, refused.reason) == ("refuse", "circuit_open")  # 2 failures

        await two.defer("other.test", time.time() + 30)  # a Retry-After, seen by the other
        state = await one.snapshot("other.test")
        assert state is not None and state.deferred_until > time.time() + 25
        deferred = await one.try_acquire("other.test", LIMITS, time.time(), "t4", probe=False)
        assert (deferred.action, deferred.reason) == ("wait", "retry_after")

        # Forgotten once the host would be idle, as the Redis backend's keys expire: a breaker
        # tripped long ago does not count against a later run.
        assert (await one.try_acquire("old.test", LIMITS, now, "o1", probe=False)).action == "grant"
        await one.release("old.test", LIMITS, now + 0.1, "o1", "failure")  # 1 of 2 failures
        later = now + 3600.0 + 5
        assert (
            await two.try_acquire("old.test", LIMITS, later, "o2", probe=False)
        ).action == "grant"
        await two.release("old.test", LIMITS, later + 0.1, "o2", "failure")  # 1 again, not 2
        after = await two.try_acquire("old.test", LIMITS, later + 1, "o3", probe=False)
        assert after.action == "grant"  # the breaker stayed closed

    asyncio.run(scenario())
    (tmp_path / "gates" / "cut.test.json").write_bytes(b'{"expires_at": 9e99, "sta')
    fresh = asyncio.run(one.try_acquire("cut.test", LIMITS, now, "t6", probe=False))
    assert fresh.action == "grant"  # a write cut short by a crash: the host starts afresh


def test_a_lock_file_holds_exactly_its_state_after_a_shorter_one_overwrites_it(
    tmp_path: Path,
) -> None:
    """The state file is overwritten in place and then cut to the new state's length (not emptied
    first: ext4 flushes a file emptied then rewritten at its close). A shorter state leaves no
    tail of the longer one; a stale tail, as a crash between the two steps would leave, is read
    as no state, and the host starts afresh."""
    gates = FileGateBackend(tmp_path / "gates")
    path = tmp_path / "gates" / "tail.test.json"
    now = time.time()

    async def scenario() -> None:
        await gates.defer("tail.test", now + 30)
        longer = path.read_bytes()[:-1] + b" " * 64 + b"}"  # the same state, written longer
        path.write_bytes(longer)
        await gates.defer("tail.test", now + 31)
        shorter = path.read_bytes()
        assert len(shorter) < len(longer)
        assert json.loads(shorter)  # the whole file is one JSON document: no stale tail
        path.write_bytes(shorter + longer[len(shorter) :])  # a crash between write and cut
        state = await gates.snapshot("tail.test")
        assert state is None or state.deferred_until == 0  # unreadable: starts afresh

    asyncio.run(scenario())
