"""Catalog sources: the layouts ``rareindex catalog import`` reads into catalog items.

:func:`read_catalog` reads a catalog file or folder in the format it names or detects
(:data:`FORMAT_NAMES`: ``csv``, ``jsonl``, ``pokemon-tcg``), validating every record first. The
Pokémon TCG reader stays public on its own (``read_pokemon_tcg``: the benchmarks stream the full
dump through it).

Example:
    >>> from pathlib import Path
    >>> items = read_catalog(Path("fixtures/catalogs/pokemon-tcg-sample"), format="pokemon-tcg")
    >>> len(items), FORMAT_NAMES
    (1175, ('csv', 'jsonl', 'pokemon-tcg'))
"""

from .formats import FORMAT_NAMES, detect_format, read_catalog
from .pokemon_tcg import is_pokemon_tcg, read_pokemon_tcg

__all__ = ["FORMAT_NAMES", "detect_format", "is_pokemon_tcg", "read_catalog", "read_pokemon_tcg"]
