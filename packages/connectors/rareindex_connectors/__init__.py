"""RareIndex connector SDK: the contract every connector implements, and the tools it gets.

A connector knows one source: how to crawl it, how to normalize what it fetched, how healthy it is
and how to resolve one URL. HTTP, politeness, engines, retries, budgets and cursors are the SDK's.

Example:
    >>> from rareindex_connectors import Money, parse_normalized
    >>> parse_normalized({"kind": "listing", "external_id": "1", "title": "1986 Fleer Jordan #57",
    ...                   "price": {"amount": "99.5", "currency": "usd"}}).price
    Money(amount=Decimal('99.50'), currency='USD')

Everything public is re-exported here; :mod:`rareindex_connectors.testing` holds the helpers
connector authors use in their own tests.
"""

from ._challenge import (
    ChallengeKind,
    ChallengeVendor,
    ChallengeVerdict,
    challenge_from_firecrawl,
    challenge_from_scrapfly,
    is_challenge_page,
)
from ._connector import Connector
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
    FetchError,
    ParseError,
    ParseReason,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    TransientFetchError,
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
from ._raw import EngineName, RawRecord, RawRecordInput, content_hash
from ._version import __version__

__all__ = [
    "AuctionLot",
    "Blocked",
    "BudgetExhausted",
    "Capability",
    "CatalogItem",
    "Category",
    "ChallengeKind",
    "ChallengeVendor",
    "ChallengeVerdict",
    "CircuitOpen",
    "Connector",
    "ConnectorError",
    "ConnectorHealth",
    "ConnectorMeta",
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "EngineName",
    "FetchError",
    "FetchResult",
    "Fetcher",
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
    "Sale",
    "TransientFetchError",
    "__version__",
    "challenge_from_firecrawl",
    "challenge_from_scrapfly",
    "content_hash",
    "currency_minor_unit",
    "is_challenge_page",
    "parse_normalized",
    "refresh_interval",
]
