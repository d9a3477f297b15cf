"""``rareindex backfill``: start, run, watch, pause, resume and cancel backfill campaigns.

``ID`` is a connector id (its latest campaign) or a campaign id (``bkf_…``).

Example:
    $ rareindex backfill start cards-shop --page-budget 10 --run
    $ rareindex backfill status cards-shop
    $ rareindex backfill pause cards-shop
    $ rareindex backfill resume cards-shop --run
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from types import FrameType, TracebackType
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from rareindex_connectors import Progress as Reported

from ..backfill import (
    Backfill,
    BackfillError,
    CampaignResult,
    SliceBusy,
    SliceResult,
    backfill_status,
    cancel,
    pause,
    resume,
    run_campaign,
    start_backfill,
)
from ..crawl import RunSummary
from ..errors import ConfigError
from ..fetching import build_fetch_stack
from ..registry import load_registry
from ..settings import Settings
from ..storage import BlobStore, Engine, RawRecordStore, current_revision
from ..storage.connector_rows import sync_connectors
from ._common import console, database, errors, settings_of
from ._fakeweb import fake_web_settings
from .crawl_cmd import RawOnlyOption, index_stored

__all__ = ["app", "status_table"]

app = typer.Typer(help="Resumable backfill campaigns.", no_args_is_help=True)

IdArg = Annotated[str, typer.Argument(help="A connector id (its latest campaign) or a bkf_… id.")]
FakeWebOpt = Annotated[
    bool, typer.Option("--fake-web", help="Serve the local fake web and point at it.")
]
RunOpt = Annotated[
    bool, typer.Option("--run/--no-run", help="Run the slices here until done, paused or failed.")
]


def _db(settings: Settings) -> Engine:
    db = database(settings)
    if current_revision(db) is None:
        raise ConfigError("the database is empty; run `rareindex db upgrade` first")
    return db


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"--since {value!r} is not a date; use YYYY-MM-DD") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _when(value: datetime | None) -> str:
    return f"{value:%Y-%m-%d %H:%M:%S} UTC" if value else "-"


def status_table(backfill: Backfill) -> Table:
    """A campaign, one field a row."""
    table = Table(show_header=False)
    table.add_column(style="bold")
    table.add_column()
    total = backfill.total_pages
    rows = (
        ("campaign", backfill.id),
        ("connector", backfill.connector_id),
        ("status", backfill.status),
        ("pages processed", str(backfill.pages_processed)),
        ("items processed", str(backfill.items_processed)),
        ("total pages", str(total) if total is not None else "unknown"),
        ("percent", f"{backfill.percent:.1f}%" if backfill.percent is not None else "-"),
        ("reached date", _when(backfill.reached_date)),
        ("page budget", f"{backfill.page_budget} a slice"),
        ("since", _when(backfill.since)),
        ("errors", f"{backfill.errors} ({backfill.retries} in a row)"),
        ("last error", backfill.last_error or "-"),
        ("last cursor", json.dumps(backfill.last_cursor, sort_keys=True)),
        ("started", _when(backfill.created_at)),
        ("finished", _when(backfill.finished_at)),
    )
    for name, value in rows:
        table.add_row(name, value)
    return table


class _PageRate(ProgressColumn):
    """Pages a second, as rich estimates it."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f} pages/s" if speed else "- pages/s", style="progress.data.speed")


class _GracefulStop:
    """Ctrl-C (or SIGTERM) once: pause after the current slice. Twice: stop at once (the slice's
    lease lapses and the next `backfill run` takes it over from the committed cursor)."""

    signals = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> _GracefulStop:
        if threading.current_thread() is threading.main_thread():
            for sig in self.signals:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        errors.print("pausing after the current slice… (Ctrl-C again to stop at once)")

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)  # type: ignore[arg-type]


@dataclass(slots=True)
class _Live:
    """The bar's numbers: pages the campaign had committed, pages seen since, the total."""

    base: int
    pages: int
    total: int | None


