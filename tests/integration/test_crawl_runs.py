"""Crawl runs end to end over real sockets, on SQLite and PostgreSQL: records and cursor commit
together, re-runs are dupes, a failed run resumes where it stopped, a stale lease cannot commit."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select, update

from rareindex.crawl import run_connector
from rareindex.fetching import FetchStack, build_fetch_stack
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.runs import (
    LeaseLost,
    RunBusy,
    RunNotClaimable,
    commit_batch,
    connector_cursor,
    start_run,
    takeable_run,
)
from rareindex.storage.schema import connector_runs, raw_records
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.records import RawRecordInput
from rareindex_connectors.runtime import PolicySet, SafeResolver
from rareindex_fakeweb import FakeWeb
from tests.integration.fetch_helpers import running_fake_web


class PagedShop:
    """json.fake.test/products.json: 3 pages of 5 products, then an empty page."""

    meta = ConnectorMeta(
        id="paged-shop",
        source="Paged Shop",
        engines=("api",),
        categories=("tcg_card",),
        capabilities=("listing",),
    )
    version = "1"
    parser_version = "1"

    def __init__(self, base: str, *, fail_on_page: int | None = None):
        self.base = base
        self.fail_on_page = fail_on_page

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        page = (ctx.cursor or {}).get("next_page", 1)
        while True:
            if page == self.fail_on_page:
                raise TransientFetchError("network fell over", url="x")
            url = FakeWeb.url(self.base, "json.fake.test", f"/products.json?page={page}")
            products = (await ctx.fetch(url, expect="json")).json()["products"]
            for product in products:
                yield RawRecordInput(external_id=str(product["id"]), url=url, payload=product)
            if not products:
                ctx.set_cursor({"next_page": 1, "complete": True})
                return
            page += 1
            ctx.set_cursor({"next_page": page})

    def normalize(self, raw: Any) -> list[Any]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


@pytest.fixture
def web() -> Iterator[tuple[FakeWeb, str]]:
    with running_fake_web() as running:
        yield running


def _stack() -> FetchStack:
    return build_fetch_stack(
        Settings(_env_file=None),  # type: ignore[call-arg]
        policies=PolicySet.from_mapping(FakeWeb.policy()),
        resolver=SafeResolver(static=FakeWeb.resolver_map()),
    )


def _setup(db: Engine, tmp_path: Path, connector: PagedShop) -> RawRecordStore:
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])
    return RawRecordStore(BlobStore(tmp_path / "blobs"))


def _run(connector: PagedShop, db: Engine, store: RawRecordStore, **kwargs: Any):  # type: ignore[no-untyped-def]
    async def go():  # type: ignore[no-untyped-def]
        stack = _stack()
        try:
            return await run_connector(connector, db=db, stack=stack, store=store, **kwargs)
        finally:
            await stack.aclose()

    return asyncio.run(go())


def _raw_ids(db: Engine) -> list[str]:
    with db.connect() as conn:
        return sorted(conn.execute(select(raw_records.c.external_id)).scalars())


def test_a_run_stores_every_record_and_a_rerun_is_all_dupes(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str]
) -> None:
    connector = PagedShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    first = _run(connector, any_engine, store)
    assert (first.status, first.outcome, first.records, first.dupes) == (
        "succeeded",
        "complete",
        15,
        0,
    )
    assert first.pages == 4 and first.engines["api"]["success"] == 4
    assert connector_cursor(any_engine, "paged-shop") == {"next_page": 1, "complete": True}
    second = _run(connector, any_engine, store)
    assert (second.records, second.dupes) == (0, 15)
    assert len(_raw_ids(any_engine)) == 15
    with any_engine.connect() as conn:
        rows = conn.execute(select(connector_runs).order_by(connector_runs.c.created_at)).all()
    assert [(r.status, r.records, r.dupes, r.pages) for r in rows] == [
        ("succeeded", 15, 0, 4),
        ("succeeded", 0, 15, 4),
    ]


class HeapWatchingShop(PagedShop):
    """Notes, at each record it yields, whether the long-lived heap is frozen."""

    def __init__(self, base: str) -> None:
        super().__init__(base)
        self.frozen: list[bool] = []

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        async for record in super().crawl(ctx):
            self.frozen.append(gc.get_freeze_count() > 0)
            yield record


def test_a_crawl_runs_with_the_long_lived_heap_frozen_and_gives_it_back(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str]
) -> None:
    """The records of a batch live long enough to trigger the collector's full passes over the
    whole heap; the crawl leaves the heap alive at its start out of them (rareindex.heap)."""
    gc.unfreeze()
    connector = HeapWatchingShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    summary = _run(connector, any_engine, store)
    assert (summary.status, summary.records) == ("succeeded", 15)
    assert connector.frozen == [True] * 15
    assert gc.get_freeze_count() == 0


def test_a_failed_run_keeps_what_it_committed_and_the_next_resumes_without_gaps(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str]
) -> None:
    store = _setup(any_engine, tmp_path, PagedShop(web[1]))
    failed = _run(PagedShop(web[1], fail_on_page=3), any_engine, store)
    assert (failed.status, failed.failure_reason, failed.records) == ("failed", "transient", 10)
    assert connector_cursor(any_engine, "paged-shop") == {"next_page": 3}
    web[0].logs.clear()
    resumed = _run(PagedShop(web[1]), any_engine, store)
    assert (resumed.status, resumed.records, resumed.dupes) == ("succeeded", 5, 0)
    assert web[0].log("json.fake.test").page_requests == 2  # pages 3 and 4: no refetch, no skip
    assert len(_raw_ids(any_engine)) == 15 and len(set(_raw_ids(any_engine))) == 15


def test_a_stale_lease_holder_cannot_commit(any_engine: Engine, tmp_path: Path) -> None:
    connector = PagedShop("http://unused:1")
    store = _setup(any_engine, tmp_path, connector)
    stale = start_run(any_engine, connector_id="paged-shop", mode="incremental")
    with any_engine.begin() as conn:  # its worker died: the lease ran out
        conn.execute(
            update(connector_runs).values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    taken_over = start_run(
        any_engine, connector_id="paged-shop", mode="incremental", run_id=stale.id
    )
    assert taken_over.lease_token == stale.lease_token + 1
    record = RawRecordInput(external_id="x", url="http://x/", payload={"a": 1})
    with pytest.raises(LeaseLost):
        commit_batch(
            any_engine,
            stale,
            store,
            [record],
            connector_version="1",
            parser_version="1",
            cursor={"next_page": 99},
        )
    assert connector_cursor(any_engine, "paged-shop") is None
    commit_batch(
        any_engine,
        taken_over,
        store,
        [record],
        connector_version="1",
        parser_version="1",
        cursor={"next_page": 2},
    )
    assert connector_cursor(any_engine, "paged-shop") == {"next_page": 2}
    with any_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(raw_records)).scalar_one() == 1


def test_a_live_run_is_not_claimable_and_a_direct_crawl_waits_its_turn(
    any_engine: Engine, tmp_path: Path
) -> None:
    store = _setup(any_engine, tmp_path, PagedShop("http://unused:1"))
    live = start_run(any_engine, connector_id="paged-shop", mode="incremental")
    with pytest.raises(RunNotClaimable):
        start_run(any_engine, connector_id="paged-shop", mode="incremental", run_id=live.id)
    with pytest.raises(RunBusy, match="already has a crawl queued or running"):
        start_run(any_engine, connector_id="paged-shop", mode="incremental")
    assert store is not None


def test_a_stranded_queued_run_can_be_taken_over_and_its_late_message_finds_it_done(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str]
) -> None:
    """A crawl message stranded in a dead worker leaves its run queued: `rareindex crawl
    --take-over` runs that very run here; the message, delivered late, then claims nothing."""
    from rareindex.storage.queue import enqueue_run

    connector = PagedShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    with any_engine.begin() as conn:
        stranded = enqueue_run(conn, "paged-shop", "incremental")
    assert stranded is not None
    with pytest.raises(RunBusy, match="--take-over"):
        start_run(any_engine, connector_id="paged-shop", mode="incremental")
    assert takeable_run(any_engine, "paged-shop") == (stranded, "incremental")
    done = _run(connector, any_engine, store, run_id=stranded)
    assert (done.run_id, done.status, done.records) == (stranded, "succeeded", 15)
    with pytest.raises(RunNotClaimable):  # the worker that finally gets the message
        start_run(any_engine, connector_id="paged-shop", mode="incremental", run_id=stranded)
    with any_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(connector_runs)).scalar_one() == 1
    assert takeable_run(any_engine, "paged-shop") is None


def test_a_run_under_a_live_lease_is_never_takeable(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine, tmp_path, PagedShop("http://unused:1"))
    live = start_run(any_engine, connector_id="paged-shop", mode="incremental")
    assert takeable_run(any_engine, "paged-shop") is None
    with any_engine.begin() as conn:  # its holder died: the lease runs out
        conn.execute(
            update(connector_runs)
            .where(connector_runs.c.id == live.id)
            .values(lease_expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    assert takeable_run(any_engine, "paged-shop") == (live.id, "incremental")


class SlowShop(PagedShop):
    """Yields one record per page, then waits ``pause`` seconds before the next page, as a crawl
    does behind a slow host or a long ``Retry-After``; ``between`` runs during each wait."""

    def __init__(self, pause: float, between: Any) -> None:
        super().__init__("http://unused:1")
        self.pause, self.between = pause, between

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        page = (ctx.cursor or {}).get("next_page", 1)
        while page <= 3:
            yield RawRecordInput(external_id=str(page), url="http://x/", payload={"page": page})
            page += 1
            ctx.set_cursor({"next_page": page})
            await asyncio.sleep(self.pause)
            self.between()


def test_a_run_slower_than_its_lease_between_commits_keeps_its_lease(
    any_engine: Engine, tmp_path: Path
) -> None:
    """A 1 s lease, 2.5 s between commits: the crawler's heartbeat renews the lease, so nobody
    can take a live run over (without it, the lease lapses and a takeover succeeds)."""
    takeovers: list[str] = []

    def try_take_over() -> None:
        with any_engine.connect() as conn:
            run_id = conn.execute(select(connector_runs.c.id)).scalar_one()
        try:
            start_run(any_engine, connector_id="paged-shop", mode="incremental", run_id=run_id)
            takeovers.append(run_id)
        except RunNotClaimable:
            pass

    connector = SlowShop(2.5, try_take_over)
    store = _setup(any_engine, tmp_path, connector)
    summary = _run(connector, any_engine, store, lease_seconds=1.0)
    assert takeovers == []
    assert (summary.status, summary.records) == ("succeeded", 3)


def test_a_run_taken_over_stops_at_its_next_record_and_commits_nothing_more(
    any_engine: Engine, tmp_path: Path
) -> None:
    """The run is taken over (its token bumped) while the crawl waits: it stops as lease_lost
    and commits nothing more."""

    def bump_token() -> None:
        with any_engine.begin() as conn:
            bumped = connector_runs.c.lease_token + 1
            conn.execute(update(connector_runs).values(lease_token=bumped))

    connector = SlowShop(1.0, bump_token)
    store = _setup(any_engine, tmp_path, connector)
    summary = _run(connector, any_engine, store, lease_seconds=0.9)
    assert (summary.status, summary.failure_reason) == ("failed", "lease_lost")
    # Page 1's record was still waiting for its cursor: the stale holder commits nothing, and the
    # new holder re-fetches it.
    assert _raw_ids(any_engine) == []


def test_records_commit_at_page_boundaries_once_a_batch_is_full(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """3 pages of 5 and a batch of 8: the first commit waits for a page boundary past 8 records
    (pages 1-2 with the cursor after page 2), the last takes the rest with the final cursor."""
    import rareindex.crawl

    commits: list[tuple[int, Any]] = []
    real = rareindex.crawl.commit_batch

    def counting(*args: Any, **kwargs: Any) -> Any:
        commits.append((len(args[3]), kwargs["cursor"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(rareindex.crawl, "commit_batch", counting)
    connector = PagedShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    summary = _run(connector, any_engine, store, batch_size=8, commit_every_s=3600)
    assert (summary.status, summary.records) == ("succeeded", 15)
    assert commits == [(10, {"next_page": 3}), (5, {"next_page": 1, "complete": True})]


class CountingShop(PagedShop):
    """PagedShop counting its fetches (a commit reads the count from the writer thread)."""

    def __init__(self, base: str) -> None:
        super().__init__(base)
        self.fetched = 0

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        fetch = ctx.fetch

        async def counted(url: str, **kwargs: Any) -> Any:
            result = await fetch(url, **kwargs)
            self.fetched += 1
            return result

        ctx.fetch = counted  # type: ignore[method-assign]
        async for record in super().crawl(ctx):
            yield record


def test_the_next_pages_are_fetched_while_a_batch_commits(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commits run beside the fetch loop: the first batch's commit is held until the crawl
    has fetched another page (up to 10 s), and it does; the run still stores every record once,
    with the final cursor, and commits in order. Inline commits fail this: nothing is fetched
    while a commit runs, and the held commit times out."""
    import threading
    import time

    import rareindex.crawl

    connector = CountingShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    real = rareindex.crawl.commit_batch
    seen: list[tuple[Any, bool]] = []  # (cursor, another page fetched while it was held)
    threads: set[str] = set()

    def held(*args: Any, **kwargs: Any) -> Any:
        threads.add(threading.current_thread().name)
        if not seen:  # the first commit: wait for the fetch loop to go on without it
            at_start = connector.fetched
            deadline = time.monotonic() + 10
            while connector.fetched == at_start and time.monotonic() < deadline:
                time.sleep(0.01)
            seen.append((kwargs["cursor"], connector.fetched > at_start))
        else:
            seen.append((kwargs["cursor"], False))
        return real(*args, **kwargs)

    monkeypatch.setattr(rareindex.crawl, "commit_batch", held)
    summary = _run(connector, any_engine, store, batch_size=5, commit_every_s=3600)
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", 15, 0)
    assert seen[0] == ({"next_page": 2}, True)
    assert [cursor for cursor, _ in seen] == [
        {"next_page": 2},
        {"next_page": 3},
        {"next_page": 1, "complete": True},
    ]
    assert threading.current_thread().name not in threads  # every commit on the writer
    stored = _raw_ids(any_engine)
    assert len(stored) == len(set(stored)) == 15
    assert connector_cursor(any_engine, "paged-shop") == {"next_page": 1, "complete": True}


