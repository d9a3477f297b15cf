"""Google Merchant Center product items (RSS or Atom with the ``http://base.google.com/ns/1.0``
namespace, usually prefixed ``g:``) to :class:`Listing` records. Private to ``feeds``.

* An entry is a product when it has ``g:id`` or ``g:price``; the namespace is found by its URI,
  so a feed that binds it to another prefix reads the same.
* ``external_id`` and ``identifiers.sku`` are ``g:id`` (required); the title is ``g:title``,
  else the entry's title; the URL ``g:link``, else the entry's link.
* The price is ``g:price`` as Merchant Center writes it (``"15.00 USD"``; a printed form such as
  ``"$15.00"`` takes the caller's ``currency``). A lower ``g:sale_price`` becomes the price and
  ``g:price`` the ``compare_at_price``, unless a ``g:sale_price_effective_date`` limits it: the
  adapter has no clock, so it lists the regular price rather than guess the sale is on.
* ``g:availability`` ``out_of_stock`` (or ``out of stock``) is unavailable, any other value
  (``in_stock``, ``preorder``, ``backorder``) available; ``g:condition`` is kept as written
  (``new``, ``used``, ``refurbished``); ``g:gtin`` of 12 or 13 digits is the UPC or EAN.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from .._errors import ParseError, ParseReason
from .._money import Money
from .._normalized import Listing, parse_normalized
from . import _offers as _offer
from ._amounts import money_from_number, parse_money
from ._rejected import bare_message

__all__ = ["MERCHANT_NAMESPACE", "is_product", "listing", "merchant_prefix"]

MERCHANT_NAMESPACE = "http://base.google.com/ns/1.0"
_PRICE = re.compile(r"(?P<amount>\d+(?:\.\d+)?)\s*(?P<code>[A-Za-z]{3})")
_PRICE_CODE_FIRST = re.compile(r"(?P<code>[A-Za-z]{3})\s*(?P<amount>\d+(?:\.\d+)?)")
_UNAVAILABLE = frozenset({"out_of_stock", "out of stock", "outofstock"})


def merchant_prefix(namespaces: dict[str, str]) -> str | None:
    """The prefix a feed binds the Merchant namespace to (feedparser keys its elements
    ``<prefix>_<name>``), or None."""
    return next((p for p, uri in namespaces.items() if uri.rstrip("/") == MERCHANT_NAMESPACE), None)


def _field(entry: dict[str, Any], prefix: str, name: str) -> str | None:
    value = dict.get(entry, f"{prefix}_{name}")
    return " ".join(str(value).split()) or None if value is not None else None


def is_product(entry: dict[str, Any], prefix: str | None) -> bool:
    """Whether a feed entry is a Merchant product item rather than a news entry."""
    return prefix is not None and any(
        dict.get(entry, f"{prefix}_{name}") is not None for name in ("id", "price")
    )


def _money(text: str, currency: str | None, field: str) -> Money:
    try:
        for pattern in (_PRICE, _PRICE_CODE_FIRST):
            if found := pattern.fullmatch(text):
                return money_from_number(
                    Decimal(found["amount"]), currency=found["code"].upper(), fallback=None
                )
        return parse_money(text, fallback=currency)
    except ParseError as exc:
        raise ParseError(exc.reason, bare_message(exc), field=field, snippet=text) from None


def listing(
    entry: dict[str, Any], prefix: str, *, link: str | None, currency: str | None
) -> Listing:
    """One Merchant product item as a :class:`Listing`; ``link`` is the entry's own link.

    Raises:
        ParseError: ``field`` names the Merchant attribute (``g:id``, ``g:price`` …).
    """
    item_id = _field(entry, prefix, "id")
    if item_id is None:
        raise ParseError(ParseReason.MISSING_FIELD, "product has no id", field="g:id")
    title = _field(entry, prefix, "title") or " ".join(str(dict.get(entry, "title", "")).split())
    if not title:
        raise ParseError(
            ParseReason.MISSING_FIELD, "product has no title", field="g:title", snippet=item_id
        )
    url = _field(entry, prefix, "link") or link
    if not url or not url.startswith(("http://", "https://")):
        raise ParseError(
            ParseReason.MISSING_FIELD,
            "product has no absolute link",
            field="g:link",
            snippet=url or item_id,
        )
    raw_price = _field(entry, prefix, "price")
    if raw_price is None:
        raise ParseError(
            ParseReason.MISSING_FIELD, "product has no price", field="g:price", snippet=item_id
        )
    price = _money(raw_price, currency, "g:price")
    compare_at = None
    raw_sale = _field(entry, prefix, "sale_price")
    if raw_sale is not None and _field(entry, prefix, "sale_price_effective_date") is None:
        sale = _money(raw_sale, price.currency, "g:sale_price")
        if sale.currency == price.currency and sale.amount < price.amount:
            price, compare_at = sale, price
    availability = (_field(entry, prefix, "availability") or "").lower()
    images = [_field(entry, prefix, "image_link"), _field(entry, prefix, "additional_image_link")]
    record = {
        "kind": "listing",
        "external_id": item_id,
        "title": title,
        "url": url,
        "price": price,
        "compare_at_price": compare_at,
        "available": availability not in _UNAVAILABLE,
        "identifiers": _offer.identifiers_of(
            {"sku": item_id, "gtin": _field(entry, prefix, "gtin")}, {}
        ),
        "image_urls": tuple(i for i in images if i),
        "condition": (_field(entry, prefix, "condition") or "").lower() or None,
        "variant_title": None,
    }
    parsed = parse_normalized(record)
    if not isinstance(parsed, Listing):  # pragma: no cover - kind is fixed above
        raise TypeError(type(parsed).__name__)
    return parsed