def _run_here(
    settings: Settings, db: Engine, backfill: Backfill, *, fake_web: bool, raw_only: bool = False
) -> None:
    """Run the campaign's slices in this process with a progress bar, then say how it ended;
    unless ``raw_only``, each slice's raw records are normalized and resolved right after it."""
    registry = load_registry(settings.connectors_dir)
    connector = registry.get(backfill.connector_id)
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pages"),
        _PageRate(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[stats]}"),
    )
    with contextlib.ExitStack() as stack:
        if fake_web:
            settings, _ = stack.enter_context(fake_web_settings(settings))
        stop = stack.enter_context(_GracefulStop())
        progress = stack.enter_context(Progress(*columns, console=console))
        task = progress.add_task(
            backfill.connector_id,
            total=backfill.total_pages,
            completed=backfill.pages_processed,
            stats=f"{backfill.items_processed} items",
        )
        live = _Live(backfill.pages_processed, 0, backfill.total_pages)

        def on_progress(summary: RunSummary, reported: Reported | None) -> None:
            if reported is None:  # a commit: the pages were counted as the connector reported them
                return
            live.pages += reported.pages
            live.total = reported.total_pages or live.total
            progress.update(task, completed=live.base + live.pages, total=live.total)

        def on_slice(result: SliceResult) -> None:
            if not raw_only and result.summary is not None and result.summary.raw_ids:
                line = index_stored(db, registry, result.summary.raw_ids, settings)
                progress.console.print(line, highlight=False)
            after = result.backfill
            live.base, live.pages, live.total = after.pages_processed, 0, after.total_pages
            if after.status == "completed" and not live.total:
                live.total = after.pages_processed  # an unknown total is known at the end
            progress.update(
                task,
                completed=after.pages_processed,
                total=live.total,
                stats=f"{after.items_processed} items",
            )

        def on_wait(busy: SliceBusy) -> None:
            progress.console.print(f"waiting: {busy} (a dead crawler's lease lapses by then)")

        async def go() -> CampaignResult:
            stack = build_fetch_stack(settings)
            try:
                return await run_campaign(
                    connector,
                    backfill.id,
                    db=db,
                    stack=stack,
                    store=RawRecordStore(BlobStore(settings.blob_dir)),
                    lease_seconds=settings.run_lease_seconds,
                    max_run_minutes=settings.max_run_minutes,
                    should_stop=lambda: stop.requested,
                    on_progress=on_progress,
                    on_slice=on_slice,
                    on_wait=on_wait,
                )
            finally:
                await stack.aclose()

        try:
            result = asyncio.run(go())
        except KeyboardInterrupt:
            progress.stop()
            errors.print(
                f"stopped; `rareindex backfill run {backfill.connector_id}` takes the slice over "
                "once its lease lapses (RI_RUN_LEASE_SECONDS)"
            )
            raise typer.Exit(130) from None
    _report(result)


