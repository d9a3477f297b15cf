"""RareIndex connector SDK: the contract every connector implements, and the tools it gets.

A connector knows one source: how to crawl it, how to normalize what it fetched, how healthy it is
and how to resolve one URL. HTTP, politeness, engines, retries, budgets and cursors are the SDK's.

Example:
    >>> from rareindex_connectors import Money, parse_normalized
    >>> parse_normalized({"kind": "listing", "external_id": "1", "title": "1986 Fleer Jordan #57",
    ...                   "price": {"amount": "99.5", "currency": "usd"}}).price
    Money(amount=Decimal('99.50'), currency='USD')

This root is the contract a connector is written against: the connector and its metadata, the
crawl context, raw and normalized records, money, scoring and the error tree. Two other public
modules: :mod:`rareindex_connectors.runtime` is the fetch runtime the index builds (router,
engines, gates, policies, the SSRF-checking resolver); :mod:`rareindex_connectors.testing` holds
the helpers connector authors use in their own tests.
"""

from ._connector import Connector, scorer_of
from ._context import (
    CrawlContext,
    CrawlMode,
    CrawlOptions,
    Fetcher,
    FetchResult,
    Progress,
    ResponseKind,
)
from ._errors import (
    Blocked,
    BudgetExhausted,
    CircuitOpen,
    ConnectorError,
    DNSError,
    FetchError,
    ParseError,
    ParseReason,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    ResponseTooLarge,
    RobotsDisallowed,
    RobotsUnavailable,
    TLSError,
    TransientFetchError,
    TruncatedBody,
    UndecodableBody,
    UnsafeURL,
)
from ._health import ConnectorHealth, HealthStatus
from ._meta import Capability, ConnectorMeta, RefreshClass, refresh_interval
from ._money import Money, currency_minor_unit
from ._normalized import (
    AuctionLot,
    CatalogItem,
    Category,
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
from ._scoring import FieldScorer, Scorer, document_score
from ._version import __version__

__all__ = [
    "AuctionLot",
    "Blocked",
    "BudgetExhausted",
    "Capability",
    "CatalogItem",
    "Category",
    "CircuitOpen",
    "Connector",
    "ConnectorError",
    "ConnectorHealth",
    "ConnectorMeta",
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "DNSError",
    "EngineName",
    "FetchError",
    "FetchResult",
    "Fetcher",
    "FieldScorer",
    "Grading",
    "HealthStatus",
    "Identifiers",
    "Listing",
    "Money",
    "NewsItem",
    "NormalizedRecord",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "PolicyError",
    "PopulationReport",
    "PriceObservation",
    "Progress",
    "RateLimited",
    "RawRecord",
    "RawRecordInput",
    "RecordKind",
    "RefreshClass",
    "ResponseKind",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "Sale",
    "Scorer",
    "TLSError",
    "TransientFetchError",
    "TruncatedBody",
    "UndecodableBody",
    "UnsafeURL",
    "__version__",
    "canonical_json",
    "content_hash",
    "currency_minor_unit",
    "document_score",
    "parse_normalized",
    "refresh_interval",
    "scorer_of",
]