def test_a_commit_that_fails_in_flight_loses_nothing(
    any_engine: Engine, tmp_path: Path, web: tuple[FakeWeb, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer's first commit fails (the database went away for it): the run fails as
    ``database``, its records wait again and go with the next commit, under the cursor that
    covers them; the next run resumes from that cursor with no gap and no duplicate."""
    from sqlalchemy.exc import OperationalError

    import rareindex.crawl

    connector = PagedShop(web[1])
    store = _setup(any_engine, tmp_path, connector)
    real = rareindex.crawl.commit_batch
    calls: list[tuple[int, Any]] = []

    def failing_once(*args: Any, **kwargs: Any) -> Any:
        calls.append((len(args[3]), kwargs["cursor"]))
        if len(calls) == 1:
            raise OperationalError("COMMIT", {}, Exception("server closed the connection"))
        return real(*args, **kwargs)

    monkeypatch.setattr(rareindex.crawl, "commit_batch", failing_once)
    first = _run(connector, any_engine, store, batch_size=5, commit_every_s=3600)
    assert (first.status, first.failure_reason) == ("failed", "database")
    # the failed batch (page 1) went again with what came after it, under the later cursor
    assert calls == [(5, {"next_page": 2}), (10, {"next_page": 3})]
    assert first.records == len(_raw_ids(any_engine)) == 10
    assert connector_cursor(any_engine, "paged-shop") == {"next_page": 3}
    monkeypatch.setattr(rareindex.crawl, "commit_batch", real)
    second = _run(connector, any_engine, store)
    assert second.status == "succeeded"
    assert len(_raw_ids(any_engine)) == 15 and len(set(_raw_ids(any_engine))) == 15


@pytest.mark.parametrize("backfill", [False, True], ids=["incremental", "backfill"])
def test_a_batch_fences_and_moves_its_cursor_in_one_statement_on_postgres(
    any_engine: Engine, tmp_path: Path, backfill: bool
) -> None:
    """On PostgreSQL the fence (lease and counters) and the cursor's move are one statement:
    one round trip less a batch. The cursor still moves only while the lease holds."""
    from sqlalchemy import event

    from rareindex.storage.backfills import create_backfill, load_backfill

    connector = PagedShop("http://unused:1")
    store = _setup(any_engine, tmp_path, connector)
    backfill_id = None
    if backfill:
        with any_engine.begin() as conn:
            backfill_id = create_backfill(conn, "paged-shop").id
    run = start_run(
        any_engine,
        connector_id="paged-shop",
        mode="backfill" if backfill else "incremental",
        backfill_id=backfill_id,
    )
    updates: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        if "UPDATE" in statement:
            updates.append(statement)

    record = RawRecordInput(external_id="x", url="http://x/", payload={"a": 1})
    event.listen(any_engine, "before_cursor_execute", seen)
    try:
        commit_batch(
            any_engine,
            run,
            store,
            [record],
            connector_version="1",
            parser_version="1",
            cursor={"next_page": 2},
            pages=1,
        )
    finally:
        event.remove(any_engine, "before_cursor_execute", seen)
    assert len(updates) == (1 if any_engine.dialect.name == "postgresql" else 2)
    if backfill:
        assert backfill_id is not None
        stored = load_backfill(any_engine, backfill_id)
        assert stored is not None
        assert (stored.last_cursor, stored.pages_processed) == ({"next_page": 2}, 1)
    else:
        assert connector_cursor(any_engine, "paged-shop") == {"next_page": 2}
    with any_engine.connect() as conn:
        counts = conn.execute(
            select(connector_runs.c.pages, connector_runs.c.records, connector_runs.c.cursor_end)
        ).one()
    assert tuple(counts) == (1, 1, {"next_page": 2})
