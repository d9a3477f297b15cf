"""Currency markers as real pages print them, read the same way by parse_price and parse_money."""

from __future__ import annotations

import pytest

from rareindex_adapters._amounts import is_currency_marker, parse_money
from rareindex_adapters._currencies import (
    DOLLAR_PREFIXES,
    FAMILIES,
    NAMED,
    Family,
    locale_currency,
    marker_code,
)
from rareindex_adapters.prices import parse_price
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

# (text, amount, currency): every prefixed dollar or peso of the issue, as pages write them.
DOLLARS: list[tuple[str, str, str]] = [
    ("NZ$ 80", "80.00", "NZD"),
    ("NZD $100.70", "100.70", "NZD"),
    ("NT$ 1,160", "1160.00", "TWD"),
    ("CA$45", "45.00", "CAD"),
    ("CAN$1.23", "1.23", "CAD"),
    ("C$ 45.00", "45.00", "CAD"),
    ("A$12", "12.00", "AUD"),
    ("AU$ 1,050.50", "1050.50", "AUD"),
    ("S$ 4.90", "4.90", "SGD"),
    ("SGD$4.90", "4.90", "SGD"),
    ("HK$ 100", "100.00", "HKD"),
    ("MX$ 1,299.00", "1299.00", "MXN"),
    ("R$ 1.234,56", "1234.56", "BRL"),
    ("J$ 2,500", "2500.00", "JMD"),
    ("TT$ 150.00", "150.00", "TTD"),
    ("RD$ 1,950", "1950.00", "DOP"),
    ("BZ$ 40", "40.00", "BZD"),
    ("US$ 12.50", "12.50", "USD"),
    ("U$S 300", "300.00", "USD"),
]

# (text, amount, currency): local signs and abbreviations, with the decimal habits of their pages.
LOCAL: list[tuple[str, str, str]] = [
    ("6 300 Р", "6300.00", "RUB"),  # a Cyrillic Er
    ("6 300 руб.", "6300.00", "RUB"),
    ("1 499 ₽", "1499.00", "RUB"),
    ("2 285,81 грн.", "2285.81", "UAH"),
    ("₴ 2 285,81", "2285.81", "UAH"),
    ("₪98", "98.00", "ILS"),
    ("Rp 1.500.000", "1500000.00", "IDR"),
    ("12.500 Ft", "12500.00", "HUF"),
    ("250.000 ₫", "250000", "VND"),
    ("฿1,200", "1200.00", "THB"),
    ("350 lei", "350.00", "RON"),
    ("1.250,50 TL", "1250.50", "TRY"),
    ("₺ 1.250,50", "1250.50", "TRY"),
    ("RM 88.50", "88.50", "MYR"),
    ("KD 12.500,250", "12500.250", "KWD"),
    ("1 290 Kč", "1290.00", "CZK"),
    ("49,99 zł", "49.99", "PLN"),
    ("₹ 2,499", "2499.00", "INR"),
    ("₱ 1,250.00", "1250.00", "PHP"),
    ("₦ 15,000", "15000.00", "NGN"),
    ("1500円", "1500", "JPY"),
    ("88元", "88.00", "CNY"),
    ("₩ 50,000", "50000", "KRW"),
    ("1.234,56 €", "1234.56", "EUR"),
    ("£1,234.56", "1234.56", "GBP"),
]


@pytest.mark.parametrize(("text", "amount", "currency"), DOLLARS)
def test_a_prefixed_dollar_is_that_currency(text: str, amount: str, currency: str) -> None:
    expected = Money(amount=amount, currency=currency)
    assert parse_price(text) == expected
    assert parse_price(text, default_currency="USD") == expected  # not the default's dollar
    assert parse_money(text) == expected
    assert parse_money(text, fallback="USD") == expected


@pytest.mark.parametrize(("text", "amount", "currency"), LOCAL)
def test_a_local_marker_is_recognised(text: str, amount: str, currency: str) -> None:
    expected = Money(amount=amount, currency=currency)
    assert parse_price(text) == expected
    assert parse_money(text) == expected
    assert str(parse_money(text).amount) == amount


@pytest.mark.parametrize(("text", "amount", "currency"), [*DOLLARS, *LOCAL], ids=lambda v: str(v))
def test_default_currency_never_overrides_a_marker(text: str, amount: str, currency: str) -> None:
    other = "CHF"  # no marker above names it, and it is no member of any family
    expected = Money(amount=amount, currency=currency)
    assert parse_price(text, default_currency=other) == expected
    assert parse_money(text, fallback=other) == expected


