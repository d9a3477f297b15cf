"""Catalog sources: the layouts ``rareindex catalog import`` reads into catalog items.

:func:`read_catalog` reads a catalog file or folder in the format it names or detects
(:data:`FORMAT_NAMES`: ``csv``, ``jsonl``, ``pokemon-tcg``), validating every record first.

Example:
    >>> from pathlib import Path
    >>> items = read_catalog(Path("fixtures/catalogs/pokemon-tcg-sample"), format="pokemon-tcg")
    >>> len(items), FORMAT_NAMES
    (1175, ('csv', 'jsonl', 'pokemon-tcg'))
"""

from .formats import FORMAT_NAMES, detect_format, read_catalog

__all__ = ["FORMAT_NAMES", "detect_format", "read_catalog"]
