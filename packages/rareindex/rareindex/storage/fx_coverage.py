"""How well the FX rates cover the sales: what converts, what is stale, what cannot convert.

Read through ``sales_multi_currency``, so the numbers are the views' own: a sale converts when
``fx_missing_reason`` is NULL, and is **stale** when the view flags it (``fx_stale``: its rate is
more than ``fx_settings.stale_days`` older than the sale), as every sale after the end of a loaded
ECB file is. The rates as a whole are stale when the newest rate is more than that behind the
newest sale: load a newer ECB file (``rareindex fx load PATH``).

Example:
    >>> cover = fx_coverage(conn)  # doctest: +SKIP
    >>> cover.stale, cover.missing                 # doctest: +SKIP
    (True, {('no_ecb_rate', 'KWD'): 3})
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Connection, func, select, text

from .fx_settings import stale_days
from .schema import fx_rates, sales

__all__ = ["FxCoverage", "fx_coverage"]


@dataclass(frozen=True, slots=True)
class FxCoverage:
    """The FX side of coverage: counts of sales, and the newest rate against the newest sale."""

    stale_days: int
    newest_rate_date: date | None
    newest_sale_date: date | None
    converted: int
    """Sales priced in the view currencies (stale ones included)."""
    stale_sales: int
    """Converted sales whose rate is more than ``stale_days`` older than the sale."""
    missing: dict[tuple[str, str], int]
    """``(fx_missing_reason, currency)`` -> sales left NULL for that reason."""

    @property
    def lag_days(self) -> int | None:
        """Days from the newest rate to the newest sale (None: no rate or no sale)."""
        if self.newest_rate_date is None or self.newest_sale_date is None:
            return None
        return (self.newest_sale_date - self.newest_rate_date).days

    @property
    def stale(self) -> bool:
        """Whether the newest rate is more than ``stale_days`` behind the newest sale, or there
        are sales and no rate at all."""
        if self.newest_sale_date is None:
            return False
        lag = self.lag_days
        return lag is None or lag > self.stale_days


def _as_date(value: object) -> date | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])


def fx_coverage(conn: Connection) -> FxCoverage:
    """Count the sales by FX outcome (one pass over ``sales_multi_currency``, its ``fx_stale``
    flag), against the views' own threshold (``fx_settings.stale_days``)."""
    rows = conn.execute(
        text(
            "SELECT currency, fx_missing_reason AS reason, COUNT(*) AS n, "
            "SUM(CASE WHEN fx_stale THEN 1 ELSE 0 END) AS stale "
            "FROM sales_multi_currency GROUP BY currency, fx_missing_reason"
        )
    ).all()
    days = stale_days(conn)
    newest_rate = conn.execute(select(func.max(fx_rates.c.rate_date))).scalar_one_or_none()
    newest_sale = conn.execute(select(func.max(sales.c.sale_date))).scalar_one_or_none()
    return FxCoverage(
        stale_days=days,
        newest_rate_date=_as_date(newest_rate),
        newest_sale_date=_as_date(newest_sale),
        converted=sum(int(r.n) for r in rows if r.reason is None),
        stale_sales=sum(int(r.stale or 0) for r in rows if r.reason is None),
        missing={(r.reason, r.currency): int(r.n) for r in rows if r.reason is not None},
    )