@pytest.mark.parametrize("text", ["NZD $100.70", "6 300 Р", "₪98", "2 285,81 грн.", "€ 12"])
def test_a_marker_that_contradicts_the_declared_currency_is_rejected(text: str) -> None:
    with pytest.raises(ParseError) as strict:
        parse_money(text, currency="USD")
    assert strict.value.reason is ParseReason.CURRENCY_MISMATCH
    with pytest.raises(ParseError) as lenient:
        parse_price(text, currency="USD", strict=True)
    assert lenient.value.reason is ParseReason.CURRENCY_MISMATCH
    assert parse_price(text, currency="USD") is None


def test_a_marker_that_agrees_with_the_declared_currency_is_read() -> None:
    assert parse_price("NZD $100.70", currency="NZD") == Money(amount="100.70", currency="NZD")
    assert parse_price("$ 45", currency="CAD") == Money(amount="45", currency="CAD")
    assert parse_price("45.00", currency="CAD") == Money(amount="45", currency="CAD")
    assert parse_money("kr 120", currency="NOK") == Money(amount="120", currency="NOK")


def test_a_shared_sign_that_the_declared_currency_does_not_fit_is_rejected() -> None:
    for text in ("$45", "120 kr", "Rs. 1,500"):
        with pytest.raises(ParseError) as info:
            parse_price(text, currency="EUR", strict=True)
        assert info.value.reason is ParseReason.CURRENCY_MISMATCH
        with pytest.raises(ParseError) as info:
            parse_money(text, currency="EUR")
        assert info.value.reason is ParseReason.CURRENCY_MISMATCH


@pytest.mark.parametrize(
    ("text", "default", "currency"),
    [
        ("120 kr", "SEK", "SEK"),
        ("kr 1 200", "NOK", "NOK"),
        ("kr. 450", "DKK", "DKK"),
        ("Rs. 1,500", "PKR", "PKR"),
        ("₨ 1,500", "LKR", "LKR"),
        ("$ 45", "MXN", "MXN"),
        ("$ 45", "TWD", "TWD"),
    ],
)
def test_a_shared_sign_takes_the_member_the_source_states(
    text: str, default: str, currency: str
) -> None:
    assert parse_price(text, default_currency=default).currency == currency  # type: ignore[union-attr]
    assert parse_money(text, fallback=default).currency == currency


@pytest.mark.parametrize("text", ["120 kr", "Rs. 1,500", "₨ 1,500"])
def test_a_shared_sign_without_a_stated_member_is_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_price(text, strict=True)
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY
    with pytest.raises(ParseError) as info:
        parse_money(text)
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY


def test_a_bare_dollar_keeps_its_rules() -> None:
    # parse_price reads a bare $ as USD unless the default is another dollar; parse_money, the
    # strict reader, always needs the currency stated.
    assert parse_price("$45") == Money(amount="45", currency="USD")
    assert parse_price("$45", default_currency="AUD") == Money(amount="45", currency="AUD")
    with pytest.raises(ParseError) as info:
        parse_money("$45")
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY


