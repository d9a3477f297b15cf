"""Amounts as printed, to :class:`Money`: ``$10,000.00``, ``10.000,00 €``, ``EUR 1.250,50``,
``CHF 1'250.00``, ``1.250,-``.

Private to the adapters (``pdf``, ``structured``); ``prices.parse_price`` is the public, lenient
reader. This one is strict and says why it refused, because a price-realised row or an offer it
cannot read is returned as rejected with a reason, not skipped.

Reading the number: the last ``.`` or ``,`` followed by one or two digits is the decimal mark; any
other ``.`` ``,`` ``'``, typographic apostrophe or (no-break) space separates groups of exactly
three digits (or, in a rupee, of two digits before the last three: ``₹1,23,456.00``).
``1.250`` and ``1,250`` are therefore one thousand two hundred and fifty, except in a three-decimal
currency (``KD 1.250``), where they are refused as ambiguous.

Reading the currency: the markers come from ``_currencies`` (the one table both readers share). An
ISO-4217 code, an unambiguous symbol or abbreviation (``€`` ``NZ$`` ``NZD $`` ``грн.`` ``Kč``) names
it; a family (``$``, ``¥``, ``kr``, ``Rs``) needs a stated currency or fallback that it fits. A
marker that names another currency than the stated one is ``currency_mismatch``; the fallback is
used only when the text has no marker at all. ``1.250`` in a three-decimal currency is refused.
"""

from __future__ import annotations

import re
from decimal import Decimal

from pydantic import ValidationError

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

from ._currencies import (
    Family,
    check_code,
    check_grouping,
    locale_currency,
    marker_code,
    markers,
)

__all__ = ["is_currency_marker", "money_from_number", "parse_money"]

_MARKER = "|".join([r"[A-Z][A-Za-z]{0,2}\s?\$", r"[A-Z]{3}", *(re.escape(m) for m in markers())])
_GROUP = r"[.,'’ ]"  # no-break spaces are plain spaces by now
_AMOUNT = re.compile(
    rf"(?P<pre>{_MARKER})?\s*"
    rf"(?P<num>\d{{1,3}}(?P<sep>{_GROUP})\d{{3}}(?:(?P=sep)\d{{3}})*(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
    rf"|(?P<lakh>\d{{1,2}}(?:,\d\d)+,\d{{3}}(?:\.\d+)?))"  # Indian grouping: ₹1,23,456.00
    rf"(?:[.,]-)?\s*(?P<post>{_MARKER})?"
)


def is_currency_marker(token: str) -> bool:
    """Whether ``token`` alone names a currency (``EUR``, ``€``, ``NZ$``) or a family (``$``)."""
    return marker_code(token) is not None


def _code_for(marker: str, text: str) -> str | Family:
    code = marker_code(marker)
    if code is None:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY, f"{marker!r} is not a currency", snippet=marker
        )
    return code if isinstance(code, Family) else check_code(code, text)


def _resolve(
    found: list[str],
    currency: str | None,
    fallback: str | None,
    text: str,
    local: str | None = None,
) -> str:
    """The one currency the markers and the stated currency agree on."""
    codes = [_code_for(m, text) for m in found]
    for code in codes:
        if isinstance(code, str):
            if currency is not None and code != currency:
                raise ParseError(
                    ParseReason.CURRENCY_MISMATCH,
                    f"amount says {code}, the source says {currency}",
                    snippet=text,
                )
            currency = code
    for code in codes:
        if isinstance(code, Family):
            if currency is None and fallback in code.members:
                currency = fallback
            if currency is None and local in code.members:
                currency = local  # the source's locale: 元 in zh-TW
            if currency is None:
                currency = code.unstated  # 元 with nothing stated: CNY
            if currency is None:
                raise ParseError(
                    ParseReason.UNKNOWN_CURRENCY,
                    f"the {code.name} sign in {text!r} needs a stated currency",
                    snippet=text,
                )
            if currency not in code.members:
                raise ParseError(
                    ParseReason.CURRENCY_MISMATCH,
                    f"{text!r} cannot be {currency}",
                    snippet=text,
                )
    if currency is None:
        currency = fallback
    if currency is None:
        raise ParseError(ParseReason.UNKNOWN_CURRENCY, f"no currency for {text!r}", snippet=text)
    return currency


def _money(amount: Decimal | int, currency: str, text: str) -> Money:
    try:
        return Money(amount=amount, currency=currency)
    except ValidationError as exc:
        kind = exc.errors(include_url=False)[0]["type"]
        reason = {
            "amount_precision": ParseReason.AMOUNT_PRECISION,
            "unknown_currency": ParseReason.UNKNOWN_CURRENCY,
        }.get(kind, ParseReason.INVALID_VALUE)
        raise ParseError(reason, f"{text!r} is not a price in {currency}", snippet=text) from None


def _decimal(num: str, sep: str | None) -> Decimal:
    if sep:
        num = num.replace(sep, "")
    return Decimal(num.replace(",", "."))


def parse_money(
    text: str,
    *,
    currency: str | None = None,
    fallback: str | None = None,
    locale: str | None = None,
) -> Money:
    """Read one printed amount. ``currency`` is stated by the source and must agree with any
    marker in the text; ``fallback`` is used only when the text names no currency of its own;
    ``locale`` (``zh-TW``, ``sv-SE``) picks the member of a shared sign after both.

    Raises:
        ParseError: ``invalid_value`` (not an amount), ``unknown_currency``,
            ``currency_mismatch`` or ``amount_precision``.
    """
    cleaned = " ".join(text.split())
    match = _AMOUNT.fullmatch(cleaned)
    if match is None:
        raise ParseError(ParseReason.INVALID_VALUE, f"{text!r} is not an amount", snippet=text)
    found = [m for m in (match["pre"], match["post"]) if m]
    code = _resolve(
        found,
        currency and currency.upper(),
        fallback and fallback.upper(),
        text,
        locale_currency(locale),
    )
    check_grouping(match["num"], code, text)
    return _money(_decimal(match["num"], "," if match["lakh"] else match["sep"]), code, text)


def money_from_number(
    value: Decimal | int, *, currency: str | None, fallback: str | None = None
) -> Money:
    """An amount that arrived as a number (JSON parsed with ``parse_float=Decimal``).

    Raises:
        ParseError: ``float_money`` for a float, ``unknown_currency`` when neither currency is
            given, or what :class:`Money` refuses.
    """
    if isinstance(value, float):
        raise ParseError(ParseReason.FLOAT_MONEY, f"{value!r} is a float", snippet=repr(value))
    if isinstance(value, bool):
        raise ParseError(
            ParseReason.INVALID_TYPE, "a boolean is not an amount", snippet=repr(value)
        )
    code = currency or fallback
    if code is None:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY, f"no currency for {value}", snippet=str(value)
        )
    return _money(value, code.upper(), str(value))
