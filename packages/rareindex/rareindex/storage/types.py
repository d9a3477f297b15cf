"""Column types that behave the same on SQLite and PostgreSQL.

* :class:`UTCDateTime` stores UTC and always returns timezone-aware datetimes (SQLite has no zone).
* :class:`ExactDecimal` is ``NUMERIC`` on PostgreSQL and text on SQLite, so money never passes
  through a float.
* :data:`JSONDoc` is ``JSONB`` on PostgreSQL and JSON text on SQLite.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, DateTime, Numeric, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = ["ExactDecimal", "JSONDoc", "UTCDateTime"]

JSONDoc = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp stored in UTC. Naive datetimes are refused, not guessed."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is not UTC:  # already UTC (most values): no conversion to pay for
            if value.tzinfo is None:
                raise ValueError(f"naive datetime {value!r}: RareIndex stores timezone-aware times")
            value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class ExactDecimal(TypeDecorator[Decimal]):
    """An exact decimal: ``NUMERIC(20, 6)`` on PostgreSQL, a decimal string on SQLite."""

    impl = Numeric(20, 6)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(String(40))
        return dialect.type_descriptor(Numeric(20, 6, asdecimal=True))

    def process_bind_param(self, value: Decimal | int | str | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if isinstance(value, float):
            raise TypeError("ExactDecimal refuses floats; pass a Decimal")
        amount = Decimal(value)
        return format(amount, "f") if dialect.name == "sqlite" else amount

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return value if isinstance(value, Decimal) else Decimal(str(value))
