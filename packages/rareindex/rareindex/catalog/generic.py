"""The generic catalog files: JSON lines or CSV of ``catalog_item`` fields.

A JSON lines file holds one ``catalog_item`` object a line (``kind`` may be left out; blank lines
are skipped but counted). A CSV file has a header of ``catalog_item`` field names; empty cells
are left out. In both, identifier fields (``upc``, ``ean``, ``jan``, ``isbn``, ``sku``,
``pcgs_number``, ``set_code``, ``collector_number``, ``cert_number``) may stand at the top level:
they move into ``identifiers``. A bad line raises :class:`~rareindex.errors.ConfigError` naming
``file:line``, the field and why — for CSV the physical line the row ends on, as an editor shows
it, even after a quoted field that spans lines.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "mine.jsonl"
    >>> _ = path.write_text('{"external_id": "z1", "title": "Charizard 4/102", '
    ...                     '"category": "tcg_card", "set_code": "BS"}\\n')
    >>> [item] = read_jsonl(path)
    >>> item.external_id, item.identifiers.set_code
    ('z1', 'BS')
    >>> _ = path.write_text('{"external_id": "z1", "title": "T", "category": "tcg_card", '
    ...                     '"year": "soon"}\\n')
    >>> list(read_jsonl(path))
    Traceback (most recent call last):
    ...
    rareindex.errors.ConfigError: ...mine.jsonl:1: invalid_type at year: ...
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rareindex_connectors.errors import ParseError
from rareindex_connectors.records import CatalogItem, Identifiers, parse_normalized

from ..errors import ConfigError

__all__ = ["IDENTIFIERS", "is_csv", "is_jsonl", "read_csv", "read_jsonl"]

IDENTIFIERS = frozenset(Identifiers.model_fields)
"""Field names that go into ``identifiers`` when they stand at the top level of a record."""


def is_csv(path: Path) -> bool:
    """Whether ``path`` is a file named ``*.csv``."""
    return path.is_file() and path.suffix.lower() == ".csv"


def is_jsonl(path: Path) -> bool:
    """Whether ``path`` is any other file (JSON lines is the default for a file)."""
    return path.is_file() and path.suffix.lower() != ".csv"


def read_jsonl(path: Path) -> Iterator[CatalogItem]:
    """Every item of a JSON lines file, validated in file order (see the module)."""
    _require_file(path, "JSON lines")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if isinstance(data, dict):
                data = _lift_identifiers(data, f"{path}:{number}")
            yield _item(data, f"{path}:{number}")


def read_csv(path: Path) -> Iterator[CatalogItem]:
    """Every row of a CSV file with a header of field names, validated in file order."""
    _require_file(path, "CSV")
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            where = f"{path}:{reader.line_num}"  # the physical line a row ends on
            cells = {k: v for k, v in row.items() if k is not None and v is not None and v != ""}
            yield _item(_lift_identifiers(cells, where), where)


def _require_file(path: Path, kind: str) -> None:
    if path.is_dir():
        raise ConfigError(f"{path} is a folder, not a {kind} file")
    if not path.is_file():
        raise ConfigError(f"no catalog file at {path}")


def _lift_identifiers(record: dict[str, Any], where: str) -> dict[str, Any]:
    """``record`` with its top-level identifier fields moved into ``identifiers``."""
    lifted = {k: v for k, v in record.items() if k in IDENTIFIERS}
    if not lifted:
        return record
    nested = record.get("identifiers")
    if nested is None:
        nested = {}
    elif not isinstance(nested, dict):
        return record  # let validation say what is wrong with ``identifiers``
    for key, value in lifted.items():
        if key in nested and nested[key] != value:
            raise ConfigError(
                f"{where}: {key} is {value!r} at the top level but {nested[key]!r} in identifiers"
            )
    rest = {k: v for k, v in record.items() if k not in IDENTIFIERS}
    return {**rest, "identifiers": {**nested, **lifted}}


def _item(data: Any, where: str) -> CatalogItem:
    if isinstance(data, dict):
        data.setdefault("kind", "catalog_item")
    try:
        record = parse_normalized(data)
    except ParseError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if not isinstance(record, CatalogItem):
        raise ConfigError(f"{where}: kind {record.kind!r} is not catalog_item")
    return record
