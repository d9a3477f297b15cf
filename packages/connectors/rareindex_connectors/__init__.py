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
from ._clock import Clock, SystemClock
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
from ._engines import (
    BROWSER_USER_AGENT,
    ApiEngine,
    Engine,
    FetchRequest,
    FirecrawlEngine,
    ScrapflyEngine,
    bot_user_agent,
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
from ._gates import GateBackend, HostGates, MemoryGateBackend, Permit, RedisGateBackend
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
from ._policy import DomainPolicy, PolicySet, registrable_domain
from ._raw import EngineName, RawRecord, RawRecordInput, canonical_json, content_hash
from ._router import CostEntry, EngineStats, Router
from ._scoring import FieldScorer, Scorer, document_score
from ._ssrf import Resolver, SafeResolver, SystemResolver, address_problem
from ._version import __version__

__all__ = [
    "BROWSER_USER_AGENT",
    "ApiEngine",
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
    "Clock",
    "Connector",
    "ConnectorError",
    "ConnectorHealth",
    "ConnectorMeta",
    "CostEntry",
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "DNSError",
    "DomainPolicy",
    "Engine",
    "EngineName",
    "EngineStats",
    "FetchError",
    "FetchRequest",
    "FetchResult",
    "Fetcher",
    "FieldScorer",
    "FirecrawlEngine",
    "GateBackend",
    "Grading",
    "HealthStatus",
    "HostGates",
    "Identifiers",
    "Listing",
    "MemoryGateBackend",
    "Money",
    "NewsItem",
    "NormalizedRecord",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "Permit",
    "PolicyError",
    "PolicySet",
    "PopulationReport",
    "PriceObservation",
    "Progress",
    "RateLimited",
    "RawRecord",
    "RawRecordInput",
    "RecordKind",
    "RedisGateBackend",
    "RefreshClass",
    "Resolver",
    "ResponseKind",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "Router",
    "SafeResolver",
    "Sale",
    "Scorer",
    "ScrapflyEngine",
    "SystemClock",
    "SystemResolver",
    "TLSError",
    "TransientFetchError",
    "TruncatedBody",
    "UndecodableBody",
    "UnsafeURL",
    "__version__",
    "address_problem",
    "bot_user_agent",
    "canonical_json",
    "challenge_from_firecrawl",
    "challenge_from_scrapfly",
    "content_hash",
    "currency_minor_unit",
    "document_score",
    "is_challenge_page",
    "parse_normalized",
    "refresh_interval",
    "registrable_domain",
    "scorer_of",
]
