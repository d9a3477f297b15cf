"""A displayed price (``"US $1,234.56"``, ``"10 000,00 €"``, ``"1500円"``) → :class:`Money`.

The amount comes from **price-parser**, which reads locale formats (``$ 10.000,00``,
``10 000,00 €``, ``CHF 1'234.50``); the currency comes from the table below, not from guessing:

* a marker names the currency, from the table in ``_currencies`` (shared with the strict reader):
  ``US $``/``USD`` → USD, ``NZ$``/``NZD $`` → NZD, ``NT$`` → TWD, ``C$``/``CAN$`` → CAD, ``R$``
  → BRL, ``£``, ``€``, ``円``, ``₪``, ``грн.``, ``Kč``, ``Rp``… and any ISO-4217 code written next
  to the number (letters count only beside the number; signs anywhere);
* a shared sign needs context: ``$`` is USD unless ``default_currency`` is another dollar or peso
  (CAD, AUD…); ``¥`` is JPY unless the default is CNY; ``kr`` (SEK/NOK/DKK/ISK) and ``Rs``
  (INR/PKR/LKR…) only when the default (or ``locale``) says which one, and otherwise refused;
  ``元`` is CNY unless the currency, the default or the locale says TWD (``zh-TW``, ``zh_Hant``)
  or HKD (``zh-HK``);
* no marker at all: ``currency``, else ``default_currency``, else refused. A sign or a non-Latin
  word beside the number that the table does not know is refused, never read as the default;
* ``currency`` (the source's declared currency) is never overridden: a marker naming another
  one is ``currency_mismatch``.

Refused (``None``, or :class:`ParseError` with ``strict=True``): an unknown or ambiguous currency
(``unknown_currency``), text with no number, more than one number (a range, ``was $20 now $15``,
``US $12 (approx. C $15)``), a ``k``/``M`` multiplier, a minus sign (``invalid_value``), and more
decimals than the currency has (``¥1,500.50``: ``amount_precision``). ``"Free"`` is refused too: a
price of zero is not an observation.

``1.234`` and ``1,234`` (one separator, three digits after it) are read as thousands, as
price-parser does, except in a three-decimal currency (``KD 1.250``), where they are refused
(``invalid_value``); pass ``decimal_separator`` when the source is known.

Example:
    >>> parse_price("US $1,234.56")
    Money(amount=Decimal('1234.56'), currency='USD')
    >>> parse_price("$ 45.00", default_currency="CAD")
    Money(amount=Decimal('45.00'), currency='CAD')
    >>> parse_price("120 kr") is None
    True
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

from price_parser import Price
from pydantic import ValidationError

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money, currency_minor_unit

from ._currencies import (
    FAMILIES,
    Family,
    check_code,
    check_grouping,
    is_alphabetic,
    locale_currency,
    marker_code,
    markers,
)

__all__ = ["parse_price"]

_LETTER_BEFORE = r"(?<![^\W\d_])"
_LETTER_AFTER = r"(?![^\W\d_])"
_ALPHA = "|".join(re.escape(m) for m in markers() if is_alphabetic(m))
_SIGNS = "|".join(re.escape(m) for m in markers() if not is_alphabetic(m))
# At one position the first alternative wins: "NZD $" before "$", "RMB" before "RM". Letters
# (abbreviations and ISO codes) count only right next to the number, so "TOP", "ALL" or "PSA" in
# prose do not; signs count anywhere.
_MARKER_RE = re.compile(
    rf"(?P<prefixed>(?<![A-Za-z])[A-Z][A-Za-z]{{0,2}}\s?\$(?!S))"
    rf"|(?P<alpha>{_LETTER_BEFORE}(?:{_ALPHA})(?=\s?[\d.,])|(?<=[\d\-–])\s?(?:{_ALPHA}){_LETTER_AFTER})"
    rf"|(?P<sign>{_SIGNS})"
    rf"|(?P<iso>(?<![A-Za-z])[A-Z]{{3}}(?=\s?[\d.,])|(?<=\d)\s?[A-Z]{{3}}(?![A-Za-z]))"
)
# A word in another script than Latin right beside a number with no known marker ("100 сом") is
# taken for a currency the table does not know, and refused rather than read as the default.
_BESIDE = re.compile(r"([^\W\d_]+)\.?\s?(?=\d)|(?<=\d)\s?([^\W\d_]+)")
_NUMBER = re.compile(r"\d(?:[\d.,'’\s]*\d)?")
_MULTIPLIER = re.compile(r"\d\s*(?:k|K|m|M|mil|million|thousand|bn)(?!\w)")
_MINUS = re.compile(r"(?<![\d,.])[-−]\s*(?:[^\d\s]{0,4}\s*)?[.,]?\d")


def _check_code(code: str, what: str) -> str:
    try:
        currency_minor_unit(code)
    except KeyError:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY, f"{what} {code!r} is not ISO-4217", snippet=code
        ) from None
    return code.upper()


def _pick(
    family: Family,
    marker: str,
    stated: str | None,
    default: str | None,
    text: str,
    local: str | None = None,
) -> str:
    """The member of a family a shared sign is read as (today's rule, see the module docstring):
    the stated currency, else the default, else the locale's (``local``), else the usual one."""
    if stated is not None:
        if stated not in family.members:
            raise ParseError(
                ParseReason.CURRENCY_MISMATCH,
                f"{marker!r} is a {family.name} sign, the source says {stated}",
                snippet=text,
            )
        return stated
    chosen = (
        default if default in family.members else local if local in family.members else family.usual
    )
    if chosen is None:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY,
            f"{marker!r} could be any of {sorted(family.members)}; pass default_currency",
            snippet=text,
        )
    return chosen


