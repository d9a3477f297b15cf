"""Shopify storefront ``/products.json`` → one :class:`Listing` per **variant**
(docs/domain.md#store-feeds).

* ``external_id`` = ``"<product_id>:<variant_id>"``; ``title`` = product title, plus ``" - "`` and
  the variant title unless it is ``"Default Title"``; ``url`` =
  ``<base_url>/products/<handle>?variant=<id>``.
* ``price``/``compare_at_price`` are strings in the store's currency, which the feed does not
  state: the caller passes it. A ``compare_at_price`` that is null, empty, zero, or not higher
  than the price means "none" (no "was" price).
* ``available`` is the variant's flag; without one (Admin-style payloads), ``inventory_quantity``
  > 0. ``quantity`` is ``inventory_quantity`` when present, negative stock (oversold) read as 0.
* ``sku``/``barcode`` → :class:`Identifiers` (see :mod:`.storefront`); a bad check digit is left
  out and reported as a :class:`FeedNote`, never raised.
* grade, grader and raw condition come from the title (:func:`.titles.lift_grading`); its flags
  (lot, reprint…) come back as ``title_flag`` notes, since a listing has no flags field.
* ``category``: the product type when it maps, else the tags when they agree, else the
  ``category`` argument (the store's default).

**Fails closed.** A page is all or nothing: one malformed product or variant (not an object, no
``variants``, an empty ``variants``, a non-numeric or float price, a naive ``published_at``) raises
:class:`ParseError` naming ``products[i].variants[j].field``. A partial page would look complete to
the crawler and move its cursor past the records it dropped; the raw page is kept for a re-parse.

Example:
    >>> page = parse_shopify_products({"products": [product]}, base_url="https://shop.example",
    ...                       currency="USD")                                # doctest: +SKIP
    >>> shopify_products_url("https://shop.example", 2, collection="psa-10")
    'https://shop.example/collections/psa-10/products.json?limit=250&page=2'
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Category, Listing, currency_minor_unit

from .pagination import Extracted, json_items
from .storefront import (
    FeedNote,
    FeedPage,
    NoteCode,
    build_listing,
    category_from_labels,
    identifiers_from,
    load_json,
    money,
    timestamp,
)
from .titles import lift_grading

__all__ = [
    "SHOPIFY_MAX_LIMIT",
    "extract_shopify_page",
    "parse_shopify_products",
    "shopify_products_url",
]

SHOPIFY_MAX_LIMIT = 250
"""The most products one page may ask for (the Admin API's documented cap)."""

_DEFAULT_TITLE = "Default Title"


def shopify_products_url(
    base_url: str, page: int = 1, limit: int = SHOPIFY_MAX_LIMIT, collection: str | None = None
) -> str:
    """The storefront URL of one page of products, of a whole store or of one collection.

    Raises:
        ValueError: ``page`` < 1 or ``limit`` outside 1-250.
    """
    if page < 1 or not 1 <= limit <= SHOPIFY_MAX_LIMIT:
        raise ValueError(f"page must be >= 1 and limit 1-{SHOPIFY_MAX_LIMIT}, got {page}, {limit}")
    base = base_url.rstrip("/")
    path = f"/collections/{quote(collection, safe='')}" if collection else ""
    return f"{base}{path}/products.json?limit={limit}&page={page}"


def extract_shopify_page(result: FetchResult) -> Extracted:
    """For :func:`.pagination.paginate`: the raw products; an empty list ends the store."""
    return json_items("products")(result)


@dataclass(frozen=True, slots=True)
class _Product:
    """What every variant of one product shares, validated once."""

    id: str
    title: str
    handle: str
    images: list[tuple[str, list[Any]]]
    category: Category | None
    listed_at: datetime | None
    vendor: str | None


def _need(obj: dict[str, Any], key: str, where: str) -> Any:
    field = f"{where}.{key}" if where else key
    if obj.get(key) is None:
        raise ParseError(ParseReason.MISSING_FIELD, f"no {key}", field=field)
    return obj[key]


def _id(obj: dict[str, Any], where: str) -> str:
    value = _need(obj, "id", where)
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise ParseError(
            ParseReason.INVALID_TYPE,
            "an id is a whole number",
            field=f"{where}.id",
            snippet=repr(value),
        )
    return str(value)


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = _need(obj, key, where)
    if not isinstance(value, str):
        raise ParseError(ParseReason.INVALID_TYPE, f"{key} is a string", field=f"{where}.{key}")
    if not value.strip():
        raise ParseError(ParseReason.MISSING_FIELD, f"empty {key}", field=f"{where}.{key}")
    return value.strip()


def _https(src: str) -> str:
    return f"https:{src}" if src.startswith("//") else src


def _images(product: dict[str, Any], where: str) -> list[tuple[str, list[Any]]]:
    images = product.get("images") or []
    if not isinstance(images, list):
        raise ParseError(ParseReason.INVALID_TYPE, "images is a list", field=f"{where}.images")
    found = []
    for k, image in enumerate(images):
        if not isinstance(image, dict) or not isinstance(image.get("src"), str):
            raise ParseError(
                ParseReason.UNEXPECTED_SHAPE, "an image has a src", field=f"{where}.images[{k}]"
            )
        found.append((_https(image["src"]), image.get("variant_ids") or []))
    return found


def _tags(product: dict[str, Any]) -> list[str]:
    tags = product.get("tags") or []
    if isinstance(tags, str):  # older themes: one comma-separated string
        tags = tags.split(",")
    return [t.strip() for t in tags if isinstance(t, str) and t.strip()]


def _product(product: object, where: str, default: Category | None) -> tuple[_Product, list[Any]]:
    if not isinstance(product, dict):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "a product is an object", field=where)
    variants = _need(product, "variants", where)
    if not isinstance(variants, list):
        raise ParseError(ParseReason.INVALID_TYPE, "variants is a list", field=f"{where}.variants")
    if not variants:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "a product has at least one variant",
            field=f"{where}.variants",
        )
    product_type = product.get("product_type")
    types = [product_type] if isinstance(product_type, str) else []
    vendor = product.get("vendor")
    shared = _Product(
        id=_id(product, where),
        title=_text(product, "title", where),
        handle=_text(product, "handle", where),
        images=_images(product, where),
        category=category_from_labels(types) or category_from_labels(_tags(product)) or default,
        listed_at=timestamp(product.get("published_at"), field=f"{where}.published_at"),
        vendor=vendor.strip() or None if isinstance(vendor, str) else None,
    )
    return shared, variants


