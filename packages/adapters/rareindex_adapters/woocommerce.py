"""WooCommerce Store API ``/wp-json/wc/store/v1/products`` → :class:`Listing`
(docs/domain.md#store-feeds).

* Prices are **minor-unit strings** read with the payload's own ``prices.currency_minor_unit``
  (``"1105"`` with 2 is 11.05; ``"11050"`` with 3 is 11.050). The unit is never assumed: without it
  the page fails with ``missing_field``. ``currency_code`` must be ISO-4217.
* ``compare_at_price`` is ``regular_price`` when it is above ``price`` (the product is on sale).
* ``available`` is ``is_in_stock``; ``quantity`` is ``low_stock_remaining`` when the store shows it.
* ``sku`` → :class:`Identifiers` as in :mod:`.storefront`; categories (names and slugs) → category,
  else the ``category`` argument.
* A **variable** (or grouped) product's own price is the cheapest child's: it is no ask for any one
  item. It yields no listing; its children's ids go to :attr:`FeedPage.follow_up` with a
  ``variations_pending`` note. Fetch each (``/products/<id>``) and parse it here: a ``variation``
  becomes a listing (:func:`parse_woo_product`) with ``external_id`` ``"<parent>:<id>"`` and
  its attributes after the name.
* A product whose price is empty (the shop sells it "on request") yields no listing and a
  ``no_price`` note. Anything malformed fails the whole page with :class:`ParseError`, as Shopify.

Paging: :func:`woo_next_page` reads ``X-WP-TotalPages`` and ``Link`` (whichever says "done" wins).

Example:
    >>> woo_next_page({"X-WP-TotalPages": "3"}, 3) is None
    True
    >>> woo_next_page({"Link": '<https://s.example/products?page=2>; rel="next"'}, 1)
    2
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Category, Listing, currency_minor_unit

from .pagination import Extracted, header_value, json_items, parse_link_header
from .storefront import (
    FeedNote,
    FeedPage,
    NoteCode,
    build_listing,
    category_from_labels,
    identifiers_from,
    load_json,
    minor_money,
)
from .titles import lift_grading

__all__ = [
    "WOO_MAX_PER_PAGE",
    "WOO_PRODUCTS_PATH",
    "extract_woo_page",
    "parse_woo_product",
    "parse_woo_products",
    "woo_next_page",
    "woo_products_url",
    "woo_variation_ids",
]

WOO_PRODUCTS_PATH = "/wp-json/wc/store/v1/products"
WOO_MAX_PER_PAGE = 100
_PARENT_TYPES = frozenset({"variable", "grouped"})


def woo_products_url(base_url: str, page: int = 1, per_page: int = WOO_MAX_PER_PAGE) -> str:
    """The Store API URL of one page of products.

    Raises:
        ValueError: ``page`` < 1 or ``per_page`` outside 1-100 (``0`` is a 400 since WC 10.6).
    """
    if page < 1 or not 1 <= per_page <= WOO_MAX_PER_PAGE:
        raise ValueError(
            f"page must be >= 1 and per_page 1-{WOO_MAX_PER_PAGE}, got {page}, {per_page}"
        )
    return f"{base_url.rstrip('/')}{WOO_PRODUCTS_PATH}?per_page={per_page}&page={page}"


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = header_value(headers, name)
    if value is None:
        return None
    if not value.strip().isdigit():
        raise ParseError(
            ParseReason.INVALID_VALUE, f"{name} is not a count", field=name, snippet=value
        )
    return int(value)


def woo_next_page(headers: Mapping[str, str], page: int) -> int | None:
    """The page after ``page``, or ``None`` when the headers say this was the last.

    ``X-WP-TotalPages`` ≤ ``page`` means done; a ``Link`` header without ``rel="next"`` means done;
    either one saying done wins over the other. With neither header (a proxy stripped them), the
    answer is ``page + 1``: the crawl then ends on the first empty page, and
    :func:`.pagination.paginate` guards against a store that never sends one.

    Raises:
        ParseError: ``invalid_value`` for an ``X-WP-TotalPages`` that is not a count.
    """
    total_pages = _int_header(headers, "X-WP-TotalPages")
    if total_pages is not None and page >= total_pages:
        return None
    link = header_value(headers, "Link")
    if link is not None and "next" not in parse_link_header(link):
        return None
    return page + 1


def extract_woo_page(result: FetchResult) -> Extracted:
    """For :func:`.pagination.paginate` with :class:`.pagination.PageNumber`: the raw products,
    ``X-WP-Total``/``X-WP-TotalPages``, and ``has_more=False`` when ``Link`` has no next."""
    items = json_items()(result).items
    link = header_value(result.headers, "Link")
    links = parse_link_header(link)
    return Extracted(
        items=items,
        has_more=False if link is not None and "next" not in links else None,
        total=_int_header(result.headers, "X-WP-Total"),
        total_pages=_int_header(result.headers, "X-WP-TotalPages"),
        next_url=links.get("next"),
    )


_TAG = re.compile(r"<[^>]+>")


def _plain(value: str) -> str:
    """Text without tags or entities, each run of white space one space, none at the ends
    (``split()`` and ``re``'s ``\\s`` know the same white space characters)."""
    if "<" not in value and "&" not in value:  # no tag to drop, no entity to unescape
        return " ".join(value.split())
    return " ".join(html.unescape(_TAG.sub(" ", value)).split())


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _need(obj: dict[str, Any], key: str, where: str, kind: type) -> Any:
    field = _at(where, key)
    value = obj.get(key)
    if value is None:
        raise ParseError(ParseReason.MISSING_FIELD, f"no {key}", field=field)
    if isinstance(value, bool) is not (kind is bool) or not isinstance(value, kind):
        raise ParseError(
            ParseReason.INVALID_TYPE, f"{key} is not {kind}", field=field, snippet=repr(value)
        )
    return value


def _money_fields(prices: dict[str, Any], where: str) -> tuple[str, int]:
    code = _need(prices, "currency_code", where, str)
    unit = _need(prices, "currency_minor_unit", where, int)
    try:
        currency_minor_unit(code)
    except KeyError:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY,
            f"{code!r} is not ISO-4217",
            field=_at(where, "currency_code"),
        ) from None
    if unit < 0:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "negative minor unit",
            field=_at(where, "currency_minor_unit"),
        )
    return code, unit


