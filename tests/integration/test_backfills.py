"""Backfill campaigns on SQLite and PostgreSQL: the state machine, slices that page the fake web's
Shopify store to exactly its products, percent from a WooCommerce store's total pages, pause and
resume, cancel, failures, the scheduler's continuation, the CLI — and a crawler process killed
with SIGKILL mid-slice whose run is taken over by a new process, ending with no gap and no
duplicate."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import Engine, func, insert, select

from rareindex.backfill import (
    BackfillError,
    CampaignResult,
    SliceResult,
    backfill_status,
    cancel,
    pause,
    resume,
    run_backfill_slice,
    run_campaign,
    start_backfill,
)
from rareindex.crawl import run_queued
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.backfills import MAX_RETRIES, sweep_finished
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.queue import due_connectors, enqueue_run
from rareindex.storage.runs import connector_cursor
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_connectors import Connector, ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.shopify_data import shop_data
from rareindex_fakeweb.sites.woo_data import woo_data
from tests.cli_helpers import invoke_cli
from tests.subprocess_env import subprocess_env

REGISTRY = load_registry(REPO_ROOT / "connectors")
SHOP_IDS = sorted(str(p["id"]) for p in shop_data(7).products)


@dataclass
class Web:
    """The fake web behind a recorder of (host, path, page) and an optional response delay."""

    port: int
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    delay_s: float = 0.0

    def pages(self, host: str) -> list[str]:
        """The ``page`` parameter of each request to ``host`` (robots.txt, read first, is not a
        page)."""
        return [page for h, path, page in self.requests if h == host and path != "/robots.txt"]


@pytest.fixture(scope="module")
def web() -> Iterator[Web]:
    inner = FakeWeb().app
    recorder = Web(port=0)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode().split(":")[0]
            page = parse_qs(scope["query_string"].decode()).get("page", [""])[0]
            recorder.requests.append((host, scope["path"], page))
            if recorder.delay_s:
                await asyncio.sleep(recorder.delay_s)
        await inner(scope, receive, send)

    with serve_asgi(app) as base:
        recorder.port = urlsplit(base).port or 0
        yield recorder


@pytest.fixture
def settings(web: Web, tmp_path: Path) -> Settings:
    web.requests.clear()
    web.delay_s = 0.0
    return Settings(
        _env_file=None,
        data_dir=tmp_path,
        connect_to={h: f"127.0.0.1:{web.port}" for h in FAKE_HOSTS},
    )


def _setup(db: Engine, *connectors: Connector) -> None:
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, connectors or [REGISTRY.get("cards-shop")])


def _slice(connector: Connector, backfill_id: str, db: Engine, settings: Settings) -> SliceResult:
    async def go() -> SliceResult:
        stack = build_fetch_stack(settings)
        try:
            return await run_backfill_slice(
                connector,
                backfill_id,
                db=db,
                stack=stack,
                store=RawRecordStore(BlobStore(settings.blob_dir)),
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())


def _campaign(
    connector: Connector, backfill_id: str, db: Engine, settings: Settings, **kwargs: Any
) -> CampaignResult:
    async def go() -> CampaignResult:
        stack = build_fetch_stack(settings)
        try:
            return await run_campaign(
                connector,
                backfill_id,
                db=db,
                stack=stack,
                store=RawRecordStore(BlobStore(settings.blob_dir)),
                **kwargs,
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())


def _stored_ids(db: Engine) -> list[str]:
    with db.connect() as conn:
        return sorted(conn.execute(select(raw_records.c.external_id)).scalars())


class Scripted:
    """A connector that fails every run, finds nothing and never moves its cursor, or (dated)
    yields one record, reports how far back it reached and says its sweep is complete."""

    meta = ConnectorMeta(
        id="scripted",
        source="Scripted",
        engines=("api",),
        categories=("tcg_card",),
        capabilities=("listing",),
    )
    version = "1"
    parser_version = "1"

    def __init__(self, *, fail: bool = False, dated: bool = False):
        self.fail = fail
        self.dated = dated

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        if self.fail:
            raise TransientFetchError("network fell over", url="http://scripted.test/")
        if self.dated:
            yield RawRecordInput(external_id="1", url="http://scripted.test/1", payload={"a": 1})
            ctx.set_cursor({"page": 2, "complete": True})
            ctx.progress(pages=1, total_pages=1, reached_date=datetime(2001, 2, 3, tzinfo=UTC))
            return
        nothing: tuple[RawRecordInput, ...] = ()
        for record in nothing:
            yield record

    def normalize(self, raw: Any) -> list[Any]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


# --- the state machine ---------------------------------------------------------------------------


def test_a_campaign_moves_only_as_its_state_machine_allows(any_engine: Engine) -> None:
    _setup(any_engine)
    first = start_backfill(any_engine, "cards-shop", page_budget=3)
    assert backfill_status(any_engine, "cards-shop").id == first
    assert backfill_status(any_engine, first).status == "running"
    with pytest.raises(BackfillError, match=r"already has a running backfill \(bkf_"):
        start_backfill(any_engine, "cards-shop")
    assert pause(any_engine, "cards-shop").status == "paused"
    with pytest.raises(BackfillError, match="is paused already"):
        pause(any_engine, first)
    with pytest.raises(BackfillError, match=r"already has a paused backfill.*resume or cancel"):
        start_backfill(any_engine, "cards-shop")
    assert resume(any_engine, first).status == "running"
    with pytest.raises(BackfillError, match="is running already; nothing to resume"):
        resume(any_engine, first)
    cancelled = cancel(any_engine, first)
    assert (cancelled.status, cancelled.finished_at is not None) == ("cancelled", True)
    with pytest.raises(BackfillError, match="a cancelled campaign cannot be resumed"):
        resume(any_engine, first)
    with pytest.raises(BackfillError, match="is cancelled already; nothing to cancel"):
        cancel(any_engine, first)
    with pytest.raises(BackfillError, match="only a running campaign can be paused"):
        pause(any_engine, first)
    second = start_backfill(
        any_engine, "cards-shop", since=datetime(2020, 1, 1), start_page=2, page_budget=5
    )
    latest = backfill_status(any_engine, "cards-shop")
    assert (latest.id, latest.since, latest.last_cursor) == (
        second,
        datetime(2020, 1, 1, tzinfo=UTC),
        {"page": 2},
    )
    with pytest.raises(BackfillError, match="unknown connector 'nope'"):
        start_backfill(any_engine, "nope")
    with pytest.raises(BackfillError, match="page budget must be at least 1"):
        start_backfill(any_engine, "cards-shop", page_budget=0)
    with pytest.raises(BackfillError, match="no-such has no backfill campaign"):
        backfill_status(any_engine, "no-such")


def test_the_completion_rule_reads_the_connector_s_cursor() -> None:
    assert not sweep_finished(None, None)
    assert not sweep_finished(None, {"collection": 0, "page": 2, "sweeps": 0})
    assert sweep_finished(None, {"collection": 0, "page": 1, "sweeps": 1})
    assert not sweep_finished({"sweeps": 1}, {"collection": 0, "page": 1, "sweeps": 1})
    assert sweep_finished({"page": 4}, {"next_page": 1, "complete": True})


def test_the_scheduler_continues_running_campaigns_only_and_a_slice_reports_back(
    any_engine: Engine, settings: Settings
) -> None:
    _setup(any_engine)
    now = datetime.now(UTC)
    metas = {"cards-shop": REGISTRY.get("cards-shop").meta}
    with any_engine.begin() as conn:  # an incremental crawl just ran: only backfills are due
        conn.execute(
            insert(connector_runs).values(
                id="run_recent",
                connector_id="cards-shop",
                mode="incremental",
                status="succeeded",
                started_at=now,
                finished_at=now,
            )
        )

    def due() -> list[tuple[str, str | None]]:
        with any_engine.connect() as conn:
            plan = due_connectors(conn, now, metas, env={})
        return [(d.mode, d.backfill_id) for d in plan.due]

    assert due() == []
    backfill_id = start_backfill(any_engine, "cards-shop", page_budget=1)
    assert due() == [("backfill", backfill_id)]
    with any_engine.begin() as conn:
        queued = enqueue_run(conn, "cards-shop", "backfill", backfill_id)
    pause(any_engine, backfill_id)  # the queued slice is cancelled with it
    assert due() == []
    with any_engine.connect() as conn:
        row = conn.execute(select(connector_runs).where(connector_runs.c.id == queued)).one()
    assert (row.status, row.failure_reason) == ("cancelled", "cancelled")
    assert asyncio.run(run_queued(str(queued), db=any_engine, settings=settings)) is None

    resume(any_engine, backfill_id)
    with any_engine.begin() as conn:
        (wanted,) = due_connectors(conn, now, metas, env={}).due
        run_id = enqueue_run(conn, wanted.connector_id, wanted.mode, wanted.backfill_id)
    summary = asyncio.run(run_queued(str(run_id), db=any_engine, settings=settings))
    assert summary is not None and (summary.status, summary.records) == ("succeeded", 250)
    after = backfill_status(any_engine, backfill_id)  # the page budget and the accounting apply
    assert (after.pages_processed, after.items_processed, after.last_cursor) == (
        1,
        250,
        {"collection": 0, "page": 2, "sweeps": 0},
    )
    cancel(any_engine, backfill_id)
    assert due() == []


# --- slices --------------------------------------------------------------------------------------


def test_slices_page_the_shopify_store_to_exactly_its_products(
    any_engine: Engine, settings: Settings, web: Web
) -> None:
    connector = REGISTRY.get("cards-shop")
    _setup(any_engine, connector)
    backfill_id = start_backfill(any_engine, "cards-shop", page_budget=1)
    seen = []
    for _ in range(10):
        result = _slice(connector, backfill_id, any_engine, settings)
        after = result.backfill
        seen.append((after.status, after.pages_processed, after.items_processed, after.last_cursor))
        if after.status != "running":
            break
    assert seen == [
        ("running", 1, 250, {"collection": 0, "page": 2, "sweeps": 0}),
        ("running", 2, 500, {"collection": 0, "page": 3, "sweeps": 0}),
        ("running", 3, 656, {"collection": 0, "page": 4, "sweeps": 0}),
        ("completed", 4, 656, {"collection": 0, "page": 1, "sweeps": 1}),  # page 4 is empty
    ]
    done = backfill_status(any_engine, backfill_id)
    assert (done.percent, done.errors, done.total_pages) == (100.0, 0, None)  # Shopify: no total
    assert done.finished_at is not None
    assert _stored_ids(any_engine) == SHOP_IDS
    assert connector_cursor(any_engine, "cards-shop") is None  # incremental crawls keep theirs
    with any_engine.connect() as conn:
        runs = conn.execute(select(connector_runs.c.mode, connector_runs.c.status)).all()
    assert [tuple(r) for r in runs] == [("backfill", "succeeded")] * 4
    assert web.pages("cards-shop.fake.test") == ["1", "2", "3", "4"]  # each page once
    with pytest.raises(BackfillError, match="is completed; only a running campaign gets slices"):
        _slice(connector, backfill_id, any_engine, settings)


def test_percent_comes_from_the_connector_s_total_pages(
    any_engine: Engine, settings: Settings
) -> None:
    connector = REGISTRY.get("comics-woo")  # 320 products, 100 a page: X-WP-TotalPages 4
    store = woo_data(7, "comics-woo.fake.test")
    records = len(store.external_ids)  # each variation of a variable product is its own record
    _setup(any_engine, connector)
    backfill_id = start_backfill(any_engine, "comics-woo", page_budget=1)
    first = _slice(connector, backfill_id, any_engine, settings).backfill
    assert (first.total_pages, first.percent, first.status) == (4, 25.0, "running")
    result = _campaign(connector, backfill_id, any_engine, settings)
    assert (result.slices, result.backfill.status, result.backfill.percent) == (3, "completed", 100)
    assert result.backfill.items_processed == records == len(_stored_ids(any_engine)) == 524


def test_pause_between_slices_then_resume_fetches_every_page_once(
    any_engine: Engine, settings: Settings, web: Web
) -> None:
    connector = REGISTRY.get("cards-shop")
    _setup(any_engine, connector)
    backfill_id = start_backfill(any_engine, "cards-shop", page_budget=1)
    slices: list[SliceResult] = []
    paused = _campaign(
        connector,
        backfill_id,
        any_engine,
        settings,
        should_stop=lambda: len(slices) >= 2,  # an operator's Ctrl-C after the second slice
        on_slice=slices.append,
    )
    assert (paused.slices, paused.backfill.status, paused.backfill.items_processed) == (
        2,
        "paused",
        500,
    )
    with pytest.raises(BackfillError, match="is paused; only a running campaign gets slices"):
        _slice(connector, backfill_id, any_engine, settings)
    assert _campaign(connector, backfill_id, any_engine, settings).slices == 0  # still paused
    resume(any_engine, "cards-shop")
    done = _campaign(connector, backfill_id, any_engine, settings)
    assert (done.slices, done.backfill.status) == (2, "completed")
    assert _stored_ids(any_engine) == SHOP_IDS
    assert web.pages("cards-shop.fake.test") == ["1", "2", "3", "4"]


def test_cancel_stops_the_campaign_and_keeps_what_it_stored(
    any_engine: Engine, settings: Settings
) -> None:
    connector = REGISTRY.get("cards-shop")
    _setup(any_engine, connector)
    backfill_id = start_backfill(any_engine, "cards-shop", page_budget=1)
    _slice(connector, backfill_id, any_engine, settings)
    cancel(any_engine, backfill_id)
    stopped = _campaign(connector, backfill_id, any_engine, settings)
    assert (stopped.slices, stopped.backfill.status) == (0, "cancelled")
    with pytest.raises(BackfillError, match="is cancelled"):
        _slice(connector, backfill_id, any_engine, settings)
    assert len(_stored_ids(any_engine)) == 250


def test_failed_slices_count_errors_and_fail_the_campaign_until_resumed(
    any_engine: Engine, settings: Settings
) -> None:
    failing = Scripted(fail=True)
    _setup(any_engine, failing)
    backfill_id = start_backfill(any_engine, "scripted", page_budget=1)
    first = _campaign(failing, backfill_id, any_engine, settings)  # stops at the failed slice
    assert first.failed is not None and first.failed.failure_reason == "transient"
    assert (first.slices, first.backfill.status, first.backfill.errors) == (1, "running", 1)
    assert first.backfill.last_error == "transient: TransientFetchError: network fell over"
    for _ in range(MAX_RETRIES - 1):
        after = _slice(failing, backfill_id, any_engine, settings).backfill
    assert (after.status, after.errors, after.retries) == ("failed", MAX_RETRIES, MAX_RETRIES)
    assert after.finished_at is not None
    resumed = resume(any_engine, backfill_id)
    assert (resumed.status, resumed.retries, resumed.errors) == ("running", 0, MAX_RETRIES)
    # A slice that finds no new page (the cursor did not move) completes the campaign.
    empty = _slice(Scripted(), backfill_id, any_engine, settings).backfill
    assert (empty.status, empty.retries, empty.percent) == ("completed", 0, 100.0)


def test_reached_date_and_total_pages_reach_the_campaign_and_complete_true_ends_it(
    any_engine: Engine, settings: Settings
) -> None:
    dated = Scripted(dated=True)
    _setup(any_engine, dated)
    backfill_id = start_backfill(any_engine, "scripted", page_budget=5)
    done = _slice(dated, backfill_id, any_engine, settings).backfill
    assert (done.status, done.total_pages, done.reached_date, done.items_processed) == (
        "completed",
        1,
        datetime(2001, 2, 3, tzinfo=UTC),
        1,
    )


# --- the CLI -------------------------------------------------------------------------------------


def _cli_env(db: Engine, tmp_path: Path) -> dict[str, str]:
    return {
        "RI_DATABASE_URL": db.url.render_as_string(hide_password=False),
        "RI_DATA_DIR": str(tmp_path),
        "RI_LOG_LEVEL": "warning",
    }


def test_cli_status_table_and_one_line_errors(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine)
    backfill_id = start_backfill(any_engine, "cards-shop", page_budget=7)
    pause(any_engine, backfill_id)
    env = _cli_env(any_engine, tmp_path)
    shown = invoke_cli("backfill", "status", "cards-shop", env=env)
    assert shown.returncode == 0, shown.stderr
    for name, value in (
        ("campaign", backfill_id),
        ("connector", "cards-shop"),
        ("status", "paused"),
        ("pages processed", "0"),
        ("items processed", "0"),
        ("total pages", "unknown"),
        ("percent", "-"),
        ("page budget", "7 a slice"),
        ("errors", r"0 \(0 in a row\)"),
        ("last cursor", "null"),
    ):
        assert re.search(rf"{name}\s*│\s*{value}\s*│", shown.stdout), (name, shown.stdout)
    refused = invoke_cli("backfill", "start", "cards-shop", "--page-budget", "3", env=env)
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"error: cards-shop already has a paused backfill ({backfill_id}); resume or cancel it "
        "first (`rareindex backfill status cards-shop`)"
    ]
    bad = invoke_cli("backfill", "start", "cards-shop", "--since", "last week", env=env)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: --since 'last week' is not a date; use YYYY-MM-DD"
    ]


# --- crawler processes: Ctrl-C and kill -9 -------------------------------------------------------


def _connectors_dir(tmp_path: Path, page_size: int) -> Path:
    root = tmp_path / "connectors"
    (root / "shopify").mkdir(parents=True)
    toml = (REPO_ROOT / "connectors/shopify/cards-shop.toml").read_text()
    (root / "shopify/cards-shop.toml").write_text(f"{toml}page_size = {page_size}\n")
    shutil.copy(REPO_ROOT / "connectors/domains.json", root / "domains.json")
    shutil.copytree(REPO_ROOT / "connectors/domains.d", root / "domains.d")
    return root


def _crawler_env(db: Engine, tmp_path: Path, web: Web, *, page_size: int) -> dict[str, str]:
    """A crawler process's environment: this database, cards-shop paged ``page_size`` at a time
    on the test's fake web, and a 2 s run lease (a dead crawler's run is claimable 2 s after its
    last commit)."""
    return {
        **_cli_env(db, tmp_path),
        "RI_CONNECTORS_DIR": str(_connectors_dir(tmp_path, page_size)),
        "RI_CONNECT_TO": json.dumps({h: f"127.0.0.1:{web.port}" for h in FAKE_HOSTS}),
        "RI_RUN_LEASE_SECONDS": "2",
    }


def _crawler(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    """``rareindex backfill ARGS`` in a process of its own, its output going to ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "workers", "backfill", *args],
            env=env,
            cwd=REPO_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def test_ctrl_c_pauses_the_cli_campaign_after_the_current_slice(
    sqlite_engine: Engine, tmp_path: Path, web: Web
) -> None:
    upgrade(sqlite_engine)
    web.requests.clear()
    web.delay_s = 0.1
    env = subprocess_env(_crawler_env(sqlite_engine, tmp_path, web, page_size=50))
    process = _crawler(
        env, tmp_path / "cli.log", "start", "cards-shop", "--page-budget", "1", "--run"
    )
    deadline = time.monotonic() + 30
    while not _stored_ids(sqlite_engine):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=20) == 0
    output = (tmp_path / "cli.log").read_text()
    assert "pausing after the current slice" in output and "paused at" in output
    paused = backfill_status(sqlite_engine, "cards-shop")
    stored = len(_stored_ids(sqlite_engine))
    assert paused.status == "paused" and 0 < stored == paused.items_processed < len(SHOP_IDS)
    with sqlite_engine.connect() as conn:  # the slice in flight finished; none is left running
        statuses = set(conn.execute(select(connector_runs.c.status)).scalars())
    assert statuses == {"succeeded"}


