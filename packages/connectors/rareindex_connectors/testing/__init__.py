"""Test helpers for connector authors and the RareIndex test suite.

The fake web (:class:`FakeWeb`: well-behaved and misbehaving sites under distinct host names on
127.0.0.1), a scripted :class:`FakeEngine`, a :class:`ScaledClock` for politeness tests measured
in minutes, local servers on 127.0.0.1 (:func:`serve_asgi`), the knobs that make a fake misbehave
on purpose (:class:`Delay`, :class:`RateLimit`, :class:`RuleBook`, :class:`Throttle`,
:class:`CreditLedger`), and fakes of the paid scraping APIs that the real SDKs (firecrawl-py,
scrapfly-sdk) talk to:
:func:`create_fake_firecrawl_app` and :func:`create_fake_scrapfly_app`. Importing this package
needs starlette and uvicorn (test dependencies), not only the SDK's runtime dependencies.

Example:
    >>> from firecrawl import Firecrawl
    >>> from rareindex_connectors.testing import (
    ...     FirecrawlFault, create_fake_firecrawl_app, serve_asgi
    ... )
    >>> fake = create_fake_firecrawl_app(credits=10, faults=[FirecrawlFault(429, times=1)])
    >>> with serve_asgi(fake) as base_url:                                # doctest: +SKIP
    ...     client = Firecrawl(api_key="fc-test", api_url=base_url, max_retries=0)
    ...     client.scrape(f"{fake_web_url}/card/1", max_age=0)              # RateLimitError
"""

from .clock import ScaledClock
from .fake_engine import FakeEngine
from .fake_firecrawl import (
    FakeFirecrawl,
    FirecrawlCall,
    FirecrawlFault,
    JsonExtractor,
    create_fake_firecrawl_app,
    default_json_extractor,
)
from .fake_scrapfly import FakeScrapfly, ScrapflyCall, ScrapflyFault, create_fake_scrapfly_app
from .fake_web import FAKE_HOSTS, FakeWeb, HostLog
from .servers import (
    CreditLedger,
    Delay,
    PageDigest,
    RateLimit,
    Refusal,
    RuleBook,
    Throttle,
    UpstreamPage,
    digest_page,
    fetch_upstream,
    is_valid_target,
    linger,
    serve_asgi,
)

__all__ = [
    "FAKE_HOSTS",
    "CreditLedger",
    "Delay",
    "FakeEngine",
    "FakeFirecrawl",
    "FakeScrapfly",
    "FakeWeb",
    "FirecrawlCall",
    "FirecrawlFault",
    "HostLog",
    "JsonExtractor",
    "PageDigest",
    "RateLimit",
    "Refusal",
    "RuleBook",
    "ScaledClock",
    "ScrapflyCall",
    "ScrapflyFault",
    "Throttle",
    "UpstreamPage",
    "create_fake_firecrawl_app",
    "create_fake_scrapfly_app",
    "default_json_extractor",
    "digest_page",
    "fetch_upstream",
    "is_valid_target",
    "linger",
    "serve_asgi",
]
