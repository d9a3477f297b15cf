"""schema.org Product/Offer pieces read into :class:`Listing` fields: types, text, offers, price
and currency, availability, identifiers, images. Private to ``structured``; the rules are
documented on :func:`~rareindex_adapters.structured.listings_from_products`.
"""

from __future__ import annotations

import html as htmllib
import re
from decimal import Decimal
from typing import Any
from urllib.parse import urljoin

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

from ._amounts import money_from_number, parse_money
from ._rejected import bare_message

__all__ = [
    "clean_text",
    "expand_offers",
    "identifiers_of",
    "image_urls",
    "is_available",
    "local_name",
    "offer_price",
    "range_prices",
    "schema_types",
]

# schema.org ItemAvailability names, and Open Graph's "out of stock"/"oos", case-folded.
_UNAVAILABLE = frozenset({"outofstock", "soldout", "discontinued", "oos"})
_MACHINE_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_ISBN = re.compile(r"[0-9]{9}[0-9X]|[0-9]{13}")


def schema_types(node: dict[str, Any]) -> set[str]:
    """``@type`` (or microdata's ``type``) as local names: ``https://schema.org/Offer`` → Offer."""
    raw = node.get("@type", node.get("type", ()))
    names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return {str(n).rsplit("/", 1)[-1].rsplit(":", 1)[-1] for n in names}


def clean_text(value: Any) -> str | None:
    """A property as one line of text (entities decoded); a Thing gives its ``name``."""
    if isinstance(value, dict):
        value = value.get("name") or value.get("@value")
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or isinstance(value, dict | list):
        return None
    return " ".join(htmllib.unescape(str(value)).split()) or None


def local_name(value: Any) -> str | None:
    """The last path segment of an enumeration URL: ``https://schema.org/InStock`` → InStock."""
    text = clean_text(value)
    return text.rstrip("/").rsplit("/", 1)[-1] if text else None


def expand_offers(
    product: dict[str, Any], where: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The product's offers, and its price ranges: ``(offers, ranges)``.

    An AggregateOffer that lists its ``offers`` is expanded into them. One that lists none
    (only ``lowPrice``/``highPrice``) is a summary: dropped when the product has any other
    offer (else it would be a phantom listing beside the real ones), and returned in ``ranges``
    when it is all the product states.

    Raises:
        ParseError: ``missing_field`` (no offers) or ``unexpected_shape`` (an offer that is not
            an object).
    """
    raw = product.get("offers")
    if not raw:
        raise ParseError(
            ParseReason.MISSING_FIELD, "product has no offers", field=f"{where}.offers"
        )
    offers: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    for offer in raw if isinstance(raw, list) else [raw]:
        if not isinstance(offer, dict):
            raise ParseError(
                ParseReason.UNEXPECTED_SHAPE,
                "an offer is not an object",
                field=f"{where}.offers",
                snippet=repr(offer),
            )
        inner = offer.get("offers")
        if "AggregateOffer" in schema_types(offer) and inner:
            listed = inner if isinstance(inner, list) else [inner]
            offers.extend(o for o in listed if isinstance(o, dict))
        elif "AggregateOffer" in schema_types(offer):
            summaries.append(offer)
        else:
            offers.append(offer)
    return offers, [] if offers else summaries


def range_prices(
    offer: dict[str, Any], where: str, default_currency: str | None
) -> tuple[Money, Money | None]:
    """An AggregateOffer's ``lowPrice`` and ``highPrice`` (``None`` when not stated).

    Raises:
        ParseError: with ``field`` at ``{where}.lowPrice`` or ``{where}.highPrice``.
    """
    low = offer.get("lowPrice")
    if low in (None, ""):
        low = offer.get("price")  # some sites write the floor as ``price``
    if low in (None, ""):
        raise ParseError(
            ParseReason.MISSING_FIELD, "AggregateOffer has no lowPrice", field=f"{where}.lowPrice"
        )
    currency = clean_text(offer.get("priceCurrency"))
    found = _amount(low, currency, default_currency, f"{where}.lowPrice")
    high = offer.get("highPrice")
    if high in (None, ""):
        return found, None
    return found, _amount(high, currency or found.currency, None, f"{where}.highPrice")


def offer_price(offer: dict[str, Any], where: str, default_currency: str | None) -> Money:
    """``price`` (else ``priceSpecification.price``, else ``lowPrice``) in ``priceCurrency``.

    Raises:
        ParseError: with ``field`` at ``{where}.price``.
    """
    spec = offer.get("priceSpecification")
    specs = spec if isinstance(spec, list) else [spec] if isinstance(spec, dict) else []
    sources = [offer, *(s for s in specs if isinstance(s, dict))]
    amount = next(
        (s[k] for k in ("price", "lowPrice") for s in sources if s.get(k) not in (None, "")), None
    )
    currency = next(
        (str(s["priceCurrency"]).strip() for s in sources if s.get("priceCurrency")), None
    )
    if amount is None:
        raise ParseError(ParseReason.MISSING_FIELD, "offer has no price", field=f"{where}.price")
    return _amount(amount, currency, default_currency, f"{where}.price")


def _amount(amount: Any, currency: str | None, default_currency: str | None, field: str) -> Money:
    try:
        if isinstance(amount, str) and _MACHINE_NUMBER.fullmatch(amount.strip()):
            amount = Decimal(amount.strip())  # schema.org's own format: "." is the decimal mark
        if isinstance(amount, str):
            return parse_money(amount, currency=currency, fallback=default_currency)
        return money_from_number(amount, currency=currency, fallback=default_currency)
    except ParseError as exc:
        raise ParseError(exc.reason, bare_message(exc), field=field, snippet=exc.snippet) from None


def identifiers_of(product: dict[str, Any], offer: dict[str, Any]) -> dict[str, str]:
    """``sku``, and GTIN-12/13 (a GTIN-14 with a leading 0) and ISBN when they fit."""
    ids: dict[str, str] = {}
    sku = clean_text(offer.get("sku") or product.get("sku"))
    if sku:
        ids["sku"] = sku
    for key in ("gtin13", "gtin12", "gtin14", "gtin"):
        gtin = clean_text(offer.get(key) or product.get(key)) or ""
        if key == "gtin14" and gtin.startswith("0"):
            gtin = gtin[1:]
        if gtin.isdigit() and len(gtin) in (12, 13):
            ids.setdefault("ean" if len(gtin) == 13 else "upc", gtin)
    isbn = (clean_text(product.get("isbn")) or "").replace("-", "")
    if _ISBN.fullmatch(isbn):
        ids["isbn"] = isbn
    return ids


def image_urls(product: dict[str, Any], url: str) -> tuple[str, ...]:
    """``image`` as absolute URLs (a string, a list, or ImageObjects)."""
    raw = product.get("image")
    images = raw if isinstance(raw, list) else [raw] if raw else []
    found = (
        clean_text(i.get("url") or i.get("contentUrl")) if isinstance(i, dict) else clean_text(i)
        for i in images
    )
    return tuple(urljoin(url, i) for i in found if i)


def is_available(offer: dict[str, Any]) -> bool:
    """False for ``OutOfStock``/``SoldOut``/``Discontinued`` (Open Graph: ``out of stock``,
    ``oos``); true otherwise, and when the offer does not say."""
    name = local_name(offer.get("availability")) or ""
    return name.replace(" ", "").replace("_", "").lower() not in _UNAVAILABLE
