"""A displayed price (``"US $1,234.56"``, ``"10 000,00 €"``, ``"1500円"``) → :class:`Money`.

The amount comes from **price-parser**, which reads locale formats (``$ 10.000,00``,
``10 000,00 €``, ``CHF 1'234.50``); the currency comes from the table below, not from guessing:

* an explicit marker wins: ``US $``/``USD`` → USD, ``C$``/``CA$`` → CAD, ``A$`` → AUD, ``£`` → GBP,
  ``€`` → EUR, ``円`` → JPY, ``R$`` → BRL, and any ISO-4217 code written next to the number;
* a shared symbol needs context: ``$`` is USD unless ``default_currency`` is another dollar or peso
  (CAD, AUD…); ``¥`` is JPY unless the default is CNY; ``kr`` is SEK/NOK/DKK/ISK only when the
  default says which one, and otherwise refused;
* no marker at all: ``default_currency``, or refused.

Refused (``None``, or :class:`ParseError` with ``strict=True``): an unknown or ambiguous currency
(``unknown_currency``), text with no number, more than one number (a range, ``was $20 now $15``,
``US $12 (approx. C $15)``), a ``k``/``M`` multiplier, a minus sign (``invalid_value``), and more
decimals than the currency has (``¥1,500.50``: ``amount_precision``). ``"Free"`` is refused too: a
price of zero is not an observation.

``1.234`` and ``1,234`` (one separator, three digits after it) are read as thousands, as
price-parser does; pass ``decimal_separator`` when a source means otherwise (a 3-decimal KWD shop).

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

from .._errors import ParseError, ParseReason
from .._money import Money, currency_minor_unit

__all__ = ["parse_price"]

# Currencies that write their amounts with a bare "$" (so "$" follows the default among them).
_DOLLARS = frozenset(
    {"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "MXN", "ARS", "CLP", "COP", "BRL"}
)
_FAMILIES: dict[str, tuple[str | None, frozenset[str]]] = {
    # family: (currency when the default is not a member, members the default may pick)
    "$": ("USD", _DOLLARS),
    "¥": ("JPY", frozenset({"JPY", "CNY"})),
    "kr": (None, frozenset({"SEK", "NOK", "DKK", "ISK"})),
}
# (marker regex, ISO code or family). At one position the first row wins: "US $" before "$".
_MARKERS: tuple[tuple[str, str], ...] = (
    (r"(?<![A-Za-z])US\s?\$|(?<![A-Za-z])USD(?![A-Za-z])", "USD"),
    (r"(?<![A-Za-z])(?:CA|C|CAD)\s?\$", "CAD"),
    (r"(?<![A-Za-z])(?:AU|A|AUD)\s?\$", "AUD"),
    (r"(?<![A-Za-z])NZ\s?\$", "NZD"),
    (r"(?<![A-Za-z])HK\s?\$", "HKD"),
    (r"(?<![A-Za-z])SG?\s?\$", "SGD"),
    (r"(?<![A-Za-z])R\s?\$", "BRL"),
    (r"(?<![A-Za-z])MX\s?\$", "MXN"),
    (r"\$", "$"),
    (r"£", "GBP"),
    (r"€", "EUR"),
    (r"円", "JPY"),
    (r"(?<![A-Za-z])(?:CN|RMB)\s?¥|元|(?<![A-Za-z])RMB(?![A-Za-z])", "CNY"),
    (r"(?<![A-Za-z])JP\s?¥", "JPY"),
    (r"¥", "¥"),
    (r"₩", "KRW"),
    (r"₹", "INR"),
    (r"₽", "RUB"),
    (r"₺", "TRY"),
    (r"zł", "PLN"),
    (r"Kč", "CZK"),
    (r"(?<![A-Za-z])S?Fr\.", "CHF"),
    (r"(?<![A-Za-z])[Kk]r\.?(?![A-Za-z])", "kr"),
    # An ISO code counts only right next to the number, so "TOP", "ALL" or "PSA" in prose do not.
    (r"(?<![A-Za-z])[A-Z]{3}(?=\s?[\d.,])|(?<=\d)\s?[A-Z]{3}(?![A-Za-z])", "ISO"),
)
_MARKER_RE = re.compile("|".join(f"(?P<m{i}>{rx})" for i, (rx, _) in enumerate(_MARKERS)))
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


def _currency(text: str, default: str | None) -> str:
    found: set[str] = set()
    for match in _MARKER_RE.finditer(text):
        group = next(k for k, v in match.groupdict().items() if v is not None)
        kind = _MARKERS[int(group[1:])][1]
        if kind == "ISO":
            code = match[0].strip()
            try:
                found.add(_check_code(code, "currency"))
            except ParseError:
                continue  # three capitals that are no currency ("PSA 10")
        elif kind in _FAMILIES:
            fallback, members = _FAMILIES[kind]
            chosen = default if default in members else fallback
            if chosen is None:
                raise ParseError(
                    ParseReason.UNKNOWN_CURRENCY,
                    f"{match[0]!r} could be any of {sorted(members)}; pass default_currency",
                    snippet=text,
                )
            found.add(chosen)
        else:
            found.add(kind)
    if len(found) > 1:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY, f"several currencies: {sorted(found)}", snippet=text
        )
    if found:
        return found.pop()
    if default is None:
        raise ParseError(ParseReason.UNKNOWN_CURRENCY, "no currency marker", snippet=text)
    return default


def _parse(text: str, default: str | None, decimal_separator: str | None) -> Money:
    if not isinstance(text, str):
        raise ParseError(ParseReason.INVALID_TYPE, "a price text is a string", snippet=repr(text))
    text = unicodedata.normalize("NFKC", text).strip()
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1:
        what = "no number" if not numbers else f"{len(numbers)} numbers"
        raise ParseError(ParseReason.INVALID_VALUE, f"{what} in a price", snippet=text)
    if _MULTIPLIER.search(text) or _MINUS.search(text):
        raise ParseError(ParseReason.INVALID_VALUE, "a multiplier or a sign", snippet=text)
    currency = _currency(text, default)
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
    decimal_separator: str | None = None,
    strict: bool = False,
) -> Money | None:
    """Read one displayed price.

    Args:
        text: the price as shown (``"£1.234,50"``).
        default_currency: the source's currency when the text has no marker, and the pick for
            a shared symbol (``$``, ``¥``, ``kr``).
        decimal_separator: ``"."`` or ``","`` when the source is known; else price-parser guesses.
        strict: raise instead of returning ``None``.

    Returns:
        The :class:`Money`, or ``None`` when the text is refused (see the module docstring).

    Raises:
        ParseError: only with ``strict=True``: ``unknown_currency``, ``invalid_value``,
            ``amount_precision`` or ``invalid_type``.
        ValueError: ``default_currency`` is not an ISO-4217 code (a caller error, always raised).
    """
    default = None
    if default_currency is not None:
        try:
            default = _check_code(default_currency, "default_currency")
        except ParseError as exc:
            raise ValueError(str(exc)) from None
    try:
        return _parse(text, default, decimal_separator)
    except ParseError:
        if strict:
            raise
        return None