def _labels(product: dict[str, Any], where: str) -> list[str]:
    categories = product.get("categories") or []
    if not isinstance(categories, list) or not all(isinstance(c, dict) for c in categories):
        raise ParseError(
            ParseReason.INVALID_TYPE, "categories are objects", field=_at(where, "categories")
        )
    return [_plain(c[k]) for c in categories for k in ("name", "slug") if isinstance(c.get(k), str)]


def _images(product: dict[str, Any], where: str) -> tuple[str, ...]:
    images = product.get("images") or []
    if not isinstance(images, list) or not all(
        isinstance(i, dict) and isinstance(i.get("src"), str) for i in images
    ):
        raise ParseError(ParseReason.INVALID_TYPE, "images have a src", field=_at(where, "images"))
    return tuple(dict.fromkeys(i["src"] for i in images))


def _children(product: dict[str, Any], kind: str, where: str) -> list[str]:
    key = "variations" if kind == "variable" else "grouped_products"
    children = product.get(key) or []
    ids = (
        [c.get("id") if isinstance(c, dict) else c for c in children]
        if isinstance(children, list)
        else None
    )
    if ids is None or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ParseError(ParseReason.INVALID_TYPE, f"{key} carry ids", field=_at(where, key))
    return [str(i) for i in ids]


def woo_variation_ids(product: dict[str, Any]) -> list[int]:
    """The ids of a ``variable`` product's variations, to fetch from ``/products/<id>``.

    Raises:
        ParseError: ``invalid_type`` at ``variations`` when they do not all carry integer ids.
    """
    return [int(i) for i in _children(product, "variable", "")]


