"""Google Merchant Center product items (RSS or Atom with the ``http://base.google.com/ns/1.0``
namespace, usually prefixed ``g:``) to :class:`Listing` records. Private to ``feeds``.

* An entry is a product when it has ``g:id`` or ``g:price``; the namespace is found by its URI,
  so a feed that binds it to another prefix reads the same.
* ``external_id`` and ``identifiers.sku`` are ``g:id`` (required); the title is ``g:title``,
  else the entry's title; the URL ``g:link``, else the entry's link.
* The price is ``g:price`` as Merchant Center writes it (``"15.00 USD"``; a printed form such as
  ``"$15.00"`` takes the caller's ``currency``). A lower ``g:sale_price`` becomes the price and
  ``g:price`` the ``compare_at_price``. A ``g:sale_price_effective_date`` (ISO 8601 interval
  ``start/end``, ``2025-11-28T00:00-0500/2025-12-01T23:59-0500``) limits it to that interval,
  judged at ``at``: the time the caller fetched the feed, else the item's own date (``updated``,
  ``pubDate``), else the feed's. The adapter reads no clock: with none of those it lists the
  regular price rather than guess the sale is on; outside the interval ``g:price`` is the price.
  A side without an offset is UTC; a date alone starts at 00:00 (start) or runs to the end of
  that day (end).
  An interval that cannot be read rejects the item (``invalid_value``).
* ``g:availability`` ``out_of_stock`` (or ``out of stock``) is unavailable, any other value
  (``in_stock``, ``preorder``, ``backorder``) available; ``g:condition`` is kept as written
  (``new``, ``used``, ``refurbished``); ``g:gtin`` of 12 or 13 digits is the UPC or EAN.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Listing, Money, parse_normalized

from . import _offers as _offer
from ._amounts import money_from_number, parse_money
from ._rejected import bare_message

__all__ = [
    "MERCHANT_NAMESPACE",
    "effective_interval",
    "is_product",
    "listing",
    "merchant_prefix",
    "sale_applies",
]

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


def _moment(text: str, *, end: bool, interval: str) -> datetime:
    text = text.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = datetime.combine(date.fromisoformat(text), datetime.min.time(), tzinfo=UTC)
            return day + timedelta(days=1, microseconds=-1) if end else day
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            f"{text!r} is not an ISO 8601 date or time",
            field="g:sale_price_effective_date",
            snippet=interval,
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def effective_interval(text: str) -> tuple[datetime, datetime]:
    """``g:sale_price_effective_date`` (``start/end``) as two aware datetimes.

    Raises:
        ParseError: ``invalid_value`` (not two ISO 8601 times, or the end before the start).
    """
    parts = text.split("/")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "not an ISO 8601 interval start/end",
            field="g:sale_price_effective_date",
            snippet=text,
        )
    start = _moment(parts[0], end=False, interval=text)
    end = _moment(parts[1], end=True, interval=text)
    if end <= start:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            "the interval ends before it starts",
            field="g:sale_price_effective_date",
            snippet=text,
        )
    return start, end


def sale_applies(interval: str | None, at: datetime | None) -> bool:
    """Whether a ``g:sale_price`` is the price at ``at``: always without an interval; inside
    ``[start, end]`` with one; never with an interval and no time to judge it by."""
    if interval is None:
        return True
    start, end = effective_interval(interval)
    if at is None:
        return False
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return start <= at <= end


def listing(
    entry: dict[str, Any],
    prefix: str,
    *,
    link: str | None,
    currency: str | None,
    at: datetime | None = None,
) -> Listing:
    """One Merchant product item as a :class:`Listing`; ``link`` is the entry's own link, ``at``
    the time a dated sale price is judged at (see the module docstring).

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
    interval = _field(entry, prefix, "sale_price_effective_date")
    if raw_sale is not None and sale_applies(interval, at):
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
