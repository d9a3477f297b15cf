"""RareIndex connector SDK: the contract every connector implements.

A connector knows one source: how to crawl it, how to normalize what it fetched, how healthy it is
and how to resolve one URL. HTTP, politeness, engines, retries, budgets and cursors are the SDK's.

This root is the contract a connector is written against: the :class:`Connector` protocol, its
metadata, the crawl context its fetches go through, its health and the scoring of what it fetched.
The SDK's other public modules:

=====================================  ========================================================
:mod:`rareindex_connectors.records`    raw and normalized records, money
:mod:`rareindex_connectors.errors`     the error tree (what a connector raises, and is raised)
:mod:`rareindex_connectors.runtime`    the fetch runtime the index builds: router, engines,
                                       gates, policies, the SSRF-checking resolver, robots rules
:mod:`rareindex_connectors.testing`    helpers for a connector author's own tests
=====================================  ========================================================

The parsing kits connectors use (Shopify and WooCommerce payloads, prices, grades, certificate
numbers, feeds, sitemaps, structured data, PDFs) and the config-only store connectors are the
``rareindex-adapters`` distribution (``rareindex_adapters``), built on this one.

Example:
    >>> from rareindex_connectors import ConnectorMeta
    >>> meta = ConnectorMeta(id="cards-shop", source="Cards Shop", engines=("api",),
    ...                      categories=("tcg_card",), capabilities=("listing",))
    >>> meta.id, meta.refresh_class
    ('cards-shop', 'NORMAL')
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
from ._health import ConnectorHealth, HealthStatus
from ._meta import Capability, ConnectorMeta, RefreshClass, refresh_interval
from ._scoring import FieldScorer, Scorer, document_score
from ._version import __version__

__all__ = [
    "Capability",
    "Connector",
    "ConnectorHealth",
    "ConnectorMeta",
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "FetchResult",
    "Fetcher",
    "FieldScorer",
    "HealthStatus",
    "Progress",
    "RefreshClass",
    "ResponseKind",
    "Scorer",
    "__version__",
    "document_score",
    "refresh_interval",
    "scorer_of",
]
