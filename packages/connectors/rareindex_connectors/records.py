"""Records: what a connector's ``crawl()`` yields (raw) and its ``normalize()`` returns.

A raw record (:class:`RawRecordInput`, stored as :class:`RawRecord`) keeps what the source sent;
a normalized record is one of the kinds of the :data:`NormalizedRecord` union. Money is
:class:`Money` (a ``Decimal`` and an ISO-4217 code, never a float).

Example:
    >>> from rareindex_connectors.records import Money, parse_normalized
    >>> parse_normalized({"kind": "listing", "external_id": "1", "title": "1986 Fleer Jordan #57",
    ...                   "price": {"amount": "99.5", "currency": "usd"}}).price
    Money(amount=Decimal('99.50'), currency='USD')
"""

from ._money import Money, currency_minor_unit
from ._normalized import (
    AuctionLot,
    CatalogItem,
    Category,
    Grader,
    Grading,
    Identifiers,
    Listing,
    NewsItem,
    NormalizedRecord,
    PopulationReport,
    PriceObservation,
    RecordKind,
    Sale,
    parse_normalized,
)
from ._raw import EngineName, RawRecord, RawRecordInput, canonical_json, content_hash

__all__ = [
    "AuctionLot",
    "CatalogItem",
    "Category",
    "EngineName",
    "Grader",
    "Grading",
    "Identifiers",
    "Listing",
    "Money",
    "NewsItem",
    "NormalizedRecord",
    "PopulationReport",
    "PriceObservation",
    "RawRecord",
    "RawRecordInput",
    "RecordKind",
    "Sale",
    "canonical_json",
    "content_hash",
    "currency_minor_unit",
    "parse_normalized",
]
