"""Currency markers as pages print them, in one table read by both price readers.

``_amounts.parse_money`` (strict: offers, price-realised tables) and ``prices.parse_price``
(lenient, public) ask this module what a marker names; neither keeps a symbol table of its own.

A marker names either **one currency** (``€``, ``NZ$``, ``грн.``, ``Kč``) or a **family** that
several currencies print (``$``, ``¥``, ``kr``, ``Rs``): a family needs a stated currency it fits,
and the text alone never decides between its members. ISO-4217 codes themselves are markers too;
which codes exist, and how many decimals each has, comes from the ``iso4217`` package (through
:func:`currency_minor_unit`), not from this file. A marker whose currency ISO-4217 no longer lists
(``CUC$``: the Cuban convertible peso, withdrawn in 2021; ``лв``: the lev, replaced by the euro in
2026) stays in the table so that it is *refused* with a reason instead of read as something else.

Example:
    >>> marker_code("NZD $")
    'NZD'
    >>> marker_code("$").members >= {"USD", "CAD", "MXN"}
    True
    >>> marker_code("PSA") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import currency_minor_unit

__all__ = [
    "DOLLAR_PREFIXES",
    "FAMILIES",
    "NAMED",
    "RUPEE",
    "YUAN",
    "Family",
    "check_code",
    "check_grouping",
    "is_alphabetic",
    "locale_currency",
    "marker_code",
    "markers",
]


@dataclass(frozen=True, slots=True)
class Family:
    """A marker that several currencies print: the page alone does not say which one.

    ``usual`` is the member the lenient ``parse_price`` reads when no stated currency fits (its
    long-standing rule: a bare ``$`` is USD, a bare ``¥`` JPY); ``None`` means always refused.
    ``unstated`` is the member the strict reader takes too when the source states nothing: ``元``
    is CNY unless the source says TWD or HKD (its currency, or its locale: ``zh-TW``, ``zh-HK``).
    A locale (:func:`locale_currency`) picks a member only after a stated or default currency.
    """

    name: str
    members: frozenset[str]
    usual: str | None = None
    unstated: str | None = None


# The dollar and peso family: every currency whose pages print a bare "$".
DOLLAR = Family(
    "dollar or peso",
    frozenset(
        {
            # dollars
            "USD", "CAD", "AUD", "NZD", "HKD", "SGD", "TWD", "JMD", "TTD", "BZD", "BSD", "BBD",
            "BMD", "KYD", "XCD", "FJD", "GYD", "SRD", "LRD", "NAD", "SBD", "BND",
            # pesos (and the real, whose pages often drop the R of R$)
            "MXN", "ARS", "CLP", "COP", "CUP", "DOP", "UYU", "BRL",
        }
    ),
    usual="USD",
)  # fmt: skip
YEN = Family("yen or yuan", frozenset({"JPY", "CNY"}), usual="JPY")
KRONE = Family("krona, krone or króna", frozenset({"SEK", "NOK", "DKK", "ISK"}))
RUPEE = Family("rupee", frozenset({"INR", "PKR", "LKR", "NPR", "MUR", "SCR"}))
# 元 (yuan, "dollar" in Chinese) is printed by the renminbi and by Taiwan's and Hong Kong's dollars.
YUAN = Family("yuan", frozenset({"CNY", "TWD", "HKD"}), usual="CNY", unstated="CNY")

FAMILIES: dict[str, Family] = {
    "$": DOLLAR,
    "¥": YEN,  # NFKC folds the full-width ￥ into it
    "kr": KRONE,
    "kr.": KRONE,
    "Kr": KRONE,
    "Kr.": KRONE,
    "Rs": RUPEE,
    "Rs.": RUPEE,
    "₨": RUPEE,
    "元": YUAN,
}

# Letters written before "$" that name one dollar or peso: "NZ$ 80", "NT$ 1,160", "C $15.50".
# An ISO code of the dollar family before "$" ("NZD $", "SGD$") names that currency as well.
DOLLAR_PREFIXES: dict[str, str] = {
    "US": "USD",
    "C": "CAD",
    "CA": "CAD",
    "CAN": "CAD",
    "A": "AUD",
    "AU": "AUD",
    "NZ": "NZD",
    "NT": "TWD",
    "S": "SGD",
    "SG": "SGD",
    "HK": "HKD",
    "MX": "MXN",
    "Mex": "MXN",
    "R": "BRL",
    "J": "JMD",
    "TT": "TTD",
    "RD": "DOP",
    "BZ": "BZD",
    "BDS": "BBD",
    "EC": "XCD",
    "FJ": "FJD",
    "CUC": "CUC",  # withdrawn from ISO-4217: recognised, then refused
}

# ISO code -> the markers (other than the code itself) that name it alone, before or after the
# number. Dollars and pesos written as <prefix>$ are in DOLLAR_PREFIXES above.
NAMED: dict[str, tuple[str, ...]] = {
    "EUR": ("€",),
    "USD": ("U$S",),  # Argentine and Uruguayan pages
    "GBP": ("£",),
    "JPY": ("円", "JP¥"),
    "CNY": ("CN¥", "RMB"),
    "KRW": ("₩", "원"),
    "INR": ("₹",),
    "PHP": ("₱",),
    "NGN": ("₦",),
    "RUB": ("₽", "руб.", "руб", "р.", "Р"),  # the last one is a Cyrillic Er, not a Latin P
    "UAH": ("₴", "грн.", "грн"),
    "BGN": ("лв.", "лв"),
    "ILS": ("₪",),
    "IDR": ("Rp",),
    "HUF": ("Ft",),
    "VND": ("₫",),
    "THB": ("฿",),
    "RON": ("lei",),
    "TRY": ("₺", "TL"),
    "MYR": ("RM",),
    "KWD": ("KD",),
    "CZK": ("Kč",),
    "PLN": ("zł",),
    "CHF": ("Fr.", "SFr."),
}

_BY_MARKER: dict[str, str] = {m: code for code, ms in NAMED.items() for m in ms}
_PREFIXED = re.compile(r"(?P<prefix>[A-Z][A-Za-z]{0,2})\s?\$")


def markers() -> list[str]:
    """Every marker of the table but the ``<prefix>$`` forms, longest first (for a regex)."""
    return sorted({*_BY_MARKER, *FAMILIES}, key=lambda m: (-len(m), m))


def is_alphabetic(marker: str) -> bool:
    """Whether a marker is made of letters (``Rp``, ``грн.``), which count only beside a number."""
    return any(ch.isalpha() for ch in marker)


def marker_code(marker: str) -> str | Family | None:
    """What ``marker`` names: an ISO code, a :class:`Family`, or ``None`` when it is no marker.

    ``<prefix>$`` forms are read from :data:`DOLLAR_PREFIXES` or a dollar-family ISO code; a
    code is returned whether or not ISO-4217 still lists it (see :func:`check_code`).
    """
    marker = " ".join(marker.split())
    if marker in _BY_MARKER:
        return _BY_MARKER[marker]
    if marker in FAMILIES:
        return FAMILIES[marker]
    prefixed = _PREFIXED.fullmatch(marker)
    if prefixed is not None:
        prefix = prefixed["prefix"]
        if prefix in DOLLAR_PREFIXES:
            return DOLLAR_PREFIXES[prefix]
        if prefix in DOLLAR.members:
            return prefix
        return None
    if len(marker) == 3 and marker.isupper() and marker.isalpha():
        try:
            currency_minor_unit(marker)
        except KeyError:
            return None
        return marker
    return None


# A locale's region, else its script, else its language -> the currency its pages print, for the
# families whose sign several currencies share: which 元 (zh-TW: TWD), which kr (sv-SE: SEK).
_LOCALE_REGIONS = {
    "CN": "CNY", "TW": "TWD", "HK": "HKD",
    "SE": "SEK", "NO": "NOK", "DK": "DKK", "IS": "ISK",
}  # fmt: skip
_LOCALE_SCRIPTS = {"Hans": "CNY", "Hant": "TWD"}  # zh_Hant without a region: Taiwan
_LOCALE_LANGUAGES = {"zh": "CNY", "sv": "SEK", "nb": "NOK", "nn": "NOK", "no": "NOK"}
_LOCALE_LANGUAGES |= {"da": "DKK", "is": "ISK"}


def locale_currency(locale: str | None) -> str | None:
    """The currency a locale or country implies for a shared sign, or ``None``.

    ``zh-TW``, ``zh_Hant``, ``zh-Hant-TW`` and ``TW`` are TWD; ``zh-HK`` and ``HK`` HKD; ``zh-CN``
    and ``zh`` CNY; ``sv-SE`` SEK, ``nb-NO`` NOK, ``da-DK`` DKK, ``is-IS`` ISK. It only picks a
    member of a family (``元``, ``kr``): it never names the currency of a text without a marker
    and never overrides a marker that names one currency.

    >>> locale_currency("zh_Hant"), locale_currency("zh-HK"), locale_currency("TW")
    ('TWD', 'HKD', 'TWD')
    """
    if not locale:
        return None
    parts = [p for p in re.split(r"[-_.@\s]+", locale.strip()) if p]
    if not parts:
        return None
    if len(parts) == 1 and len(parts[0]) == 2 and parts[0].isupper():
        return _LOCALE_REGIONS.get(parts[0])  # a country code alone
    language, rest = parts[0].lower(), parts[1:]
    region = next((p.upper() for p in rest if len(p) == 2 and p.isalpha()), None)
    script = next((p.title() for p in rest if len(p) == 4 and p.isalpha()), None)
    if region is not None and region in _LOCALE_REGIONS:
        return _LOCALE_REGIONS[region]
    if script is not None and script in _LOCALE_SCRIPTS and language == "zh":
        return _LOCALE_SCRIPTS[script]
    return _LOCALE_LANGUAGES.get(language)


def check_code(code: str, text: str) -> str:
    """``code`` if ISO-4217 lists it with a minor unit, else ``unknown_currency``."""
    try:
        currency_minor_unit(code)
    except KeyError:
        raise ParseError(
            ParseReason.UNKNOWN_CURRENCY,
            f"{code} in {text!r} is not a current ISO-4217 currency",
            snippet=text,
        ) from None
    return code


_ONE_GROUP = re.compile(r"\d{1,3}[.,]\d{3}")
_LAKH = re.compile(r"\d{1,2}(?:,\d\d)+,\d{3}(?:\.\d+)?")


def check_grouping(number: str, code: str, text: str) -> None:
    """Refuse what a currency's pages do not print: ``1.250`` in a three-decimal currency (KWD,
    BHD, OMR…), as often one and a quarter dinars as one thousand two hundred and fifty; and the
    Indian grouping in two digits (``1,23,456``) in any currency but a rupee.

    Raises:
        ParseError: ``invalid_value``.
    """
    number = number.strip()
    if _LAKH.fullmatch(number) and code not in RUPEE.members:
        raise ParseError(
            ParseReason.INVALID_VALUE,
            f"{number!r}: groups of two digits are a rupee's, not {code}'s",
            snippet=text,
        )
    if currency_minor_unit(code) == 3 and _ONE_GROUP.fullmatch(number):
        raise ParseError(
            ParseReason.INVALID_VALUE,
            f"{number!r} in {code} could be thousands or decimals; state the decimal separator",
            snippet=text,
        )
