"""Entity resolution: titles and identifiers -> canonical assets and graded variants.

:class:`Resolver` is built from catalog items
(:class:`~rareindex_connectors.records.CatalogItem`) and answers, per title, a
:class:`Decision` (catalog id, asset key, method, confidence, reject reason, grading). It is
pure: no database, no network; :mod:`rareindex.indexing` stores what it decides.

Example:
    >>> from rareindex.resolution import Resolver
    >>> resolver = Resolver.from_catalog([])
    >>> resolver.resolve("2018 Prizm Luka Doncic #280").reject_reason
    'no_candidate'
"""

from .index import CatalogIndex, Entry
from .keys import asset_key, variant_key
from .resolver import THRESHOLD, Decision, MatchMethod, RejectReason, Resolver
from .text import Tokens, fold, tokenize

__all__ = [
    "THRESHOLD",
    "CatalogIndex",
    "Decision",
    "Entry",
    "MatchMethod",
    "RejectReason",
    "Resolver",
    "Tokens",
    "asset_key",
    "fold",
    "tokenize",
    "variant_key",
]