def test_a_crawler_killed_mid_slice_is_taken_over_with_no_gap_and_no_duplicate(
    any_engine: Engine, tmp_path: Path, web: Web
) -> None:
    """SIGKILL a `backfill start --run` process while a slice is in flight (after its first
    commit); `backfill run` in a new process waits for the dead run's short lease to lapse, takes
    the run over from the committed cursor and finishes with exactly the store's products."""
    upgrade(any_engine)
    page_size, pages = 50, -(-len(SHOP_IDS) // 50)  # 14 pages, then an empty 15th
    env = subprocess_env(_crawler_env(any_engine, tmp_path, web, page_size=page_size))
    web.requests.clear()
    web.delay_s = 0.15  # every page takes 150 ms to answer: a slice is in flight most of the time

    first = _crawler(
        env, tmp_path / "first.log", "start", "cards-shop", "--page-budget", "1", "--run"
    )
    deadline = time.monotonic() + 30
    while True:
        assert first.poll() is None, (tmp_path / "first.log").read_text()
        assert time.monotonic() < deadline, "no commit within 30 s"
        with any_engine.connect() as conn:
            stored = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
            live = conn.execute(
                select(connector_runs.c.id, connector_runs.c.started_at).where(
                    connector_runs.c.status == "running"
                )
            ).first()
        # After a commit, before the end, and within 75 ms of a slice's start: its page (150 ms
        # to answer) cannot have been committed yet when the signal lands.
        young = live is not None and datetime.now(UTC) - live.started_at < timedelta(
            milliseconds=75
        )
        if 0 < stored < len(SHOP_IDS) and young:
            os.kill(first.pid, signal.SIGKILL)
            break
        time.sleep(0.01)
    assert first.wait(timeout=10) == -signal.SIGKILL
    assert live is not None
    with any_engine.connect() as conn:
        dead = conn.execute(select(connector_runs).where(connector_runs.c.id == live.id)).one()
    assert (dead.status, dead.lease_token) == ("running", 1)  # killed holding its lease
    committed = _stored_ids(any_engine)
    assert 0 < len(committed) < len(SHOP_IDS) and len(committed) % page_size == 0

    second = _crawler(env, tmp_path / "second.log", "run", "cards-shop")
    assert second.wait(timeout=45) == 0, (tmp_path / "second.log").read_text()
    assert "completed" in (tmp_path / "second.log").read_text()

    stored_ids = _stored_ids(any_engine)
    assert len(stored_ids) == len(set(stored_ids)) == len(SHOP_IDS)  # no duplicate row
    assert stored_ids == SHOP_IDS  # no gap
    with any_engine.connect() as conn:
        taken = conn.execute(select(connector_runs).where(connector_runs.c.id == live.id)).one()
    assert (taken.status, taken.lease_token) == ("succeeded", 2)  # the same run, taken over
    done = backfill_status(any_engine, "cards-shop")
    assert (done.status, done.items_processed, done.errors) == ("completed", len(SHOP_IDS), 0)
    requested = web.pages("cards-shop.fake.test")
    assert sorted(set(requested), key=int) == [str(n) for n in range(1, pages + 2)]
    assert len(requested) <= pages + 2  # at most the page in flight at the kill, twice