def _available(variant: dict[str, Any], where: str) -> bool:
    value = variant.get("available")
    if isinstance(value, bool):
        return value
    if value is not None:
        raise ParseError(
            ParseReason.INVALID_TYPE, "available is a boolean", field=f"{where}.available"
        )
    stock = variant.get("inventory_quantity")
    if isinstance(stock, int) and not isinstance(stock, bool):
        return stock > 0
    raise ParseError(
        ParseReason.MISSING_FIELD, "no available flag nor stock", field=f"{where}.available"
    )


def _variant(
    product: _Product, variant: object, *, where: str, base: str, currency: str
) -> tuple[Listing, list[FeedNote]]:
    if not isinstance(variant, dict):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "a variant is an object", field=where)
    variant_id = _id(variant, where)
    external_id = f"{product.id}:{variant_id}"
    variant_title = variant.get("title")
    if not isinstance(variant_title, str) or variant_title.strip() in {"", _DEFAULT_TITLE}:
        variant_title = None
    title = f"{product.title} - {variant_title.strip()}" if variant_title else product.title
    price = money(_need(variant, "price", where), currency, field=f"{where}.price")
    compare_at = variant.get("compare_at_price")
    compare = (
        None
        if compare_at in (None, "")
        else money(compare_at, currency, field=f"{where}.compare_at_price")
    )
    identifiers, notes = identifiers_from(
        sku=variant.get("sku"), barcode=variant.get("barcode"), external_id=external_id, where=where
    )
    facts = lift_grading(title)
    notes.extend(
        FeedNote(external_id, NoteCode.TITLE_FLAG, f"{where}.title", f) for f in facts.flags
    )
    featured = variant.get("featured_image")
    images = [_https(featured["src"])] if isinstance(featured, dict) and featured.get("src") else []
    images += [src for src, ids in product.images if int(variant_id) in ids]
    images += [src for src, _ in product.images]
    stock = variant.get("inventory_quantity")
    quantity = max(stock, 0) if isinstance(stock, int) and not isinstance(stock, bool) else None
    listing = build_listing(
        {
            "external_id": external_id,
            "title": title,
            "variant_title": variant_title,
            "url": f"{base}/products/{quote(product.handle, safe='')}?variant={variant_id}",
            "category": product.category,
            "identifiers": identifiers,
            "grading": facts.grading,
            "condition": facts.condition,
            "image_urls": tuple(dict.fromkeys(images)),
            "price": price,
            # A "was" price is only one above the price: Shopify admins leave equal (or stale,
            # lower) compare-at prices on variants that are not on sale.
            "compare_at_price": compare if compare and compare.amount > price.amount else None,
            "available": _available(variant, where),
            "quantity": quantity,
            "listed_at": product.listed_at,
            "seller": product.vendor,
        },
        where=where,
    )
    return listing, notes


def parse_shopify_products(
    payload: Any, *, base_url: str, currency: str, category: Category | None = None
) -> FeedPage:
    """Every variant of every product on one ``products.json`` page, as listings.

    Args:
        payload: the decoded JSON, or the raw body (``bytes``/``str``).
        base_url: the storefront origin, ``https://shop.example``.
        currency: the store's ISO-4217 currency (the feed does not say).
        category: the store's category when a product's type and tags say nothing.

    Raises:
        ParseError: the page is malformed anywhere (see the module docstring); nothing is returned.
        ValueError: ``currency`` is not ISO-4217 (a caller error).
    """
    try:
        currency_minor_unit(currency)
    except KeyError:
        raise ValueError(f"currency {currency!r} is not ISO-4217") from None
    if isinstance(payload, bytes | str):
        payload = load_json(payload)
    if not isinstance(payload, dict):
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE, "products.json is an object", snippet=repr(payload)
        )
    products = _need(payload, "products", "")
    if not isinstance(products, list):
        raise ParseError(ParseReason.INVALID_TYPE, "products is a list", field="products")
    base = base_url.rstrip("/")
    listings: list[Listing] = []
    notes: list[FeedNote] = []
    for i, raw in enumerate(products):
        product, variants = _product(raw, f"products[{i}]", category)
        for j, variant in enumerate(variants):
            listing, found = _variant(
                product, variant, where=f"products[{i}].variants[{j}]", base=base, currency=currency
            )
            listings.append(listing)
            notes.extend(found)
    return FeedPage(listings=tuple(listings), notes=tuple(notes))
