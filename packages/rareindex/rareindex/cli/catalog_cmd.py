"""``rareindex catalog import PATH`` and ``rareindex catalog fake FILE``.

``import`` reads a catalog in one of the formats of :mod:`rareindex.catalog`, recognised from
``PATH`` or named with ``--format``: ``jsonl`` (JSON lines, one ``catalog_item`` object a line;
any file not named ``*.csv``), ``csv`` (a header of ``catalog_item`` field names) — in both,
identifier fields such as ``upc``, ``pcgs_number`` or ``set_code`` may stand at the top level and
go into ``identifiers`` — and ``pokemon-tcg`` (a folder in the Pokémon TCG data layout). Every
record is validated first: a bad one stops the import before anything is written, naming the
file, the record (line or card) and the field.

The items are then written in one transaction, with a progress bar: an item whose external id
names an asset of an earlier import updates that asset in place (same id), others are found by
asset key or inserted. The last line counts the items read, the assets inserted, updated and
unchanged, the sets and the brands; importing the same catalog again changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

from ..catalog import FORMAT_NAMES, detect_format, read_catalog
from ..storage.catalog_store import import_catalog
from ._common import console, migrated_database, settings_of

app = typer.Typer(help="The reference catalog entity resolution matches against.")


@app.command("import")
def import_(
    ctx: typer.Context,
    path: Annotated[
        Path, typer.Argument(help="A catalog file (JSON lines, CSV) or folder (pokemon-tcg).")
    ],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help=f"Read PATH as this format ({', '.join(FORMAT_NAMES)}); default: recognised.",
        ),
    ] = None,
) -> None:
    """Load a catalog's items as assets (with their sets and brands); a newer dump updates them
    in place, the same one again changes nothing."""
    settings = settings_of(ctx)
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description:<9}"),
        BarColumn(),
        MofNCompleteColumn(),
    )
    # Only on a terminal: piped output (scripts, CI logs) gets the counts line alone.
    bar = Progress(*columns, console=console, transient=True, disable=not console.is_terminal)
    with bar as progress:
        task = progress.add_task("reading", total=None)
        name = format or detect_format(path)
        items = read_catalog(path, format=name)
        engine = migrated_database(settings)

        def show(phase: str, done: int, total: int) -> None:
            progress.update(task, description=phase, completed=done, total=total)

        result = import_catalog(engine, items, on_progress=show)
    console.print(
        f"imported {path} ({name}): {result.items} items read; assets: {result.inserted} "
        f"inserted, {result.updated} updated, {result.unchanged} unchanged; "
        f"{result.sets} sets, {result.brands} brands"
    )


@app.command("fake")
def fake(
    file: Annotated[Path, typer.Argument(help="Where to write the JSON lines.")],
    seed: Annotated[int, typer.Option(help="The fake world's seed (the demo uses 7).")] = 7,
) -> None:
    """Write the fake web's catalog (every item its sites sell) as JSON lines."""
    from rareindex_fakeweb.sites.catalog import world_catalog

    items = world_catalog(seed)
    with file.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json(exclude_none=True) + "\n")
    console.print(f"wrote {len(items)} catalog items to {file}")
