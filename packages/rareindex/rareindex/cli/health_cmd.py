"""``rareindex health``: check every connector now (runs, breakers, a light probe) and show it.

Example:
    $ rareindex health                 # assess, probe where fresh, store, print a table
    $ rareindex health --no-probe --json
    $ rareindex health --stored        # what the health worker stored last, checking nothing
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.table import Table

from ..health import HealthSnapshot
from ..health_check import run_health
from ..registry import load_registry
from ..storage.health_store import list_health
from ._common import console, migrated_database, settings_of
from ._fakeweb import fake_web_settings
from .connectors_cmd import report_problems

__all__ = ["health", "health_table"]

_STYLE = {
    "UP": "green",
    "DEGRADED": "yellow",
    "BROKEN": "bold red",
    "DISABLED": "dim",
    "MAINTENANCE": "cyan",
}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _age(seconds: int | None) -> str:
    if seconds is None:
        return "never"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds}s"


def health_table(snapshots: Sequence[HealthSnapshot]) -> Table:
    """Connector, state, reasons, success rate, records/run, blocked rate, breaker, freshness."""
    table = Table(
        "connector",
        "state",
        "reasons",
        "success",
        "records/run",
        "blocked",
        "breaker",
        "freshness",
        title=f"Connector health ({len(snapshots)})",
    )
    for snap in snapshots:
        records = "-" if snap.records_per_run is None else f"{snap.records_per_run:g}"
        table.add_row(
            snap.connector_id,
            f"[{_STYLE.get(snap.status, '')}]{snap.status}[/]",
            ", ".join(snap.reasons) or "-",
            _percent(snap.success_rate),
            records,
            _percent(snap.blocked_rate),
            snap.breaker_state or "-",
            _age(snap.freshness_seconds),
        )
    return table


def health(
    ctx: typer.Context,
    probe: Annotated[
        bool,
        typer.Option(
            "--probe/--no-probe", help="Probe connectors whose data is fresh (light fetches)."
        ),
    ] = True,
    json_: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    stored: Annotated[
        bool, typer.Option("--stored", help="Show the stored snapshots; check nothing.")
    ] = False,
    fake_web: Annotated[
        bool, typer.Option("--fake-web", help="Serve the local fake web and probe it.")
    ] = False,
) -> None:
    """Derive each connector's health (UP, DEGRADED, BROKEN, DISABLED, MAINTENANCE) from its
    recent runs, breakers and a light probe, store it, and print it; see docs/health.md."""
    settings = settings_of(ctx)
    engine = migrated_database(settings)
    if stored:
        with engine.connect() as conn:
            snapshots = list_health(conn)
    else:
        registry = load_registry(settings.connectors_dir)
        report_problems(registry)
        with contextlib.ExitStack() as stack:
            if fake_web:
                settings, _ = stack.enter_context(fake_web_settings(settings))
            snapshots = asyncio.run(run_health(engine, settings, registry, probe=probe))
    if json_:
        sys.stdout.write(json.dumps([s.as_dict() for s in snapshots], indent=2) + "\n")
        return
    console.print(health_table(snapshots))
    if not snapshots:
        hint = "run `rareindex health` without --stored" if stored else "no connectors found"
        console.print(f"no health snapshots: {hint}")