def _report(result: CampaignResult) -> None:
    after = result.backfill
    where = f"backfill {after.id} of {after.connector_id}"
    counts = f"{after.pages_processed} pages, {after.items_processed} items"
    if result.failed is not None:
        reason = result.failed.failure_reason or "failed"
        errors.print(
            f"error: {where}: a slice failed ({reason}: {result.failed.error}); the campaign is "
            f"{after.status} ({after.retries} failures in a row)",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if after.status == "completed":
        console.print(f"{where} completed after {result.slices} slices: {counts}")
    elif after.status == "paused":
        console.print(
            f"{where} paused at {counts}; `rareindex backfill resume {after.connector_id} --run` "
            "goes on"
        )
    elif after.status == "failed":
        errors.print(f"error: {where} failed: {after.last_error}", soft_wrap=True)
        raise typer.Exit(1)
    else:
        console.print(f"{where} is {after.status}: {counts}")


@app.command("start")
def start_cmd(
    ctx: typer.Context,
    connector_id: Annotated[str, typer.Argument(help="The connector's id (slug).")],
    since: Annotated[
        str | None, typer.Option(help="How far back to go, YYYY-MM-DD (connectors that can).")
    ] = None,
    page_budget: Annotated[int, typer.Option(help="Pages a slice (one run) may fetch.")] = 50,
    run: RunOpt = False,
    fake_web: FakeWebOpt = False,
    raw_only: RawOnlyOption = False,
) -> None:
    """Start a backfill campaign; with --run, run it here (Ctrl-C pauses after the slice) and
    normalize and resolve each slice's records (unless --raw-only)."""
    settings = settings_of(ctx)
    since_at = _since(since)
    if page_budget < 1:
        raise ConfigError(f"--page-budget must be at least 1, not {page_budget}")
    db = _db(settings)
    registry = load_registry(settings.connectors_dir)
    registry.get(connector_id)  # an unknown id: one line listing the known ones
    with db.begin() as conn:
        sync_connectors(conn, registry)
    backfill_id = start_backfill(db, connector_id, since=since_at, page_budget=page_budget)
    pages = f"{page_budget} page{'s' if page_budget != 1 else ''}"
    console.print(f"started backfill {backfill_id} of {connector_id}: {pages} a slice")
    if not run:
        console.print(
            f"the scheduler continues it; or run it here: `rareindex backfill run {connector_id}`"
        )
        return
    _run_here(settings, db, backfill_status(db, backfill_id), fake_web=fake_web, raw_only=raw_only)


@app.command("run")
def run_cmd(
    ctx: typer.Context, ref: IdArg, fake_web: FakeWebOpt = False, raw_only: RawOnlyOption = False
) -> None:
    """Run a running campaign's slices here — also to take over from a crawler that died —
    normalizing and resolving each slice's records (unless --raw-only)."""
    settings = settings_of(ctx)
    db = _db(settings)
    backfill = backfill_status(db, ref)
    if backfill.status != "running":
        hint = "resume it with --run" if backfill.status in ("paused", "failed") else "start anew"
        raise BackfillError(
            f"backfill {backfill.id} of {backfill.connector_id} is {backfill.status}; {hint}"
        )
    _run_here(settings, db, backfill, fake_web=fake_web, raw_only=raw_only)


@app.command("status")
def status_cmd(ctx: typer.Context, ref: IdArg) -> None:
    """Show a campaign: status, pages and items, total pages, percent, errors, cursor."""
    console.print(status_table(backfill_status(_db(settings_of(ctx)), ref)))


@app.command("pause")
def pause_cmd(ctx: typer.Context, ref: IdArg) -> None:
    """Pause a running campaign after its current slice."""
    paused = pause(_db(settings_of(ctx)), ref)
    console.print(
        f"paused backfill {paused.id} of {paused.connector_id} at {paused.pages_processed} pages"
    )


@app.command("resume")
def resume_cmd(
    ctx: typer.Context,
    ref: IdArg,
    run: RunOpt = False,
    fake_web: FakeWebOpt = False,
    raw_only: RawOnlyOption = False,
) -> None:
    """Resume a paused (or failed) campaign from its committed cursor."""
    settings = settings_of(ctx)
    db = _db(settings)
    resumed = resume(db, ref)
    console.print(
        f"resumed backfill {resumed.id} of {resumed.connector_id} at "
        f"{resumed.pages_processed} pages"
    )
    if run:
        _run_here(settings, db, resumed, fake_web=fake_web, raw_only=raw_only)


@app.command("cancel")
def cancel_cmd(ctx: typer.Context, ref: IdArg) -> None:
    """Cancel a campaign for good (what it stored stays)."""
    cancelled = cancel(_db(settings_of(ctx)), ref)
    console.print(
        f"cancelled backfill {cancelled.id} of {cancelled.connector_id}; "
        f"its {cancelled.items_processed} items stay stored"
    )