def _product(
    product: object, where: str, default: Category | None
) -> tuple[Listing | None, list[FeedNote], list[str]]:
    if not isinstance(product, dict):
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE, "a product is an object", field=where or None
        )
    product_id = str(_need(product, "id", where, int))
    kind = product.get("type") or "simple"
    if kind in _PARENT_TYPES:
        children = _children(product, kind, where)
        note = FeedNote(
            product_id, NoteCode.VARIATIONS_PENDING, _at(where, "type"), ",".join(children)
        )
        return None, [note], children
    parent = product.get("parent")
    external_id = f"{parent}:{product_id}" if kind == "variation" and parent else product_id
    name = _plain(_need(product, "name", where, str))
    variation = product.get("variation")
    title = (
        f"{name} - {_plain(variation)}"
        if isinstance(variation, str) and _plain(variation)
        else name
    )
    prices = _need(product, "prices", where, dict)
    at = _at(where, "prices")
    currency, unit = _money_fields(prices, at)
    raw_price = _need(prices, "price", at, str)
    if not raw_price.strip():
        return None, [FeedNote(external_id, NoteCode.NO_PRICE, _at(at, "price"), None)], []
    price = minor_money(raw_price, currency, minor_unit=unit, field=_at(at, "price"))
    regular = prices.get("regular_price")
    compare = (
        minor_money(regular, currency, minor_unit=unit, field=_at(at, "regular_price"))
        if isinstance(regular, str) and regular.strip()
        else None
    )
    identifiers, notes = identifiers_from(
        sku=_plain(product["sku"]) if isinstance(product.get("sku"), str) else None,
        barcode=None,
        external_id=external_id,
        where=where,
    )
    facts = lift_grading(title)
    notes.extend(
        FeedNote(external_id, NoteCode.TITLE_FLAG, _at(where, "name"), f) for f in facts.flags
    )
    low_stock = product.get("low_stock_remaining")
    listing = build_listing(
        {
            "external_id": external_id,
            "title": title,
            "variant_title": _plain(variation)
            if isinstance(variation, str) and variation
            else None,
            "url": product.get("permalink") if isinstance(product.get("permalink"), str) else None,
            "category": category_from_labels(_labels(product, where)) or default,
            "identifiers": identifiers,
            "grading": facts.grading,
            "condition": facts.condition,
            "image_urls": _images(product, where),
            "price": price,
            "compare_at_price": compare if compare and compare.amount > price.amount else None,
            "available": _need(product, "is_in_stock", where, bool),
            "quantity": low_stock if isinstance(low_stock, int) and low_stock >= 0 else None,
        },
        where=where,
    )
    return listing, notes, []


def _page(entries: list[Any], where: str, category: Category | None) -> FeedPage:
    listings: list[Listing] = []
    notes: list[FeedNote] = []
    follow_up: list[str] = []
    for i, entry in enumerate(entries):
        listing, found, children = _product(entry, where.format(i=i), category)
        if listing is not None:
            listings.append(listing)
        notes.extend(found)
        follow_up.extend(children)
    return FeedPage(listings=tuple(listings), notes=tuple(notes), follow_up=tuple(follow_up))


def parse_woo_products(payload: Any, *, category: Category | None = None) -> FeedPage:
    """One page of the Store API product list.

    Args:
        payload: the decoded JSON array, or the raw body (``bytes``/``str``).
        category: the store's category when a product's categories say nothing.

    Raises:
        ParseError: anything malformed, naming ``[i].prices.currency_minor_unit`` and the like;
            a JSON object (a WP error body such as ``rest_no_route``) is ``unexpected_shape``.
    """
    if isinstance(payload, bytes | str):
        payload = load_json(payload)
    if not isinstance(payload, list):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "a list of products", snippet=repr(payload))
    return _page(payload, "[{i}]", category)


def parse_woo_product(payload: Any, *, category: Category | None = None) -> FeedPage:
    """One product as ``/products/<id>`` returns it: a variation fetched from ``follow_up``.

    Raises:
        ParseError: as :func:`parse_woo_products`; a list here is ``unexpected_shape``.
    """
    if isinstance(payload, bytes | str):
        payload = load_json(payload)
    if not isinstance(payload, dict):
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "one product object", snippet=repr(payload))
    return _page([payload], "", category)