def _unknown_markers(text: str, spans: list[tuple[int, int]]) -> None:
    def matched(start: int, end: int) -> bool:
        return any(s <= start and end <= e for s, e in spans)

    for i, ch in enumerate(text):
        if unicodedata.category(ch) == "Sc" and not matched(i, i + 1):
            raise ParseError(
                ParseReason.UNKNOWN_CURRENCY, f"{ch!r} is no currency sign we know", snippet=text
            )
    if spans:
        return  # a known marker is there: a word beside the number is prose ("価格 1500円")
    for word in _BESIDE.finditer(text):
        group = 1 if word[1] is not None else 2
        if not all("LATIN" in unicodedata.name(ch, "") for ch in word[group]):
            raise ParseError(
                ParseReason.UNKNOWN_CURRENCY,
                f"{word[group]!r} beside the number is no currency we know",
                snippet=text,
            )


def _currency(text: str, stated: str | None, default: str | None, local: str | None) -> str:
    found: set[str] = set()
    spans: list[tuple[int, int]] = []
    for match in _MARKER_RE.finditer(text):
        kind = match.lastgroup
        marker = match[0].strip()
        code = marker_code(marker)
        if kind == "iso" and code is None:
            continue  # three capitals that are no currency ("PSA 10")
        spans.append(match.span())
        if kind == "prefixed" and code is None:
            prefix = marker.rstrip("$").strip()
            if prefix == marker.rstrip("$"):  # glued: "XY$5" is a dollar we do not know
                raise ParseError(
                    ParseReason.UNKNOWN_CURRENCY, f"{marker!r} is no dollar we know", snippet=text
                )
            if isinstance(marker_code(prefix), str):  # "EUR $5": two currencies
                found.add(check_code(prefix, text))
            code = FAMILIES["$"]
        if isinstance(code, Family):
            found.add(_pick(code, marker, stated, default, text, local))
        elif code is not None:
            found.add(check_code(code, text))
    _unknown_markers(text, spans)
    if len(found) > 1:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY, f"several currencies: {sorted(found)}", snippet=text
        )
    if found:
        currency = found.pop()
        if stated is not None and currency != stated:
            raise ParseError(
                ParseReason.CURRENCY_MISMATCH,
                f"the price says {currency}, the source says {stated}",
                snippet=text,
            )
        return currency
    fallback = stated or default
    if fallback is None:
        raise ParseError(ParseReason.UNKNOWN_CURRENCY, "no currency marker", snippet=text)
    return fallback


