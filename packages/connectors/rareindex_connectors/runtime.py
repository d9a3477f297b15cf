"""The fetch runtime: what runs a connector's fetches, apart from the contract a connector writes.

A connector author needs none of this: a connector receives a :class:`~rareindex_connectors.
CrawlContext` whose ``fetch`` is already bound to a run. The index (``rareindex``) builds that
runtime: engines (direct ``api``, Firecrawl, Scrapfly), per-host gates and breakers, domain
policies, robots.txt rules, the SSRF-checking resolver and the :class:`Router` that tries
engines in order; a run or a probe gets a :class:`RouterSession` (its own stats, costs and
scorer) from the router.

Example:
    >>> from rareindex_connectors.runtime import PolicySet, registrable_domain
    >>> PolicySet.from_mapping({"defaults": {"min_interval_ms": 1000}}).for_host("a.test").engines
    ('api', 'firecrawl', 'scrapfly')
    >>> registrable_domain("shop.example.co.uk")
    'example.co.uk'
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
from ._engines import (
    BROWSER_USER_AGENT,
    ApiEngine,
    Engine,
    FetchRequest,
    FirecrawlEngine,
    ScrapflyEngine,
    bot_user_agent,
)
from ._gates import GateBackend, HostGates, MemoryGateBackend, Permit, RedisGateBackend
from ._gates.filelock import FileGateBackend
from ._policy import DomainPolicy, PolicySet, registrable_domain
from ._robots_rules import RequestRate, RobotsRules
from ._router import CostEntry, EngineStats, Router
from ._session import RouterSession, Validators
from ._ssrf import Resolver, SafeResolver, SystemResolver, address_problem

__all__ = [
    "BROWSER_USER_AGENT",
    "ApiEngine",
    "ChallengeKind",
    "ChallengeVendor",
    "ChallengeVerdict",
    "Clock",
    "CostEntry",
    "DomainPolicy",
    "Engine",
    "EngineStats",
    "FetchRequest",
    "FileGateBackend",
    "FirecrawlEngine",
    "GateBackend",
    "HostGates",
    "MemoryGateBackend",
    "Permit",
    "PolicySet",
    "RedisGateBackend",
    "RequestRate",
    "Resolver",
    "RobotsRules",
    "Router",
    "RouterSession",
    "SafeResolver",
    "ScrapflyEngine",
    "SystemClock",
    "SystemResolver",
    "Validators",
    "address_problem",
    "bot_user_agent",
    "challenge_from_firecrawl",
    "challenge_from_scrapfly",
    "is_challenge_page",
    "registrable_domain",
]
