"""``rareindex connectors list|check``: what the registry holds, and its stored runtime state;
``rareindex connectors pause|resume|disable|enable|maintenance ID [--reason TEXT]``: the operator's
status commands (see :mod:`rareindex.storage.connector_status`), logged with the OS user and why."""

from __future__ import annotations

import asyncio
import contextlib
import getpass
from typing import Annotated

import structlog
import typer
from rich.table import Table

from ..check import check_connector
from ..fetching import require_runnable
from ..registry import Registry, load_registry
from ..storage import current_revision
from ..storage.connector_rows import list_connectors, sync_connectors
from ..storage.connector_status import Action, ConnectorNotFound, StatusConflict, change_status
from ._common import console, database, errors, migrated_database, settings_of
from ._fakeweb import fake_web_settings

app = typer.Typer(
    help="Inspect the connector registry; pause, resume, disable, enable or put a connector in "
    "maintenance.",
    no_args_is_help=True,
)
log = structlog.get_logger(__name__)


def registry_table(registry: Registry, stored: dict[str, tuple[str, int]] | None = None) -> Table:
    """A table of connectors: id, source, engines, categories, refresh class, status, runs."""
    table = Table(
        "id",
        "source",
        "engines",
        "categories",
        "capabilities",
        "refresh",
        "status",
        "runs",
        title=f"Connectors ({len(registry)})",
    )
    for connector in registry:
        meta = connector.meta
        status, runs = (stored or {}).get(meta.id, ("not synced", 0))
        table.add_row(
            meta.id,
            meta.source,
            " > ".join(meta.engines),
            ", ".join(meta.categories),
            ", ".join(meta.capabilities),
            meta.refresh_class,
            status,
            str(runs),
        )
    return table


def report_problems(registry: Registry) -> None:
    """One line per connector file that failed to load, on stderr."""
    for problem in registry.problems:
        errors.print(f"[bold red]error:[/] {problem}", highlight=False, soft_wrap=True)


@app.command("list")
def list_cmd(ctx: typer.Context) -> None:
    """List every connector under RI_CONNECTORS_DIR with its stored status; exit 2 if any
    connector file failed to load (the others are still listed)."""
    settings = settings_of(ctx)
    registry = load_registry(settings.connectors_dir)
    stored: dict[str, tuple[str, int]] = {}
    engine = database(settings)
    if current_revision(engine) is not None:
        with engine.connect() as conn:
            stored = {row.id: (row.status, row.runs) for row in list_connectors(conn)}
    console.print(registry_table(registry, stored))
    if not len(registry):
        console.print(f"no connectors under {settings.connectors_dir}")
    report_problems(registry)
    if registry.problems:
        raise typer.Exit(2)


@app.command("check")
def check_cmd(
    ctx: typer.Context,
    connector_id: Annotated[str, typer.Argument(help="The connector's id (slug).")],
    fake_web: Annotated[
        bool, typer.Option("--fake-web", help="Serve the local fake web and point at it.")
    ] = False,
) -> None:
    """Fetch one page through the router and show what would be stored and normalized;
    exit 1 when nothing could be fetched or normalized."""
    settings = settings_of(ctx)
    connector = load_registry(settings.connectors_dir).get(connector_id)
    require_runnable(connector.meta, settings)
    with contextlib.ExitStack() as stack:
        if fake_web:
            settings, _ = stack.enter_context(fake_web_settings(settings))
        report = asyncio.run(check_connector(connector, settings))
    if report.fetch_error:
        errors.print(f"[bold red]error:[/] {connector_id}: {report.fetch_error}", soft_wrap=True)
        raise typer.Exit(1)
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.kinds().items())) or "nothing"
    engines = ", ".join(
        f"{name} {s['success']}/{s['attempts']}"  # type: ignore[index]
        for name, s in report.engines.items()
    )
    console.print(
        f"{connector_id}: fetched {len(report.raws)} raw records ({engines}); "
        f"normalized to {kinds}; {len(report.failures)} failed to parse"
    )
    table = Table("raw", "kind", "external id", "title", "price", title="First records")
    for record in report.normalized[:10]:
        price = next(
            (
                getattr(record, name)
                for name in ("price", "price_realised", "hammer_price")
                if getattr(record, name, None) is not None
            ),
            None,
        )
        table.add_row(
            str(len(table.rows) + 1),
            record.kind,
            record.external_id,
            record.title[:60],
            str(price) if price else "",
        )
    console.print(table)
    for raw_id, reason, field in report.failures[:20]:
        errors.print(f"parse failed: {raw_id}: {reason}" + (f" at {field}" if field else ""))
    for warning in report.warnings[:20]:
        errors.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)
    if not report.ok:
        raise typer.Exit(1)


def operator() -> str:
    """Who runs this command: ``user:<OS login>`` (``user:uid-<n>`` when there is no login)."""
    try:
        return f"user:{getpass.getuser()}"
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER (a bare container)
        import os

        return f"user:uid-{os.getuid()}"


ReasonOption = Annotated[
    str | None, typer.Option("--reason", help="Why: stored with the status and logged.")
]
IdArgument = Annotated[str, typer.Argument(help="The connector's id (slug).")]


def _change(ctx: typer.Context, connector_id: str, action: Action, reason: str | None) -> None:
    settings = settings_of(ctx)
    by = operator()
    engine = migrated_database(settings)
    registry = load_registry(settings.connectors_dir)
    with engine.begin() as conn:  # a connector never crawled yet is stored, so it can be paused
        sync_connectors(conn, registry)
    try:
        change = change_status(engine, connector_id, action, by=by, reason=reason)
    except ConnectorNotFound as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except StatusConflict as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    log.info(
        "connector.status_changed" if change.changed else "connector.status_unchanged",
        connector=connector_id,
        action=action,
        before=change.previous_status,
        status=change.status,
        by=by,
        reason=change.reason,
    )
    why = f": {change.reason}" if change.reason else ""
    if change.changed:
        console.print(
            f"{connector_id}: {change.previous_status} -> {change.status} (by {by}{why})",
            highlight=False,
            soft_wrap=True,
        )
    else:
        console.print(f"{connector_id}: already {change.status}", highlight=False)


@app.command("pause")
def pause_cmd(ctx: typer.Context, connector_id: IdArgument, reason: ReasonOption = None) -> None:
    """Pause a connector: the scheduler enqueues nothing for it until `resume`."""
    _change(ctx, connector_id, "pause", reason)


@app.command("resume")
def resume_cmd(ctx: typer.Context, connector_id: IdArgument, reason: ReasonOption = None) -> None:
    """Resume a paused connector (a disabled or maintenance one needs `enable`)."""
    _change(ctx, connector_id, "resume", reason)


@app.command("maintenance")
def maintenance_cmd(
    ctx: typer.Context, connector_id: IdArgument, reason: ReasonOption = None
) -> None:
    """Put a connector in maintenance: not scheduled, MAINTENANCE in health, until `enable`."""
    _change(ctx, connector_id, "maintenance", reason)


@app.command("disable")
def disable_cmd(ctx: typer.Context, connector_id: IdArgument, reason: ReasonOption = None) -> None:
    """Disable a connector: not scheduled, DISABLED in health, until `enable`."""
    _change(ctx, connector_id, "disable", reason)


@app.command("enable")
def enable_cmd(ctx: typer.Context, connector_id: IdArgument, reason: ReasonOption = None) -> None:
    """Make a disabled (or maintenance) connector active again."""
    _change(ctx, connector_id, "enable", reason)