def _parse(
    text: str,
    stated: str | None,
    default: str | None,
    decimal_separator: str | None,
    local: str | None = None,
) -> Money:
    if not isinstance(text, str):
        raise ParseError(ParseReason.INVALID_TYPE, "a price text is a string", snippet=repr(text))
    text = unicodedata.normalize("NFKC", text).strip()
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1:
        what = "no number" if not numbers else f"{len(numbers)} numbers"
        raise ParseError(ParseReason.INVALID_VALUE, f"{what} in a price", snippet=text)
    if _MULTIPLIER.search(text) or _MINUS.search(text):
        raise ParseError(ParseReason.INVALID_VALUE, "a multiplier or a sign", snippet=text)
    currency = _currency(text, stated, default, local)
    if decimal_separator is None:
        check_grouping(numbers[0], currency, text)
        marks = [ch for ch in numbers[0] if ch in ".,"]
        if len(set(marks)) == 2:  # "1.250,500": the last mark is the decimal one (price-parser
            decimal_separator = marks[-1]  # takes ",500" for a group of thousands)
    amount = Price.fromstring(text, decimal_separator=decimal_separator).amount
    if amount is None:
        raise ParseError(ParseReason.INVALID_VALUE, "no amount", snippet=text)
    if amount == 0:
        raise ParseError(ParseReason.INVALID_VALUE, "a zero price", snippet=text)
    try:
        return Money(amount=Decimal(str(amount)), currency=currency)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        reason = (
            ParseReason.AMOUNT_PRECISION
            if first["type"] == "amount_precision"
            else ParseReason.INVALID_VALUE
        )
        raise ParseError(reason, first["msg"], snippet=text) from None


def parse_price(
    text: str,
    *,
    default_currency: str | None = None,
    currency: str | None = None,
    decimal_separator: str | None = None,
    strict: bool = False,
    locale: str | None = None,
) -> Money | None:
    """Read one displayed price.

    Args:
        text: the price as shown (``"£1.234,50"``).
        default_currency: the currency of a text with no marker at all, and the pick for a
            shared sign (``$``, ``¥``, ``kr``); never read over a marker the text has.
        currency: the currency the source declares: a marker naming another one is refused
            (``currency_mismatch``), a shared sign must fit it, and a text without a marker
            takes it.
        decimal_separator: ``"."`` or ``","`` when the source is known; else price-parser guesses.
        strict: raise instead of returning ``None``.
        locale: the source's locale or country (``zh-TW``, ``sv_SE``, ``HK``): picks the member
            of a shared sign after ``currency`` and ``default_currency`` (``元`` is TWD in
            ``zh-TW``, HKD in ``zh-HK``, else CNY; ``kr`` is SEK in ``sv-SE``); never the
            currency of a text without a marker.

    Returns:
        The :class:`Money`, or ``None`` when the text is refused (see the module docstring).

    Raises:
        ParseError: only with ``strict=True``: ``unknown_currency``, ``currency_mismatch``,
            ``invalid_value``, ``amount_precision`` or ``invalid_type``.
        ValueError: ``default_currency`` or ``currency`` is not an ISO-4217 code (a caller
            error, always raised).
    """
    default = stated = None
    try:
        if default_currency is not None:
            default = _check_code(default_currency, "default_currency")
        if currency is not None:
            stated = _check_code(currency, "currency")
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    try:
        return _parse(text, stated, default, decimal_separator, locale_currency(locale))
    except ParseError:
        if strict:
            raise
        return None
