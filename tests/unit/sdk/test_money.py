"""Money: exact Decimal amounts in an ISO-4217 currency, respecting the currency's minor unit."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from pydantic import ValidationError

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import Money, currency_minor_unit, parse_normalized


def _listing(price: dict[str, Any]) -> dict[str, Any]:
    """A Shopify-style store listing, the simplest record that carries a Money."""
    return {
        "kind": "listing",
        "external_id": "shopify-7781234",
        "title": "1999 Pokemon Base Set Charizard #4/102 Holo Unlimited",
        "price": price,
    }


def _error_types(exc: ValidationError) -> list[str]:
    return [error["type"] for error in exc.errors()]


# --- floats, bools, non-finite values ---------------------------------------------------------


@pytest.mark.parametrize("amount", [11.05, 0.1 + 0.2, 1500.0, 0.0])
def test_float_amount_refused_directly(amount: float) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency="USD")
    assert _error_types(info.value) == ["float_money"]


@pytest.mark.parametrize("amount", [11.05, 1250.0])
def test_float_amount_refused_by_parse_normalized(amount: float) -> None:
    with pytest.raises(ParseError) as info:
        parse_normalized(_listing({"amount": amount, "currency": "USD"}))
    assert info.value.reason is ParseReason.FLOAT_MONEY
    assert info.value.field == "price.amount"


@pytest.mark.parametrize("amount", [True, False])
def test_bool_amount_refused(amount: bool) -> None:
    # bool is an int subclass: Money(amount=True) must not quietly become USD 1.00.
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency="USD")
    assert _error_types(info.value) == ["invalid_type"]


def test_bool_amount_refused_by_parse_normalized() -> None:
    with pytest.raises(ParseError) as info:
        parse_normalized(_listing({"amount": True, "currency": "USD"}))
    assert info.value.reason is ParseReason.INVALID_TYPE
    assert info.value.field == "price.amount"


@pytest.mark.parametrize(
    "amount",
    ["NaN", "nan", "sNaN", "Infinity", "-Infinity", "inf", Decimal("NaN"), Decimal("Infinity")],
)
def test_non_finite_amount_refused(amount: str | Decimal) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency="USD")
    assert _error_types(info.value) == ["invalid_value"]


@pytest.mark.parametrize("amount", ["", "abc", "12,50", "$12.50", "1.2.3"])
def test_non_numeric_string_refused(amount: str) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency="USD")
    assert _error_types(info.value) == ["invalid_value"]


@pytest.mark.parametrize("amount", [None, [1], {"value": 1}, b"12"])
def test_other_types_refused(amount: object) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency="USD")
    assert _error_types(info.value) == ["invalid_type"]


# --- accepted amounts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "expected"),
    [
        ("1250.00", Decimal("1250.00")),
        ("99.5", Decimal("99.50")),
        (" 42.10 ", Decimal("42.10")),
        (1105, Decimal("1105.00")),
        (0, Decimal("0.00")),
        (Decimal("19.95"), Decimal("19.95")),
        ("1E+3", Decimal("1000.00")),
    ],
)
def test_string_int_and_decimal_amounts_accepted(
    amount: str | int | Decimal, expected: Decimal
) -> None:
    money = Money(amount=amount, currency="USD")
    assert money.amount == expected
    # Padded to the currency's places, not just numerically equal.
    assert money.amount.as_tuple().exponent == -2
    assert str(money.amount) == str(expected)


def test_amount_is_a_decimal_never_a_float() -> None:
    money = Money(amount="0.10", currency="USD")
    assert type(money.amount) is Decimal
    assert money.amount + Money(amount="0.20", currency="USD").amount == Decimal("0.30")


# --- currency ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"), [("usd", "USD"), ("Eur", "EUR"), ("jpy", "JPY"), (" gbp ", "GBP")]
)
def test_currency_case_normalized(given: str, expected: str) -> None:
    assert Money(amount="1", currency=given).currency == expected


@pytest.mark.parametrize("currency", ["XYZ", "usd1", "XAU", "US", "", "DOLLARS"])
def test_unknown_currency_refused(currency: str) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount="1", currency=currency)
    assert _error_types(info.value) == ["unknown_currency"]


@pytest.mark.parametrize("currency", ["XYZ", "usd1", "XAU"])
def test_unknown_currency_refused_by_parse_normalized(currency: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_normalized(_listing({"amount": "10", "currency": currency}))
    assert info.value.reason is ParseReason.UNKNOWN_CURRENCY
    assert info.value.field == "price.currency"


@pytest.mark.parametrize("currency", [None, 840, b"USD"])
def test_non_string_currency_refused(currency: object) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount="1", currency=currency)
    assert _error_types(info.value) == ["invalid_type"]


# --- precision per currency -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency", "expected"),
    [
        ("5", "USD", "5.00"),
        ("11.050", "USD", "11.05"),  # trailing zero beyond the minor unit is not extra precision
        ("11.05", "USD", "11.05"),
        ("1500", "JPY", "1500"),
        ("1500.0", "JPY", "1500"),
        (1500, "JPY", "1500"),
        ("1.234", "KWD", "1.234"),
        ("1.2", "KWD", "1.200"),
        ("7", "KWD", "7.000"),
    ],
)
def test_amount_padded_to_minor_unit(amount: str | int, currency: str, expected: str) -> None:
    assert str(Money(amount=amount, currency=currency).amount) == expected


@pytest.mark.parametrize(
    ("amount", "currency"),
    [
        ("1.005", "USD"),
        ("0.001", "USD"),
        ("100.5", "JPY"),
        ("1500.01", "JPY"),
        ("1.2345", "KWD"),
        (Decimal("1.2345"), "KWD"),
        # more digits than the decimal context's 28: normalize() would round them away first
        ("1.00000000000000000000000000001", "USD"),
        ("12345678901234567890123456.001", "USD"),
    ],
)
def test_excess_precision_refused_not_rounded(amount: str | Decimal, currency: str) -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount=amount, currency=currency)
    assert _error_types(info.value) == ["amount_precision"]


def test_excess_precision_refused_by_parse_normalized() -> None:
    with pytest.raises(ParseError) as info:
        parse_normalized(_listing({"amount": "1.005", "currency": "USD"}))
    assert info.value.reason is ParseReason.AMOUNT_PRECISION
    # Precision is a property of amount *and* currency: the whole Money is blamed.
    assert info.value.field == "price"


# --- from_minor_units -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("minor", "currency", "unit", "expected"),
    [
        ("1105", "USD", 2, Money(amount="11.05", currency="USD")),
        (1105, "USD", 2, Money(amount="11.05", currency="USD")),
        ("11050", "USD", 3, Money(amount="11.05", currency="USD")),  # a feed stating 3 decimals
        ("1500", "JPY", 0, Money(amount="1500", currency="JPY")),
        ("1234", "KWD", 3, Money(amount="1.234", currency="KWD")),
        ("0", "EUR", 2, Money(amount="0", currency="EUR")),
        ("1105", "usd", 2, Money(amount="11.05", currency="USD")),
    ],
)
def test_from_minor_units(minor: str | int, currency: str, unit: int, expected: Money) -> None:
    money = Money.from_minor_units(minor, currency, minor_unit=unit)
    assert money == expected
    assert str(money.amount) == str(expected.amount)


@pytest.mark.parametrize(
    ("minor", "currency", "unit"),
    [("11055", "USD", 3), ("15005", "JPY", 1), ("12345", "KWD", 4)],
)
def test_from_minor_units_refuses_precision_the_currency_lacks(
    minor: str, currency: str, unit: int
) -> None:
    with pytest.raises(ValidationError) as info:
        Money.from_minor_units(minor, currency, minor_unit=unit)
    assert _error_types(info.value) == ["amount_precision"]


def test_from_minor_units_refuses_unknown_currency() -> None:
    with pytest.raises(ValidationError) as info:
        Money.from_minor_units("1105", "XAU", minor_unit=2)
    assert _error_types(info.value) == ["unknown_currency"]


@pytest.mark.parametrize("minor", [1105.7, True])
def test_from_minor_units_refuses_float_and_bool(minor: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        Money.from_minor_units(minor, "USD", minor_unit=2)  # type: ignore[arg-type]


# --- limits -----------------------------------------------------------------------------------


def test_huge_amount_refused_with_validation_error() -> None:
    with pytest.raises(ValidationError):
        Money(amount="1e30", currency="USD")


@pytest.mark.parametrize("amount", ["1E+1000000", "9.99E+999999", Decimal("1E+999999999")])
def test_an_amount_past_the_decimal_context_is_out_of_range_not_a_crash(
    amount: str | Decimal,
) -> None:
    """Its exponent is past what the decimal context holds (quantizing it fails): refused like
    any amount too large for a price, and read by parse_normalized as a ParseError."""
    with pytest.raises(ValidationError, match="out of range for a price"):
        Money(amount=amount, currency="USD")
    with pytest.raises(ParseError) as caught:
        parse_normalized(
            {
                "kind": "listing",
                "external_id": "1",
                "title": "t",
                "price": {"amount": str(amount), "currency": "USD"},
            }
        )
    assert caught.value.reason == ParseReason.INVALID_VALUE


# --- immutability, str, currency_minor_unit ---------------------------------------------------


def test_money_is_frozen() -> None:
    money = Money(amount="11.05", currency="USD")
    with pytest.raises(ValidationError) as info:
        money.amount = Decimal("1")  # type: ignore[misc]
    assert _error_types(info.value) == ["frozen_instance"]
    assert money.amount == Decimal("11.05")


def test_money_is_hashable_and_equal_by_value() -> None:
    a = Money(amount="5", currency="usd")
    b = Money(amount=Decimal("5.00"), currency="USD")
    assert a == b
    assert hash(a) == hash(b)
    assert a != Money(amount="5", currency="EUR")


def test_a_money_is_checked_once_not_again_by_each_record_holding_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The minor-unit check runs when a Money is built; a record given that (frozen) Money takes
    it as it is. Validated once: it ran again for every record when it was an after-validator."""
    from rareindex_connectors import _money

    looked_up: list[str] = []

    def counting(code: str) -> int:
        looked_up.append(code)
        return currency_minor_unit(code)

    monkeypatch.setattr(_money, "currency_minor_unit", counting)
    price = Money(amount="11.05", currency="USD")
    built = len(looked_up)
    assert built > 0
    for _ in range(3):
        record = parse_normalized(_listing(price))  # type: ignore[arg-type]
        assert record.price is price  # type: ignore[union-attr]
    assert len(looked_up) == built
    parse_normalized(_listing({"amount": "11.05", "currency": "USD"}))
    assert len(looked_up) == 2 * built  # a price given as data is checked, once


def test_money_refuses_unknown_keys() -> None:
    with pytest.raises(ValidationError) as info:
        Money(amount="1", currency="USD", fx_rate="1.1")  # type: ignore[call-arg]
    assert _error_types(info.value) == ["extra_forbidden"]


def test_money_str() -> None:
    assert str(Money(amount="5", currency="usd")) == "USD 5.00"
    assert str(Money(amount="1500", currency="JPY")) == "JPY 1500"


@pytest.mark.parametrize(
    ("code", "places"),
    [("USD", 2), ("usd", 2), ("EUR", 2), ("JPY", 0), ("KRW", 0), ("KWD", 3), ("BHD", 3)],
)
def test_currency_minor_unit(code: str, places: int) -> None:
    assert currency_minor_unit(code) == places


@pytest.mark.parametrize("code", ["XYZ", "XAU", "XXX", "usd1", ""])
def test_currency_minor_unit_unknown_raises_key_error(code: str) -> None:
    with pytest.raises(KeyError):
        currency_minor_unit(code)
