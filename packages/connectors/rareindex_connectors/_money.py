"""Money: an exact ``Decimal`` amount in an ISO-4217 currency, respecting the currency's minor unit.

Floats are refused (``0.1 + 0.2`` is not a price). An amount with more decimals than the currency
allows (``JPY 100.5``, ``USD 1.005``) is refused rather than silently rounded; fewer decimals are
padded (``USD 5`` becomes ``USD 5.00``). Currencies without a minor unit (gold ``XAU``) are refused:
they are not prices.

Example:
    >>> Money(amount="1105", currency="usd").amount
    Decimal('1105.00')
    >>> Money.from_minor_units("1105", "USD", minor_unit=2)
    Money(amount=Decimal('11.05'), currency='USD')
    >>> Money(amount=1500, currency="JPY").amount
    Decimal('1500')
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Annotated, Any

from iso4217 import Currency
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ModelWrapValidatorHandler,
    model_validator,
)
from pydantic_core import PydanticCustomError

__all__ = ["Money", "currency_minor_unit"]


@cache
def currency_minor_unit(code: str) -> int:
    """The number of decimals of an ISO-4217 currency (``USD`` 2, ``JPY`` 0, ``KWD`` 3).

    Raises:
        KeyError: ``code`` is not an active ISO-4217 currency with a minor unit.
    """
    try:
        currency = Currency(code.upper())
    except ValueError:
        raise KeyError(code) from None
    if currency.exponent is None:
        raise KeyError(code)
    return int(currency.exponent)


def _to_decimal(value: Any) -> Decimal:
    if isinstance(value, bool):
        raise PydanticCustomError("invalid_type", "a boolean is not an amount")
    if isinstance(value, float):
        raise PydanticCustomError(
            "float_money",
            "money must be a Decimal, int or numeric string, never a float (got {value})",
            {"value": value},
        )
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, str):
        try:
            result = Decimal(value.strip())
        except InvalidOperation:
            raise PydanticCustomError(
                "invalid_value", "'{value}' is not a decimal number", {"value": value}
            ) from None
    else:
        raise PydanticCustomError(
            "invalid_type",
            "an amount must be a Decimal, int or string, got {type}",
            {"type": type(value).__name__},
        )
    if not result.is_finite():
        raise PydanticCustomError("invalid_value", "an amount must be finite")
    return result


def _to_currency(value: Any) -> str:
    if not isinstance(value, str):
        raise PydanticCustomError("invalid_type", "a currency is a 3-letter ISO-4217 code")
    code = value.strip().upper()
    try:
        currency_minor_unit(code)
    except KeyError:
        raise PydanticCustomError(
            "unknown_currency",
            "'{value}' is not an ISO-4217 currency with a minor unit",
            {"value": value},
        ) from None
    return code


@cache
def _quantum(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)


def _decimals(amount: Decimal) -> int:
    """The decimal places ``amount`` needs: ``11.050`` needs 2, ``5`` and ``0.000`` none.

    Counted on its digits, exactly: ``Decimal.normalize()`` would first round to the context's 28
    digits, and ``1.00000000000000000000000000001`` would pass as ``1``.
    """
    _, digits, exponent = amount.as_tuple()
    if not isinstance(exponent, int) or exponent >= 0 or not any(digits):
        return 0
    places = -exponent
    for digit in reversed(digits):  # a trailing zero is no decimal place
        if digit or not places:
            break
        places -= 1
    return places


def _out_of_range(amount: Decimal) -> PydanticCustomError:
    return PydanticCustomError(
        "invalid_value", "{amount} is out of range for a price", {"amount": str(amount)}
    )


ExactDecimal = Annotated[Decimal, BeforeValidator(_to_decimal)]
CurrencyCode = Annotated[str, BeforeValidator(_to_currency)]


class Money(BaseModel):
    """An exact amount in a currency. Immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    amount: ExactDecimal
    currency: CurrencyCode

    @model_validator(mode="wrap")
    @classmethod
    def _respect_minor_unit(cls, data: Any, handler: ModelWrapValidatorHandler[Money]) -> Money:
        """The minor-unit, sign and range checks, once: on the amount and currency a Money is
        built from. A Money given where a Money goes (a record's price) is already checked and
        frozen, and is taken as it is (an after-validator would run these checks again for every
        record holding it)."""
        if isinstance(data, Money):
            return data
        money = handler(data)
        amount = money.amount
        places = currency_minor_unit(money.currency)
        try:  # past the context's 28 digits or its exponents (1E+1000000): no price
            exact = amount.quantize(_quantum(places))
        except InvalidOperation:
            exact = None
        # Rounded to the minor unit, an amount with more decimals is another number (Decimal
        # compares exactly): the same answer as counting its decimals (_decimals), cheaper.
        if exact != amount and _decimals(amount) > places:
            raise PydanticCustomError(
                "amount_precision",
                "{currency} has {places} decimal places; {amount} has more",
                {"currency": money.currency, "places": places, "amount": str(amount)},
            )
        if amount < 0:
            raise PydanticCustomError(
                "invalid_value",
                "a price is never negative ({amount})",
                {"amount": str(amount)},
            )
        if exact is None:
            raise _out_of_range(amount)
        object.__setattr__(money, "amount", exact)
        return money

    @classmethod
    def from_minor_units(cls, minor: int | str, currency: str, *, minor_unit: int) -> Money:
        """Build from an integer count of minor units, as WooCommerce prices come.

        ``minor_unit`` is the feed's own statement of decimals (``currency_minor_unit``), never
        assumed. The result must still fit the currency's ISO-4217 minor unit (``"11050"`` with
        unit 3 is USD 11.05; ``"11055"`` with unit 3 is refused).

        Raises:
            ValueError: ``minor`` is not an integer (a float, a bool, ``"11.5"``) or
                ``minor_unit`` is negative.
        """
        if isinstance(minor, bool) or not isinstance(minor, int | str):
            raise ValueError(f"minor units must be an int or a digit string, got {minor!r}")
        if isinstance(minor, str) and not minor.strip().lstrip("-").isascii():
            raise ValueError(f"minor units must be ASCII digits, got {minor!r}")
        if isinstance(minor, str) and not minor.strip().lstrip("-").isdigit():
            raise ValueError(f"minor units must be a whole number, got {minor!r}")
        if minor_unit < 0:
            raise ValueError(f"minor_unit must be >= 0, got {minor_unit}")
        return cls(amount=Decimal(int(minor)).scaleb(-minor_unit), currency=currency)

    def __str__(self) -> str:
        return f"{self.currency} {self.amount}"
