"""``rareindex crawl ID``: one crawl run now, with a live progress bar, then its summary; then
the records it stored are normalized and resolved here, as a fleet's workers would
(``--raw-only`` keeps them raw for a later ``rareindex replay``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, get_args

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from rareindex_connectors import Connector, CrawlMode

from ..crawl import RunSummary, run_connector
from ..errors import ConfigError
from ..fetching import build_fetch_stack, require_runnable
from ..registry import Registry, load_registry
from ..settings import Settings
from ..storage import BlobStore, Engine, RawRecordStore, current_revision
from ..storage.connector_rows import sync_connectors
from ..storage.connector_status import StatusNote, status_notes
from ..storage.runs import takeable_run
from ._common import console, database, settings_of

if TYPE_CHECKING:
    from ..pipeline import PipelineResult

__all__ = ["crawl", "crawl_connectors", "index_line", "index_stored", "summary_table"]

RawOnlyOption = Annotated[
    bool,
    typer.Option(
        "--raw-only",
        help="Store raw records only; normalize and resolve later with `rareindex replay`.",
    ),
]


def index_stored(
    db: Engine,
    registry: Registry,
    raw_ids: list[str],
    settings: Settings,
    progress: Progress | None = None,
) -> str:
    """Normalize ``raw_ids`` and resolve what is pending (embedded mode's pipeline, the same
    functions a fleet's normalize and resolve actors call), record the cert sightings of new
    listings; returns one line saying what was indexed. With ``progress``, a bar follows the
    raw ids indexed."""
    from ..certs import record_sightings_from_listings
    from ..pipeline import process

    task = None
    if progress is not None:
        task = progress.add_task("indexing", total=len(raw_ids), stats="")

    def done(count: int) -> None:
        if progress is not None and task is not None:
            progress.update(task, completed=count)

    result = process(db, registry, raw_ids, blobs=BlobStore(settings.blob_dir), on_chunk=done)
    record_sightings_from_listings(db)
    if progress is not None and task is not None:
        progress.remove_task(task)
    return index_line(result)


def index_line(result: PipelineResult) -> str:
    """``indexed: 12 raw records -> 30 records (0 failed) in 0.4 s; resolved 30 in 0.6 s: 28
    matched, …``."""
    n, r = result.normalized, result.resolved
    return (
        f"indexed: {n.raw} raw records -> {n.records} records ({n.failed} failed) "
        f"in {result.normalize_seconds:.1f} s; resolved {r.resolved} in "
        f"{result.resolve_seconds:.1f} s: {r.matched} matched, {r.unmatched} unmatched"
    )


def summary_table(summaries: list[RunSummary], title: str = "Runs") -> Table:
    """One row per run: what it fetched, stored, skipped as dupes, and which engines served."""
    table = Table(
        "connector",
        "status",
        "pages",
        "records",
        "dupes",
        "blocked",
        "engines",
        "credits",
        "seconds",
        title=title,
    )
    for s in summaries:
        engines = ", ".join(
            f"{name} {stats['success']}/{stats['attempts']}"
            for name, stats in s.engines.items()
            if stats["attempts"]
        )
        status = s.status if not s.failure_reason else f"{s.status} ({s.failure_reason})"
        table.add_row(
            s.connector_id,
            status,
            str(s.pages),
            str(s.records),
            str(s.dupes),
            str(s.blocked),
            engines or "-",
            str(s.credits),
            f"{s.elapsed_s:.1f}",
        )
    return table


def _active_only(
    connectors: list[Connector], notes: dict[str, StatusNote], *, named: bool
) -> list[Connector]:
    """The connectors the operator has not paused, disabled or put in maintenance. One named
    on the command line that is not active is refused (with the command that brings it back);
    in a crawl of every connector it is skipped with a line saying why."""
    active = []
    for connector in connectors:
        note = notes.get(connector.meta.id)
        if note is None or note.status == "active":
            active.append(connector)
            continue
        why = f" by {note.changed_by}" if note.changed_by else ""
        why += f": {note.reason}" if note.reason else ""
        back = "resume" if note.status == "paused" else "enable"
        message = (
            f"connector {connector.meta.id!r} is {note.status}{why}; "
            f"`rareindex connectors {back} {connector.meta.id}` first"
        )
        if named:
            raise ConfigError(message)
        console.print(f"skipped: {message}", highlight=False, soft_wrap=True)
    return active


async def crawl_connectors(
    settings: Settings,
    db: Engine,
    slugs: list[str] | None = None,
    *,
    mode: CrawlMode = "incremental",
    max_pages: int | None = None,
    show_progress: bool = True,
    take_over: bool = False,
    index: bool = False,
) -> list[RunSummary]:
    """Run each connector (all when ``slugs`` is None) once, one after another, with progress.
    With ``take_over``, a connector's queued run that no worker holds (or whose lease expired)
    is run here instead of refusing the crawl (see :func:`takeable_run`). With ``index``, the
    raw records each run stored are normalized and resolved right after it (a line each)."""
    if current_revision(db) is None:
        raise ConfigError("the database is empty; run `rareindex db upgrade` first")
    registry = load_registry(settings.connectors_dir)
    connectors = [registry.get(s) for s in slugs] if slugs else list(registry)
    if slugs:  # connectors named on the command line: a missing key is one error line
        for connector in connectors:
            require_runnable(connector.meta, settings)
    with db.begin() as conn:
        sync_connectors(conn, registry)
        notes = status_notes(conn)
    connectors = _active_only(connectors, notes, named=bool(slugs))
    stack = build_fetch_stack(settings)
    store = RawRecordStore(BlobStore(settings.blob_dir))
    summaries = []
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description:<22}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    try:
        with Progress(*columns, console=console, disable=not show_progress) as progress:
            for connector in connectors:
                task = progress.add_task(connector.meta.id, total=None, stats="")

                def update(summary: RunSummary, reported: object, task: TaskID = task) -> None:
                    total = getattr(reported, "total_pages", None)
                    progress.update(
                        task,
                        completed=summary.pages,
                        total=total or None,
                        stats=f"{summary.records} new, {summary.dupes} dupes",
                    )

                taken = takeable_run(db, connector.meta.id) if take_over else None
                if taken:
                    console.print(f"{connector.meta.id}: taking over queued run {taken[0]}")
                summary = await run_connector(
                    connector,
                    db=db,
                    stack=stack,
                    store=store,
                    mode=taken[1] if taken else mode,  # type: ignore[arg-type]
                    run_id=taken[0] if taken else None,
                    max_pages=max_pages,
                    max_run_minutes=settings.max_run_minutes,
                    on_progress=update,
                )
                progress.update(
                    task,
                    total=summary.pages or 1,
                    completed=summary.pages or 1,
                    stats=f"{summary.records} new, {summary.dupes} dupes"
                    + (f", {summary.failure_reason}" if summary.failure_reason else ""),
                )
                summaries.append(summary)
                if index and summary.raw_ids:
                    line = index_stored(db, registry, summary.raw_ids, settings, progress)
                    progress.console.print(f"{connector.meta.id}: {line}", highlight=False)
    finally:
        await stack.aclose()
    return summaries


def crawl(
    ctx: typer.Context,
    connector_ids: Annotated[list[str], typer.Argument(help="Connector ids (slugs).")],
    mode: Annotated[str, typer.Option(help="incremental or backfill")] = "incremental",
    max_pages: Annotated[
        int | None, typer.Option(min=1, help="Stop after this many pages.")
    ] = None,
    take_over: Annotated[
        bool,
        typer.Option(
            "--take-over",
            help="Run a connector's queued crawl here when no worker holds it (a lost message).",
        ),
    ] = False,
    raw_only: RawOnlyOption = False,
) -> None:
    """Crawl connectors now (a run each), showing progress, then normalize and resolve what
    each stored (unless --raw-only); exit 1 if a run failed."""
    modes: dict[str, CrawlMode] = {m: m for m in get_args(CrawlMode)}
    if mode not in modes:
        raise ConfigError(f"--mode must be incremental or backfill, not {mode!r}")
    settings = settings_of(ctx)
    summaries = asyncio.run(
        crawl_connectors(
            settings,
            database(settings),
            connector_ids,
            mode=modes[mode],
            max_pages=max_pages,
            take_over=take_over,
            index=not raw_only,
        )
    )
    console.print(summary_table(summaries))
    if any(s.status == "failed" for s in summaries):
        raise typer.Exit(1)
