"""What both store connectors share: paging a feed collection by collection with a resumable
cursor ``{"collection": i, "page": n}``, and the health probe.

**Conditional sweeps.** An incremental run fetches every feed page with ``conditional=True``:
the crawler sends the ``ETag`` / ``Last-Modified`` the host gave last time, and a 304 means the
page is as it was, so none of its products is yielded again (they would be dupes). A 304 page
says nothing about whether a page follows; the walk goes on to the next page only when that page
was fetched before (:meth:`CrawlContext.fetched_before`): otherwise the last sweep ended here, on
this very (empty, or last) page. A page that changed is a 200 and is read in full, so a changed
product is picked up on the next run. Backfill slices fetch in full: a campaign wants the bodies.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Literal

from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext, FetchResult
from rareindex_connectors.errors import ConnectorError
from rareindex_connectors.records import RawRecordInput

from ..pagination import Extracted, Extractor, PageNumber, PageRequest, paginate
from .config import StoreConfig

__all__ = ["Expander", "StoreConnector", "crawl_collections", "probe"]

_UNCHANGED = "__unchanged__"
"""The key of the one marker item a 304 page is read as."""

Expander = Callable[[Mapping[str, Any], CrawlContext], AsyncIterator[RawRecordInput] | None]
"""What a product leads to beyond itself: an iterator of raw records, or ``None`` (nothing)."""


async def crawl_collections(
    ctx: CrawlContext,
    *,
    collections: tuple[str | None, ...],
    start: Callable[[str | None], PageRequest],
    extract: Extractor,
    record: Callable[[Mapping[str, Any], FetchResult], RawRecordInput],
    max_pages: int,
    expand: Expander | None = None,
) -> AsyncIterator[RawRecordInput]:
    """Every item of every collection, one raw record each, the cursor moved after each page.

    ``expand(item, ctx)`` may return the records an item leads to beyond itself (a WooCommerce
    variable product's variations, fetched one by one); they are yielded right after the item,
    before the cursor moves past its page, so a crash re-fetches them with the page.

    A finished sweep leaves the cursor at the start with ``sweeps`` counted, so the next
    incremental run sweeps again: pages answered 304 yield nothing, and unchanged items of a
    page that changed are dupes, not rows.
    """
    cursor: dict[str, Any] = dict(ctx.cursor or {})
    first_collection = int(cursor.get("collection", 0))
    resume_page = int(cursor.get("page", 1))
    sweeps = int(cursor.get("sweeps", 0))
    if first_collection >= len(collections):  # the configured collections changed: start over
        first_collection, resume_page = 0, 1
    budget = ctx.options.max_pages or max_pages
    revisit = ctx.options.mode == "incremental"

    async def fetch_page(request: PageRequest) -> FetchResult:
        params = dict(request.params)
        return await ctx.fetch(request.url, expect="json", params=params, conditional=revisit)

    def read(result: FetchResult) -> Extracted:
        if result.not_modified:
            # One marker item, keyed by the page's URL: an empty page would end the walk, and
            # markers alike would read as a repeated page.
            return Extracted(items=({_UNCHANGED: result.url},))
        return extract(result)

    for index in range(first_collection, len(collections)):
        if budget <= 0:
            return  # the budget ran out at the end of a collection: the next run starts the next
        request = start(collections[index])
        if index == first_collection and resume_page > 1:
            request = PageRequest(request.url, {**request.params, "page": resume_page})
        last_next: PageRequest | None = None
        # One page more than the budget for paginate, and the budget enforced here: paginate
        # drops the next request of a page that hits its cap, which would read as "collection
        # done" and skip the rest of it.
        async for page in paginate(
            fetch_page, start=request, strategy=PageNumber(), extract=read, max_pages=budget + 1
        ):
            unchanged = page.result.not_modified
            for item in () if unchanged else page.items:
                yield record(item, page.result)
                more = expand(item, ctx) if expand is not None else None
                if more is not None:
                    async for child in more:
                        yield child
            last_next = page.next_request
            if (
                unchanged
                and last_next is not None
                and not ctx.fetched_before(last_next.url, last_next.params)
            ):
                last_next = None  # the last sweep ended on this page: so does this one
            if last_next is not None:
                ctx.set_cursor(
                    {"collection": index, "page": int(last_next.params["page"]), "sweeps": sweeps}
                )
            items = 0 if unchanged else len(page.items)
            ctx.progress(pages=1, items=items, total_pages=page.total_pages)
            budget -= 1
            if last_next is None or budget <= 0:
                break
        if budget <= 0 and last_next is not None:
            return  # the page budget ran out mid-collection: resume here next run
        ctx.set_cursor({"collection": index + 1, "page": 1, "sweeps": sweeps})
    ctx.set_cursor({"collection": 0, "page": 1, "sweeps": sweeps + 1})


async def probe(
    ctx: CrawlContext, url: str, parse: Callable[[FetchResult], object]
) -> ConnectorHealth:
    """One small fetch and parse: UP when it works, BROKEN with the reason when it does not."""
    try:
        result = await ctx.fetch(url, expect="json")
        parse(result)
    except ConnectorError as exc:
        return ConnectorHealth(status="BROKEN", message=f"{type(exc).__name__}: {exc}"[:300])
    return ConnectorHealth(status="UP", latency_ms=result.elapsed_ms)


class StoreConnector:
    """What a store connector is, whatever the platform: a config, a meta, and a crawl that
    pages each collection. Subclasses say where pages start, how to read one, and how a
    product becomes a raw record and then listings."""

    platform: Literal["shopify", "woocommerce"]
    extract: Extractor
    version = "1"
    parser_version = "1"

    def __init__(self, config: StoreConfig, *, slug: str):
        self.config = config
        self.meta: ConnectorMeta = config.meta(slug, platform=self.platform)

    @classmethod
    def from_config(cls, data: Mapping[str, Any], *, slug: str) -> StoreConnector:
        """Validate a parsed config file (``ValidationError`` names the field)."""
        return cls(StoreConfig.model_validate(data), slug=slug)

    def start(self, collection: str | None) -> PageRequest:
        raise NotImplementedError

    def record(self, product: Mapping[str, Any], result: FetchResult) -> RawRecordInput:
        raise NotImplementedError

    def expand(
        self, product: Mapping[str, Any], ctx: CrawlContext
    ) -> AsyncIterator[RawRecordInput] | None:
        """The records ``product`` leads to beyond itself; ``None``: nothing (a Shopify product
        carries all its variants)."""
        return None

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        collections: tuple[str | None, ...] = self.config.collections or (None,)
        async for item in crawl_collections(
            ctx,
            collections=collections,
            start=self.start,
            extract=type(self).extract,
            record=self.record,
            max_pages=self.config.max_pages,
            expand=self.expand,
        ):
            yield item
