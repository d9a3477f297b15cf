"""The catalog formats ``rareindex catalog import`` reads: a registry of name -> reader.

* ``pokemon-tcg`` — the Pokémon TCG data layout (``sets/<lang>.json``, ``cards/<lang>/``): a
  folder in that layout (see :mod:`rareindex.catalog.pokemon_tcg`);
* ``csv`` — CSV with a header of ``catalog_item`` field names: a file named ``*.csv``;
* ``jsonl`` — JSON lines, one ``catalog_item`` object a line: any other file (see
  :mod:`rareindex.catalog.generic` for both).

:func:`read_catalog` detects the format (the first entry of :data:`REGISTRY` whose ``detect``
accepts the path, in the order above) unless one is named, and reads the whole catalog before
returning, so a bad record raises :class:`~rareindex.errors.ConfigError` — naming the file, the
record and the field — before anything is written. An unknown name raises it too, listing the
known ones.

Example:
    >>> items = read_catalog(Path("fixtures/catalogs/pokemon-tcg-sample"))
    >>> len(items), detect_format(Path("fixtures/catalogs/pokemon-tcg-sample"))
    (1175, 'pokemon-tcg')
    >>> read_catalog(Path("catalog.xml"), format="xml")
    Traceback (most recent call last):
    ...
    rareindex.errors.ConfigError: unknown catalog format 'xml'; known formats: csv, jsonl, ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from rareindex_connectors.records import CatalogItem

from ..errors import ConfigError
from .generic import is_csv, is_jsonl, read_csv, read_jsonl
from .pokemon_tcg import is_pokemon_tcg, read_pokemon_tcg

__all__ = [
    "FORMAT_NAMES",
    "REGISTRY",
    "CatalogFormat",
    "detect_format",
    "get_format",
    "read_catalog",
]


@dataclass(frozen=True, slots=True)
class CatalogFormat:
    """One layout: whether a path is in it, and how to read its items (validated, in order)."""

    name: str
    detect: Callable[[Path], bool]
    read: Callable[[Path], Iterable[CatalogItem]]


# Detection order: the specific layouts first, the catch-all (jsonl: any file) last.
REGISTRY: dict[str, CatalogFormat] = {
    f.name: f
    for f in (
        CatalogFormat("pokemon-tcg", is_pokemon_tcg, read_pokemon_tcg),
        CatalogFormat("csv", is_csv, read_csv),
        CatalogFormat("jsonl", is_jsonl, read_jsonl),
    )
}

FORMAT_NAMES: tuple[str, ...] = tuple(sorted(REGISTRY))
"""The names ``--format`` accepts."""


def _known() -> str:
    return f"known formats: {', '.join(FORMAT_NAMES)}"


def get_format(name: str) -> CatalogFormat:
    """The format called ``name``; :class:`ConfigError` listing the known names otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown catalog format {name!r}; {_known()}") from None


def detect_format(path: Path) -> str:
    """The name of the first format that recognises ``path``; :class:`ConfigError` if none."""
    if not path.exists():
        raise ConfigError(f"no catalog file at {path}")
    for catalog_format in REGISTRY.values():
        if catalog_format.detect(path):
            return catalog_format.name
    what = "a folder" if path.is_dir() else "not a regular file"
    raise ConfigError(f"no catalog format recognises {path} ({what}); {_known()}")


def read_catalog(path: Path, *, format: str | None = None) -> list[CatalogItem]:
    """Every item of the catalog at ``path``, validated, in the format named or detected."""
    catalog_format = get_format(format) if format is not None else REGISTRY[detect_format(path)]
    return list(catalog_format.read(path))
