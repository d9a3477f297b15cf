"""parse_price: displayed prices → Money, refusing what is ambiguous."""

from __future__ import annotations

from decimal import Decimal

import pytest

from rareindex_adapters.prices import parse_price
from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money

# (text, default_currency, amount, currency)
READ: list[tuple[str, str | None, str, str]] = [
    ("$ 10.000,00", None, "10000.00", "USD"),
    ("10 000,00 €", None, "10000.00", "EUR"),
    ("10\u00a0000,00\u00a0€", None, "10000.00", "EUR"),
    ("1,234.56", "USD", "1234.56", "USD"),
    ("US $1,234.56", None, "1234.56", "USD"),
    ("US $1,234.56", "CAD", "1234.56", "USD"),
    ("USD 1,234", None, "1234.00", "USD"),
    ("Price: 12.99 USD", None, "12.99", "USD"),
    ("C$ 45.00", None, "45.00", "CAD"),
    ("CA$45", None, "45.00", "CAD"),
    ("A$12", None, "12.00", "AUD"),
    ("AU$ 1,050.50", None, "1050.50", "AUD"),
    ("NZ$ 80", None, "80.00", "NZD"),
    ("HK$ 100", None, "100.00", "HKD"),
    ("R$ 1.234,56", None, "1234.56", "BRL"),
    ("$ 45.00", "CAD", "45.00", "CAD"),
    ("$45", "AUD", "45.00", "AUD"),
    ("$45", "EUR", "45.00", "USD"),
    ("$0.99", None, "0.99", "USD"),
    ("$.99", None, "0.99", "USD"),
    ("£1.234,5", None, "1234.50", "GBP"),
    ("£ 1,234", None, "1234.00", "GBP"),
    ("€ 1.000,-", None, "1000.00", "EUR"),
    ("12.345,67 €", None, "12345.67", "EUR"),
    ("EUR 12,50", None, "12.50", "EUR"),
    ("0,50 €", None, "0.50", "EUR"),
    ("¥1,500", None, "1500", "JPY"),
    ("¥1,500", "CNY", "1500.00", "CNY"),
    ("1500円", None, "1500", "JPY"),
    ("１５００円", None, "1500", "JPY"),
    ("￥3,980", None, "3980", "JPY"),
    ("RMB 88", None, "88.00", "CNY"),
    ("CHF 1'234.50", None, "1234.50", "CHF"),
    ("Fr. 45.–", None, "45.00", "CHF"),
    ("120 kr", "SEK", "120.00", "SEK"),
    ("kr 1 200", "NOK", "1200.00", "NOK"),
    ("SEK 120", None, "120.00", "SEK"),
    ("₩ 50,000", None, "50000", "KRW"),
    ("₹ 2,499", None, "2499.00", "INR"),
    ("12 Kč", None, "12.00", "CZK"),
    ("49,99 zł", None, "49.99", "PLN"),
    ("1250", "USD", "1250.00", "USD"),
    ("KWD 1.250,500", None, "1250.500", "KWD"),
    ("$12.345.678,9", None, "12345678.90", "USD"),  # European grouping after a dollar sign
]


@pytest.mark.parametrize(("text", "default", "amount", "currency"), READ)
def test_reads(text: str, default: str | None, amount: str, currency: str) -> None:
    money = parse_price(text, default_currency=default)
    assert money == Money(amount=amount, currency=currency)
    assert isinstance(money.amount, Decimal)
    assert str(money.amount) == amount


# (text, default_currency, reason in strict mode)
REFUSED: list[tuple[str, str | None, ParseReason]] = [
    ("1,234.56", None, ParseReason.UNKNOWN_CURRENCY),  # no marker, no default
    ("120 kr", None, ParseReason.UNKNOWN_CURRENCY),  # SEK? NOK? DKK?
    ("120 kr", "USD", ParseReason.UNKNOWN_CURRENCY),  # the default is no krone
    ("€12 / £10", None, ParseReason.INVALID_VALUE),  # two numbers
    ("€ 12,00 £", None, ParseReason.UNKNOWN_CURRENCY),  # one number, two currencies
    ("$10 - $20", None, ParseReason.INVALID_VALUE),
    ("Was $20 now $15", None, ParseReason.INVALID_VALUE),
    ("US $12.00 (approx. C $15.50)", None, ParseReason.INVALID_VALUE),
    ("$1.5k", None, ParseReason.INVALID_VALUE),
    ("€2M", None, ParseReason.INVALID_VALUE),
    ("-$5.00", None, ParseReason.INVALID_VALUE),
    ("$-5.00", None, ParseReason.INVALID_VALUE),
    ("Free", "USD", ParseReason.INVALID_VALUE),
    ("$0.00", None, ParseReason.INVALID_VALUE),
    ("Call for price", "USD", ParseReason.INVALID_VALUE),
    ("", "USD", ParseReason.INVALID_VALUE),
    ("¥1,500.50", None, ParseReason.AMOUNT_PRECISION),
    ("KWD 1.250", None, ParseReason.INVALID_VALUE),  # 1.25 or 1250 dinars: a three-decimal currency
]


@pytest.mark.parametrize(("text", "default", "reason"), REFUSED)
def test_refuses_with_none(text: str, default: str | None, reason: ParseReason) -> None:
    assert parse_price(text, default_currency=default) is None


@pytest.mark.parametrize(("text", "default", "reason"), REFUSED)
def test_strict_raises_the_reason(text: str, default: str | None, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as info:
        parse_price(text, default_currency=default, strict=True)
    assert info.value.reason is reason


def test_three_capitals_that_are_no_currency_are_ignored() -> None:
    # "PSA" and "NEW" are not ISO-4217: they neither set a currency nor conflict with the default.
    assert parse_price("PSA 10") is None
    assert parse_price("NEW 45.00", default_currency="GBP") == Money(amount="45", currency="GBP")


def test_an_iso_code_away_from_the_number_does_not_count() -> None:
    # "TOP" is the Tongan pa'anga, but here it is prose: only codes beside the number count.
    assert parse_price("TOP seller! $12", default_currency=None) == Money(
        amount="12", currency="USD"
    )


def test_decimal_separator_hint_overrides_the_thousands_reading() -> None:
    assert parse_price("KWD 1.250", decimal_separator=".") == Money(amount="1.25", currency="KWD")
    assert parse_price("1.234", default_currency="EUR") == Money(amount="1234", currency="EUR")


def test_never_goes_through_float() -> None:
    money = parse_price("$0.10")
    assert money is not None
    assert money.amount + money.amount + money.amount == Decimal("0.30")


def test_bad_default_currency_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="default_currency"):
        parse_price("12.00", default_currency="US")
    with pytest.raises(ValueError, match="default_currency"):
        parse_price("12.00", default_currency="XAU")  # gold has no minor unit: not a price


def test_non_string_input() -> None:
    assert parse_price(12.5, default_currency="USD") is None  # type: ignore[arg-type]
    with pytest.raises(ParseError) as info:
        parse_price(None, strict=True)  # type: ignore[arg-type]
    assert info.value.reason is ParseReason.INVALID_TYPE
