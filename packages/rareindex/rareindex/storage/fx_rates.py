"""Rows of ``fx_rates``: insert the missing ones in batches, read the rate in force on a day.

The FX rules (where rates come from, how they are crossed and rounded) live in
:mod:`rareindex.fx`; this module only moves rows. Inserts never overwrite: a ``(rate_date,
currency)`` already stored is skipped, so loading the same history twice inserts nothing.

Example:
    >>> row = (date(2024, 12, 24), "EUR", Decimal("0.962001"))
    >>> insert_missing_rates(engine, [row], source="ecb")  # doctest: +SKIP
    1
    >>> latest_rate(engine, "EUR", date(2024, 12, 26))  # doctest: +SKIP
    (datetime.date(2024, 12, 24), Decimal('0.962001'))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from sqlalchemy import Connection, Engine, func, select
from sqlalchemy.dialects import postgresql, sqlite

from .schema import fx_rates

__all__ = ["Bind", "RateRow", "RateSpan", "insert_missing_rates", "latest_rate", "rate_span"]

Bind = Engine | Connection
RateRow = tuple[date, str, Decimal]  # (rate_date, currency, per_usd)

# Rows a statement: insertmanyvalues sends them as a few multi-row INSERTs, not one per row.
_BATCH = 5000


@dataclass(frozen=True, slots=True)
class RateSpan:
    """The days ``fx_rates`` holds within a window: first, last and how many."""

    first: date
    last: date
    days: int


def insert_missing_rates(engine: Engine, rows: Sequence[RateRow], *, source: str) -> int:
    """Insert the rows whose ``(rate_date, currency)`` is not stored yet; return how many.

    Existing keys in the rows' date range are read first, so a re-run sends nothing; ``ON CONFLICT
    DO NOTHING`` covers a concurrent loader, and ``RETURNING`` makes the count exact.
    """
    if not rows:
        return 0
    codes = sorted({currency for _, currency, _ in rows})
    first, last = min(day for day, _, _ in rows), max(day for day, _, _ in rows)
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    statement = (
        insert(fx_rates).on_conflict_do_nothing(index_elements=["rate_date", "currency"])
    ).returning(fx_rates.c.rate_date)
    inserted = 0
    with engine.begin() as conn:
        stored = {
            (day, currency)
            for day, currency in conn.execute(
                select(fx_rates.c.rate_date, fx_rates.c.currency).where(
                    fx_rates.c.rate_date.between(first, last), fx_rates.c.currency.in_(codes)
                )
            )
        }
        missing = [
            {"rate_date": day, "currency": currency, "per_usd": per_usd, "source": source}
            for day, currency, per_usd in rows
            if (day, currency) not in stored
        ]
        for start in range(0, len(missing), _BATCH):
            inserted += len(conn.execute(statement, missing[start : start + _BATCH]).all())
    return inserted


def latest_rate(bind: Bind, currency: str, day: date) -> tuple[date, Decimal] | None:
    """``(rate_date, per_usd)`` of ``currency`` on the last stored day on or before ``day``."""
    statement = (
        select(fx_rates.c.rate_date, fx_rates.c.per_usd)
        .where(fx_rates.c.currency == currency, fx_rates.c.rate_date <= day)
        .order_by(fx_rates.c.rate_date.desc())
        .limit(1)
    )
    if isinstance(bind, Engine):
        with bind.connect() as conn:
            row = conn.execute(statement).one_or_none()
    else:
        row = bind.execute(statement).one_or_none()
    return None if row is None else (row.rate_date, row.per_usd)


def rate_span(
    bind: Bind, *, since: date | None = None, until: date | None = None
) -> RateSpan | None:
    """The rate days stored within ``since``..``until`` (inclusive), or None when there are none."""
    statement = select(
        func.min(fx_rates.c.rate_date),
        func.max(fx_rates.c.rate_date),
        func.count(func.distinct(fx_rates.c.rate_date)),
    )
    if since is not None:
        statement = statement.where(fx_rates.c.rate_date >= since)
    if until is not None:
        statement = statement.where(fx_rates.c.rate_date <= until)
    if isinstance(bind, Engine):
        with bind.connect() as conn:
            first, last, days = conn.execute(statement).one()
    else:
        first, last, days = bind.execute(statement).one()
    if days == 0:
        return None
    return RateSpan(first=first, last=last, days=days)
