"""The fake web: the sites RareIndex's suite, demo and benches crawl, served on 127.0.0.1.

:class:`FakeWeb` is one ASGI app routed by host name: the collectibles sites (:mod:`.sites`: a
Shopify store, WooCommerce stores, an auction house, a marketplace, a grader, a news site, traps),
generated reproducibly from a seed, next to hosts that misbehave on purpose (rate limits, flaps,
challenges, redirects, bombs, broken bodies, robots.txt). Beside it are fakes of the paid scraping
APIs that the real SDKs (firecrawl-py, scrapfly-sdk) talk to: :func:`create_fake_firecrawl_app`
and :func:`create_fake_scrapfly_app`, and the knobs that make a fake misbehave (:class:`Delay`,
:class:`RateLimit`, :class:`RuleBook`, :class:`Throttle`, :class:`CreditLedger`).

It is a package of its own (distribution ``rareindex-fakeweb``: starlette, uvicorn, fpdf2), so
the connector SDK's runtime needs none of them. It uses the SDK (its public names), never the
index. Serve any of its apps with :func:`rareindex_connectors.testing.serve_asgi`.

Example:
    >>> from firecrawl import Firecrawl
    >>> from rareindex_connectors.testing import serve_asgi
    >>> from rareindex_fakeweb import FirecrawlFault, create_fake_firecrawl_app
    >>> fake = create_fake_firecrawl_app(credits=10, faults=[FirecrawlFault(429, times=1)])
    >>> with serve_asgi(fake) as base_url:                                # doctest: +SKIP
    ...     client = Firecrawl(api_key="fc-test", api_url=base_url, max_retries=0)
    ...     client.scrape(f"{fake_web_url}/card/1", max_age=0)              # RateLimitError
"""

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
)

__all__ = [
    "FAKE_HOSTS",
    "CreditLedger",
    "Delay",
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
]
