"""schema.org products from a page: JSON-LD, then microdata, then Open Graph, to :class:`Listing`.

Cost order (docs/performance.md): JSON-LD is found with selectolax; extruct's microdata parser
(~60x slower, and about a second to import, so it is imported on the first page that needs it)
runs only when JSON-LD gave no product **and** the page has an ``itemscope``; Open Graph
``og:``/``product:`` meta tags are the last resort. ``StructuredData.source`` says which one won;
the others' raw data stays available (``jsonld``, ``opengraph``).

Broken JSON-LD is common, so a block that ``json.loads`` refuses is repaired and retried:
``//`` and ``/* */`` comments and trailing commas are removed outside strings, raw control
characters inside strings are accepted, ``<!-- -->``/CDATA wrappers are dropped, and a block
whose JSON is HTML-escaped throughout (``{&quot;name&quot;: …}``) is unescaped. Several objects
in one script (``{…}{…}`` or ``{…},{…}``) and ``@graph`` are flattened; ``{"@id": …}`` references
to offers are resolved. A block that still fails is kept in ``rejected`` (``invalid_json``).

Numbers: JSON is parsed with ``parse_float=Decimal``, so ``"price": 19.99`` is
``Decimal('19.99')``, never a float. Price strings follow schema.org (``"1250.00"``) or, failing
that, the printed forms ``_amounts`` reads (``"$1,250.00"``, ``"1.250,00 €"``).

Example:
    >>> page = '''<script type="application/ld+json">{"@type": "Product", "name": "1986 Fleer #57",
    ...   "sku": "F57", "offers": {"@type": "Offer", "price": 1250.00, "priceCurrency": "USD",}}
    ... </script>'''
    >>> data = extract_structured(page)
    >>> [(l.external_id, str(l.price)) for l in listings_from_products(data.products,
    ...     url="https://shop.example/p/f57")]
    [('F57', 'USD 1250.00')]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Listing, Money, parse_normalized

from . import _offers as _offer
from ._json import loads_lenient
from ._rejected import Rejected, bare_message
from .embedded import MAX_HTML_BYTES

__all__ = [
    "PriceRange",
    "ProductOffers",
    "StructuredData",
    "extract_structured",
    "listings_from_products",
    "read_products",
]

Source = Literal["json-ld", "microdata", "opengraph"]
_PRODUCT_TYPES = frozenset({"Product", "IndividualProduct", "ProductModel", "SomeProducts"})
_GROUP_TYPE = "ProductGroup"


@dataclass(frozen=True, slots=True)
class StructuredData:
    """What a page states about its products, from the best source it has."""

    products: list[dict[str, Any]] = field(default_factory=list)
    source: Source | None = None
    jsonld: list[dict[str, Any]] = field(default_factory=list)
    """Every JSON-LD node on the page, ``@graph`` flattened (breadcrumbs, organisation …)."""
    opengraph: dict[str, str] = field(default_factory=dict)
    """``og:*`` and ``product:*`` meta properties, first value of each."""
    rejected: list[Rejected] = field(default_factory=list)


def _nodes(value: Any) -> Iterator[dict[str, Any]]:
    """Top-level JSON-LD nodes, ``@graph`` flattened."""
    if isinstance(value, list):
        for item in value:
            yield from _nodes(item)
    elif isinstance(value, dict):
        if "@graph" in value:
            yield from _nodes(value["@graph"])
        if set(value) - {"@context", "@graph"}:
            yield value


def _products(
    value: Any, by_id: dict[str, dict[str, Any]], seen: set[object]
) -> Iterator[dict[str, Any]]:
    """Product nodes anywhere below ``value``, each once (by object, and by ``@id``), not
    descending into a product (its ``isRelatedTo`` are other pages' products) except a
    ProductGroup's ``hasVariant``."""
    if isinstance(value, list):
        for item in value:
            yield from _products(item, by_id, seen)
        return
    if not isinstance(value, dict) or id(value) in seen:
        return
    seen.add(id(value))
    kinds = _offer.schema_types(value)
    if kinds & _PRODUCT_TYPES or _GROUP_TYPE in kinds:
        if "@id" in value:
            if ("@id", str(value["@id"])) in seen:
                return
            seen.add(("@id", str(value["@id"])))
        if _GROUP_TYPE not in kinds or "offers" in value:
            product = dict(value)
            if "offers" in product:
                product["offers"] = _resolve(product["offers"], by_id)
            yield product
        yield from _products(value.get("hasVariant", ()), by_id, seen)
        return
    for child in value.values():
        yield from _products(child, by_id, seen)


def _resolve(value: Any, by_id: dict[str, dict[str, Any]]) -> Any:
    """``value`` with ``{"@id": …}`` references replaced by the nodes they name (a node put in
    is not searched again, so a reference cycle cannot loop)."""
    if isinstance(value, list):
        return [_resolve(v, by_id) for v in value]
    if isinstance(value, dict):
        if set(value) == {"@id"}:
            return by_id.get(str(value["@id"]), value)
        return {k: _resolve(v, by_id) for k, v in value.items()}
    return value


def _opengraph(tree: LexborHTMLParser) -> dict[str, str]:
    found: dict[str, str] = {}
    for meta in tree.css("meta[property], meta[name]"):
        key = (meta.attributes.get("property") or meta.attributes.get("name") or "").strip()
        if key.startswith(("og:", "product:")) and meta.attributes.get("content") is not None:
            found.setdefault(key, str(meta.attributes["content"]).strip())
    return found


def _og_product(og: dict[str, str]) -> dict[str, Any] | None:
    amount = og.get("product:price:amount") or og.get("og:price:amount")
    if not amount:
        return None
    offer = {
        "@type": "Offer",
        "price": amount,
        "priceCurrency": og.get("product:price:currency") or og.get("og:price:currency"),
        "availability": og.get("product:availability") or og.get("og:availability"),
    }
    product = {
        "@type": "Product",
        "name": og.get("og:title"),
        "url": og.get("og:url"),
        "image": og.get("og:image"),
        "description": og.get("og:description"),
        "sku": og.get("product:retailer_item_id"),
        "offers": {k: v for k, v in offer.items() if v},
    }
    return {k: v for k, v in product.items() if v}


def extract_structured(html: str | bytes, *, base_url: str | None = None) -> StructuredData:
    """Products a page states in JSON-LD, microdata or Open Graph (first source that has any).

    Raises:
        ParseError: ``too_large``. Unreadable JSON-LD blocks go to ``rejected`` instead.
    """
    if len(html) > MAX_HTML_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"page is {len(html)} long")
    tree = LexborHTMLParser(html)
    nodes: list[dict[str, Any]] = []
    rejected: list[Rejected] = []
    for index, script in enumerate(tree.css('script[type="application/ld+json" i]'), start=1):
        text = script.text(deep=True)
        if not text.strip():
            continue
        try:
            values = loads_lenient(text)
        except ParseError as exc:
            rejected.append(Rejected.from_error(exc, where=f"ld+json script {index}"))
            continue
        nodes.extend(n for v in values for n in _nodes(v))
    by_id = {str(n["@id"]): n for n in nodes if "@id" in n and len(n) > 1}
    products = list(_products(nodes, by_id, set()))
    source: Source | None = "json-ld" if products else None
    if not products and tree.css_first("[itemscope]") is not None:
        import extruct  # here: most pages never need it, and importing it costs about a second

        markup = html if isinstance(html, str) else html.decode("utf-8", "replace")
        try:
            items = extruct.extract(markup, base_url=base_url, syntaxes=["microdata"], uniform=True)
        except Exception as exc:  # extruct and lxml raise many types; each is kept
            rejected.append(Rejected(ParseReason.UNEXPECTED_SHAPE, f"microdata: {exc}"))
        else:
            products = list(_products(items["microdata"], {}, set()))
            source = "microdata" if products else None
    og = _opengraph(tree)
    if not products and (og_product := _og_product(og)) is not None:
        products, source = [og_product], "opengraph"
    return StructuredData(
        products=products,
        source=source,
        jsonld=nodes,
        opengraph=og,
        rejected=rejected,
    )


