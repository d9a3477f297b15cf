"""Adapters: pure functions from a source's documents to canonical records.

Each module is one kind of document and fails closed: input it cannot read raises
:class:`~rareindex_connectors.errors.ParseError` with a reason from the closed vocabulary (or,
where a document holds many entries, lists the unreadable ones in ``rejected`` next to the good
ones). Nothing is silently skipped.

=================  ===========================================================================
``shopify``        ``/products.json`` pages -> listings (variants, identifiers, grades)
``woocommerce``    Store API pages -> listings (minor units from the feed's own unit)
``prices``         price strings with symbols and locale separators -> :class:`Money`
``titles``         grades, graders, conditions and lot/negation flags from titles
``certs``          certificate numbers in titles and item specifics, attributed to a grader
``pagination``     paging loops with safety nets (repeated page, max pages, totals)
``sitemaps``       sitemap indexes and urlsets, gzip, lastmod filters, no XXE
``feeds``          RSS / Atom / JSON Feed -> news items; Merchant product feeds -> listings
``pdf``            "prices realised" tables -> hammer, premium, realised (PDFium)
``structured``     schema.org JSON-LD, microdata, Open Graph -> listings, price ranges
``embedded``       ``__NEXT_DATA__`` and inline JSON state
=================  ===========================================================================
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names, for type checkers; at run time they load on first use
    from ._rejected import Rejected
    from .certs import (
        GRADERS,
        CertMention,
        extract_certs,
    )
    from .embedded import (
        MAX_HTML_BYTES,
        inline_json,
        json_in_script,
        loads_exact,
        next_data,
    )
    from .feeds import (
        MAX_FEED_BYTES,
        FeedResult,
        parse_feed,
    )
    from .grades import (
        GradeScan,
        find_grades,
    )
    from .pagination import (
        Cursor,
        Extracted,
        Extractor,
        LinkHeader,
        Offset,
        Page,
        PageNumber,
        PageRequest,
        StopReason,
        Strategy,
        header_value,
        json_items,
        paginate,
        parse_link_header,
    )
    from .pdf import (
        MAX_PDF_BYTES,
        MAX_PDF_PAGES,
        PriceRealisedRow,
        PricesRealised,
        parse_prices_realised,
        rows_to_auction_lots,
    )
    from .prices import (
        parse_price,
    )
    from .shopify import (
        SHOPIFY_MAX_LIMIT,
        extract_shopify_page,
        parse_shopify_products,
        shopify_products_url,
    )
    from .sitemaps import (
        MAX_SITEMAP_BYTES,
        MAX_SITEMAP_URLS,
        Sitemap,
        SitemapRef,
        SitemapUrl,
        filter_since,
        parse_sitemap,
    )
    from .storefront import (
        BarcodeKind,
        FeedNote,
        FeedPage,
        NoteCode,
        barcode_kind,
        category_from_labels,
        identifiers_from,
        load_json,
    )
    from .structured import (
        PriceRange,
        ProductOffers,
        StructuredData,
        extract_structured,
        listings_from_products,
        read_products,
    )
    from .titles import (
        CONDITIONS,
        EDITIONS,
        TitleFacts,
        TitleFlag,
        edition_of,
        lift_grading,
    )
    from .woocommerce import (
        WOO_MAX_PER_PAGE,
        WOO_PRODUCTS_PATH,
        extract_woo_page,
        parse_woo_product,
        parse_woo_products,
        woo_next_page,
        woo_products_url,
        woo_variation_ids,
    )

_MODULE_OF: dict[str, str] = {
    "BarcodeKind": "storefront",
    "CertMention": "certs",
    "CONDITIONS": "titles",
    "EDITIONS": "titles",
    "Cursor": "pagination",
    "Extracted": "pagination",
    "Extractor": "pagination",
    "FeedNote": "storefront",
    "FeedPage": "storefront",
    "FeedResult": "feeds",
    "GRADERS": "certs",
    "GradeScan": "grades",
    "LinkHeader": "pagination",
    "MAX_FEED_BYTES": "feeds",
    "MAX_HTML_BYTES": "embedded",
    "MAX_PDF_BYTES": "pdf",
    "MAX_PDF_PAGES": "pdf",
    "MAX_SITEMAP_BYTES": "sitemaps",
    "MAX_SITEMAP_URLS": "sitemaps",
    "NoteCode": "storefront",
    "Offset": "pagination",
    "Page": "pagination",
    "PageNumber": "pagination",
    "PageRequest": "pagination",
    "PriceRange": "structured",
    "PriceRealisedRow": "pdf",
    "PricesRealised": "pdf",
    "ProductOffers": "structured",
    "Rejected": "_rejected",
    "SHOPIFY_MAX_LIMIT": "shopify",
    "Sitemap": "sitemaps",
    "SitemapRef": "sitemaps",
    "SitemapUrl": "sitemaps",
    "StopReason": "pagination",
    "Strategy": "pagination",
    "StructuredData": "structured",
    "TitleFacts": "titles",
    "TitleFlag": "titles",
    "WOO_MAX_PER_PAGE": "woocommerce",
    "WOO_PRODUCTS_PATH": "woocommerce",
    "barcode_kind": "storefront",
    "category_from_labels": "storefront",
    "extract_shopify_page": "shopify",
    "extract_structured": "structured",
    "extract_certs": "certs",
    "edition_of": "titles",
    "extract_woo_page": "woocommerce",
    "filter_since": "sitemaps",
    "find_grades": "grades",
    "header_value": "pagination",
    "identifiers_from": "storefront",
    "inline_json": "embedded",
    "json_in_script": "embedded",
    "json_items": "pagination",
    "lift_grading": "titles",
    "listings_from_products": "structured",
    "read_products": "structured",
    "load_json": "storefront",
    "loads_exact": "embedded",
    "next_data": "embedded",
    "paginate": "pagination",
    "parse_feed": "feeds",
    "parse_link_header": "pagination",
    "parse_price": "prices",
    "parse_prices_realised": "pdf",
    "parse_shopify_products": "shopify",
    "parse_sitemap": "sitemaps",
    "parse_woo_product": "woocommerce",
    "parse_woo_products": "woocommerce",
    "rows_to_auction_lots": "pdf",
    "shopify_products_url": "shopify",
    "woo_next_page": "woocommerce",
    "woo_products_url": "woocommerce",
    "woo_variation_ids": "woocommerce",
}

__all__ = [
    "CONDITIONS",
    "EDITIONS",
    "GRADERS",
    "MAX_FEED_BYTES",
    "MAX_HTML_BYTES",
    "MAX_PDF_BYTES",
    "MAX_PDF_PAGES",
    "MAX_SITEMAP_BYTES",
    "MAX_SITEMAP_URLS",
    "SHOPIFY_MAX_LIMIT",
    "WOO_MAX_PER_PAGE",
    "WOO_PRODUCTS_PATH",
    "BarcodeKind",
    "CertMention",
    "Cursor",
    "Extracted",
    "Extractor",
    "FeedNote",
    "FeedPage",
    "FeedResult",
    "GradeScan",
    "LinkHeader",
    "NoteCode",
    "Offset",
    "Page",
    "PageNumber",
    "PageRequest",
    "PriceRange",
    "PriceRealisedRow",
    "PricesRealised",
    "ProductOffers",
    "Rejected",
    "Sitemap",
    "SitemapRef",
    "SitemapUrl",
    "StopReason",
    "Strategy",
    "StructuredData",
    "TitleFacts",
    "TitleFlag",
    "barcode_kind",
    "category_from_labels",
    "edition_of",
    "extract_certs",
    "extract_shopify_page",
    "extract_structured",
    "extract_woo_page",
    "filter_since",
    "find_grades",
    "header_value",
    "identifiers_from",
    "inline_json",
    "json_in_script",
    "json_items",
    "lift_grading",
    "listings_from_products",
    "load_json",
    "loads_exact",
    "next_data",
    "paginate",
    "parse_feed",
    "parse_link_header",
    "parse_price",
    "parse_prices_realised",
    "parse_shopify_products",
    "parse_sitemap",
    "parse_woo_product",
    "parse_woo_products",
    "read_products",
    "rows_to_auction_lots",
    "shopify_products_url",
    "woo_next_page",
    "woo_products_url",
    "woo_variation_ids",
]


if not TYPE_CHECKING:  # type checkers see the imports above, and so refuse a name not listed

    def __getattr__(name: str) -> Any:
        """Load the adapter module that defines ``name`` on first use: a connector that needs
        only pagination does not pay for extruct, feedparser and PDFium at start-up."""
        module = _MODULE_OF.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(__all__)
