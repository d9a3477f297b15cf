"""``rareindex catalog import FILE`` and ``rareindex catalog fake FILE``.

A catalog file is JSON lines (one ``catalog_item`` object a line) or CSV with a header of
``catalog_item`` field names; identifier columns (``upc``, ``ean``, ``jan``, ``isbn``, ``sku``,
``pcgs_number``, ``set_code``, ``collector_number``) go into ``identifiers``. A bad line stops the
import before anything is written, naming the line, the field and why.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from rareindex_connectors import CatalogItem, Identifiers, ParseError, parse_normalized

from ..errors import ConfigError
from ..storage.catalog_store import import_catalog
from ._common import console, migrated_database, settings_of

app = typer.Typer(help="The reference catalog entity resolution matches against.")

_IDENTIFIERS = frozenset(Identifiers.model_fields)


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            for row in reader:
                yield reader.line_num, _csv_record(row)  # the physical line a row ends on
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(f"{path}:{number}: not JSON ({exc.msg})") from None


def _csv_record(row: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "catalog_item"}
    identifiers: dict[str, str] = {}
    for key, value in row.items():
        if key is None or value is None or value == "":
            continue
        if key in _IDENTIFIERS:
            identifiers[key] = value
        else:
            record[key] = value
    if identifiers:
        record["identifiers"] = identifiers
    return record


def read_catalog(path: Path) -> list[CatalogItem]:
    """Every item of a catalog file, validated; :class:`ConfigError` at the first bad line."""
    if not path.is_file():
        raise ConfigError(f"no catalog file at {path}")
    items: list[CatalogItem] = []
    for number, data in _rows(path):
        if isinstance(data, dict):
            data.setdefault("kind", "catalog_item")
        try:
            record = parse_normalized(data)
        except ParseError as exc:
            raise ConfigError(f"{path}:{number}: {exc}") from None
        if not isinstance(record, CatalogItem):
            raise ConfigError(f"{path}:{number}: kind {record.kind!r} is not catalog_item")
        items.append(record)
    return items


@app.command("import")
def import_(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="JSON lines or CSV of catalog items.")],
) -> None:
    """Load catalog items as assets (with their sets and brands). Re-importing is a no-op."""
    settings = settings_of(ctx)
    items = read_catalog(file)
    engine = migrated_database(settings)
    result = import_catalog(engine, items)
    console.print(
        f"imported {result.items} items from {file}: {result.assets} assets, "
        f"{result.sets} sets, {result.brands} brands"
    )


@app.command("fake")
def fake(
    file: Annotated[Path, typer.Argument(help="Where to write the JSON lines.")],
    seed: Annotated[int, typer.Option(help="The fake world's seed (the demo uses 7).")] = 7,
) -> None:
    """Write the fake web's catalog (every item its sites sell) as JSON lines."""
    from rareindex_connectors.testing.sites.catalog import world_catalog

    items = world_catalog(seed)
    with file.open("w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json(exclude_none=True) + "\n")
    console.print(f"wrote {len(items)} catalog items to {file}")