def _first(node: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that ``node`` has as non-empty text."""
    return next((t for k in keys if (t := _offer.clean_text(node.get(k)))), None)


@dataclass(frozen=True, slots=True)
class PriceRange:
    """What a product states when its only offer is an ``AggregateOffer`` without ``offers``:
    the span of prices asked elsewhere (``lowPrice``…``highPrice``), never one item's price.

    It is not a :class:`Listing` (which has one ``price``) and never enters the ask series; the
    type itself is the flag. ``high`` is ``None`` when the page states only ``lowPrice``.
    """

    external_id: str
    title: str
    url: str
    low: Money
    high: Money | None = None
    offer_count: int | None = None


@dataclass(frozen=True, slots=True)
class ProductOffers:
    """Every offer of a page's products, each in exactly one of ``listings``, ``ranges`` or
    ``rejected``, in page order."""

    listings: tuple[Listing, ...] = ()
    ranges: tuple[PriceRange, ...] = ()
    rejected: tuple[Rejected, ...] = ()


def _count(value: Any) -> int | None:
    text = _offer.clean_text(value)
    return int(text) if text and text.isdigit() else None


def _range(
    product: dict[str, Any], summary: dict[str, Any], at: str, default_currency: str | None
) -> PriceRange:
    name, url = str(product["name"]), str(product["url"])
    low, high = _offer.range_prices(summary, at, default_currency)
    if high is not None and (high.currency != low.currency or high.amount < low.amount):
        raise ParseError(
            ParseReason.INVALID_VALUE,
            f"highPrice {high} is not a price at or above lowPrice {low}",
            field=f"{at}.highPrice",
        )
    return PriceRange(
        external_id=str(product["id"]),
        title=name,
        url=url,
        low=low,
        high=high,
        offer_count=_count(summary.get("offerCount")),
    )


def _listing(
    product: dict[str, Any],
    offer: dict[str, Any],
    *,
    at: str,
    index: int,
    several: bool,
    url: str,
    default_currency: str | None,
) -> Listing:
    name = str(product["name"])
    offer_url = _first(offer, "url")
    own_id = _first(offer, "sku", "@id")
    if own_id is None and offer_url and several:
        own_id = urljoin(url, offer_url)
    if own_id is None:
        base_id = str(product["id"])
        own_id = f"{base_id}#offer-{index + 1}" if several else base_id
    variant = _first(offer, "name")
    condition = _offer.local_name(offer.get("itemCondition")) or ""
    record = {
        "kind": "listing",
        "external_id": own_id,
        "title": name,
        "url": urljoin(url, offer_url) if offer_url else str(product["url"]),
        "price": _offer.offer_price(offer, at, default_currency),
        "available": _offer.is_available(offer),
        "identifiers": _offer.identifiers_of(product["node"], offer),
        "image_urls": _offer.image_urls(product["node"], url),
        "condition": condition.removesuffix("Condition").lower() or None,
        "seller": _first(offer, "seller"),
        "variant_title": variant if variant != name else None,
    }
    try:
        listing = parse_normalized(record)
    except ParseError as exc:
        field = f"{at}.{exc.field}" if exc.field else at
        raise ParseError(exc.reason, bare_message(exc), field=field, snippet=exc.snippet) from None
    if not isinstance(listing, Listing):  # pragma: no cover - kind is fixed above
        raise TypeError(type(listing).__name__)
    return listing


def read_products(
    products: Sequence[dict[str, Any]], *, url: str, default_currency: str | None = None
) -> ProductOffers:
    """Every product's offers as listings, price ranges or rejections: one bad offer (no
    price, an unknown currency …) is rejected on its own and the rest of the page still reads.

    * One :class:`Listing` per ``Offer``; an AggregateOffer listing several ``offers`` gives one
      listing per offer it lists.
    * An AggregateOffer without ``offers`` beside other offers is their summary and gives
      nothing; when it is the product's only offer it gives a :class:`PriceRange`, not a
      listing (``lowPrice`` is what the cheapest seller asks, not this item's price).
    * ``url`` is the page's URL: relative links resolve against it, and it identifies a product
      that states no ``sku``/``productID``/``@id``. A listing's ``external_id`` is the offer's
      own ``sku``/``@id``/``url`` when it has one, else the product's, suffixed ``#offer-N``
      when the product has several offers. The currency is ``priceCurrency``, else an
      unambiguous symbol in the price, else ``default_currency``. GTINs and ISBNs that do not
      fit :class:`Identifiers` are left out of ``identifiers`` (the product dict still has them).
    * A rejection's ``where`` is the product (``products[0]``) and its ``field`` the full path
      (``products[0].offers[2].price``); its snippet is the product's name.

    Example:
        >>> page = [{"@type": "Product", "name": "Card", "sku": "C", "offers": [
        ...     {"@type": "Offer", "price": "5.00", "priceCurrency": "USD"},
        ...     {"@type": "Offer", "priceCurrency": "USD"},
        ...     {"@type": "AggregateOffer", "lowPrice": "5.00", "highPrice": "9.00"}]}]
        >>> found = read_products(page, url="https://shop.example/p")
        >>> [str(x.price) for x in found.listings], [r.field for r in found.rejected]
        (['USD 5.00'], ['products[0].offers[1].price'])
    """
    listings: list[Listing] = []
    ranges: list[PriceRange] = []
    rejected: list[Rejected] = []
    for p_index, node in enumerate(products):
        where = f"products[{p_index}]"
        name = _first(node, "name")
        try:
            if name is None:
                raise ParseError(
                    ParseReason.MISSING_FIELD, "product has no name", field=f"{where}.name"
                )
            offers, summaries = _offer.expand_offers(node, where)
        except ParseError as exc:
            rejected.append(_rejection(exc, where, name))
            continue
        product_url = urljoin(url, _first(node, "url") or url)
        product = {
            "node": node,
            "name": name,
            "url": product_url,
            "id": _first(node, "sku", "productID", "@id", "mpn") or product_url,
        }
        for s_index, summary in enumerate(summaries):
            try:
                ranges.append(
                    _range(product, summary, f"{where}.offers[{s_index}]", default_currency)
                )
            except ParseError as exc:
                rejected.append(_rejection(exc, where, name))
        for o_index, offer in enumerate(offers):
            try:
                listing = _listing(
                    product,
                    offer,
                    at=f"{where}.offers[{o_index}]",
                    index=o_index,
                    several=len(offers) > 1,
                    url=url,
                    default_currency=default_currency,
                )
            except ParseError as exc:
                rejected.append(_rejection(exc, where, name))
                continue
            listings.append(listing)
    return ProductOffers(tuple(listings), tuple(ranges), tuple(rejected))


def _rejection(error: ParseError, where: str, name: str | None) -> Rejected:
    rejection = Rejected.from_error(error, where=where)
    if rejection.snippet is None and name is not None:  # show the operator which product
        rejection = replace(rejection, snippet=name)
    return rejection


def listings_from_products(
    products: Sequence[dict[str, Any]], *, url: str, default_currency: str | None = None
) -> list[Listing]:
    """The strict form of :func:`read_products`: its listings, or an error for the first offer
    that is not one.

    For a caller that needs every offer priced (an auction lot's realised price is the sum of
    its offers). A page read for listings should use :func:`read_products`, where one bad
    offer is rejected alone.

    Raises:
        ParseError: the first rejection (``field`` names it, e.g.
            ``products[0].offers[2].price``), or ``unexpected_shape`` at ``offers`` for a
            product whose only offer is a price range (its title in the snippet).
    """
    found = read_products(products, url=url, default_currency=default_currency)
    if found.rejected:
        raise found.rejected[0].to_error()
    if found.ranges:
        first = found.ranges[0]
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            f"only an AggregateOffer: a price range from {first.low}, not a price",
            field="offers",
            snippet=first.title,
        )
    return list(found.listings)