@pytest.mark.parametrize(
    "text",
    [
        "100 сом",  # a Kyrgyz som: a Cyrillic word beside the number the table does not know
        "100 ¢",  # a currency sign the table does not know
        "XY$ 5",
        "ZZ$5",  # a dollar prefix the table does not know
        "EUR $5",  # two currencies
        "CUC$ 25",  # withdrawn from ISO-4217 in 2021
        "25 лв.",  # the lev: Bulgaria has used the euro since 2026
    ],
)
def test_an_unknown_or_withdrawn_marker_fails_closed_even_with_a_default(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_price(text, default_currency="EUR", strict=True)
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY


@pytest.mark.parametrize("text", ["CUC$ 25", "25 лв.", "XY$ 5"])
def test_the_strict_reader_refuses_them_too(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_money(text, fallback="EUR")
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY


@pytest.mark.parametrize("text", ["KD 1.250", "1,250 KWD", "BHD 2.500"])
def test_one_group_of_three_in_a_three_decimal_currency_is_not_guessed(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_price(text, strict=True)
    assert info.value.reason is ParseReason.INVALID_VALUE
    with pytest.raises(ParseError) as info:
        parse_money(text)
    assert info.value.reason is ParseReason.INVALID_VALUE
    assert parse_price("KD 1.250", decimal_separator=".") == Money(amount="1.25", currency="KWD")


def test_default_currency_applies_only_without_a_marker() -> None:
    assert parse_price("1 299,00", default_currency="UAH") == Money(amount="1299", currency="UAH")
    assert parse_money("1 299,00", fallback="UAH") == Money(amount="1299", currency="UAH")
    assert parse_price("NEW 45.00", default_currency="GBP") == Money(amount="45", currency="GBP")


def test_the_table_names_current_iso_codes_or_is_refused_by_them() -> None:
    for code, signs in NAMED.items():
        for sign in signs:
            assert marker_code(sign) == code
            assert is_currency_marker(sign)
    for prefix, code in DOLLAR_PREFIXES.items():
        assert marker_code(f"{prefix}$") == code
    for sign, family in FAMILIES.items():
        assert isinstance(family, Family) and marker_code(sign) is family
    assert marker_code("PSA") is None
    assert not is_currency_marker("NEW")


def test_a_word_beside_a_known_marker_is_prose() -> None:
    assert parse_price("価格 1,500円") == Money(amount="1500", currency="JPY")
    assert parse_price("Цена: 6 300 руб.") == Money(amount="6300", currency="RUB")
    assert parse_price("à 12 €", default_currency="EUR") == Money(amount="12", currency="EUR")
    assert parse_price("été 12", default_currency="EUR") == Money(amount="12", currency="EUR")


def test_rupees_keep_their_lakh_grouping() -> None:
    assert parse_money("₹1,23,456.50") == Money(amount="123456.50", currency="INR")
    assert parse_money("Rs. 12,34,567", fallback="INR") == Money(amount="1234567", currency="INR")
    assert parse_price("₹ 1,23,456") == Money(amount="123456", currency="INR")
    with pytest.raises(ParseError) as info:
        parse_money("€1,23,456")  # two-digit groups are no euro's habit
    assert info.value.reason is ParseReason.INVALID_VALUE
    with pytest.raises(ParseError) as info:
        parse_price("€1,23,456", strict=True)
    assert info.value.reason is ParseReason.INVALID_VALUE


@pytest.mark.parametrize(
    ("locale", "currency"),
    [
        (None, "CNY"),
        ("zh-CN", "CNY"),
        ("zh_Hans", "CNY"),
        ("en-US", "CNY"),  # a locale that says nothing about 元: the default reading
        ("zh-TW", "TWD"),
        ("zh_TW", "TWD"),
        ("zh_Hant", "TWD"),
        ("zh-Hant-TW", "TWD"),
        ("TW", "TWD"),
        ("zh-HK", "HKD"),
        ("zh-Hant-HK", "HKD"),
        ("HK", "HKD"),
    ],
)
def test_yuan_is_cny_unless_the_locale_says_taiwan_or_hong_kong(
    locale: str | None, currency: str
) -> None:
    expected = Money(amount="1160", currency=currency)
    assert parse_price("1,160元", locale=locale) == expected
    assert parse_price("1160 元", locale=locale, strict=True) == expected
    assert parse_money("1,160元", locale=locale) == expected
    assert parse_money("1160 元", fallback="CHF", locale=locale) == expected  # no member: ignored


def test_yuan_takes_the_stated_or_default_member_before_the_locale() -> None:
    assert parse_price("88元", default_currency="TWD") == Money(amount="88", currency="TWD")
    assert parse_price("88元", currency="HKD", locale="zh-TW") == Money(amount="88", currency="HKD")
    assert parse_money("88元", currency="TWD") == Money(amount="88", currency="TWD")
    assert parse_money("88元", fallback="HKD", locale="zh-TW") == Money(amount="88", currency="HKD")
    # A stated currency that no 元 can be is a mismatch, never overridden by the locale.
    assert parse_price("88元", currency="JPY", locale="zh-TW") is None
    with pytest.raises(ParseError) as refused:
        parse_money("88元", currency="USD", locale="zh-TW")
    assert refused.value.reason is ParseReason.CURRENCY_MISMATCH


def test_a_locale_never_names_the_currency_of_a_text_without_a_marker() -> None:
    assert parse_price("1160", locale="zh-TW") is None
    with pytest.raises(ParseError) as refused:
        parse_money("1160", locale="zh-TW")
    assert refused.value.reason is ParseReason.UNKNOWN_CURRENCY
    # ...nor overrides a marker that names one currency.
    assert parse_price("CN¥ 88", locale="zh-TW") == Money(amount="88", currency="CNY")
    assert parse_price("NT$ 1,160", locale="zh-HK") == Money(amount="1160", currency="TWD")


def test_kr_takes_the_locales_krona_the_same_way() -> None:
    assert parse_price("120 kr") is None  # which krone? still refused without a hint
    for locale, currency in [("sv-SE", "SEK"), ("nb_NO", "NOK"), ("da-DK", "DKK"), ("is", "ISK")]:
        assert parse_price("120 kr", locale=locale) == Money(amount="120", currency=currency)
        assert parse_money("120 kr", locale=locale) == Money(amount="120", currency=currency)
    assert locale_currency("fr-FR") is None and locale_currency("") is None
