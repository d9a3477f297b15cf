"""Text for the page: escaping, money, dates and ages. Every string from the database goes
through :func:`esc` (titles and source names come from the web)."""

from __future__ import annotations

import html
import math
from datetime import UTC, datetime
from urllib.parse import urlsplit

from rareindex_connectors.records import currency_minor_unit

__all__ = ["age", "compact_money", "esc", "minor_units", "money", "safe_href", "when"]


def esc(value: object) -> str:
    """``value`` as text safe inside HTML or SVG, attributes included."""
    return html.escape(str(value), quote=True)


def minor_units(currency: str) -> int:
    """Decimals to show for ``currency`` (ISO 4217: USD 2, JPY 0, KWD 3; 2 when unknown)."""
    try:
        return currency_minor_unit(currency)
    except KeyError:
        return 2


def money(amount: float, currency: str) -> str:
    """``29,400.00 USD`` / ``3,812,500 JPY``."""
    return f"{amount:,.{minor_units(currency)}f} {currency}"


def compact_money(amount: float) -> str:
    """An axis label: ``950``, ``12.5k``, ``1.2M``, ``0.35``."""
    size = abs(amount)
    for unit, scale in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if size >= scale:
            return f"{amount / scale:.3g}{unit}"
    if size >= 1 or amount == 0:
        return f"{amount:.4g}"
    return f"{amount:.2g}"


def when(value: datetime | None) -> str:
    """``2026-04-11 22:00`` in UTC, or ``-``."""
    if value is None:
        return "-"
    if value.tzinfo is not None:
        value = value.astimezone(UTC)
    return f"{value:%Y-%m-%d %H:%M}"


def age(value: datetime | None, now: datetime) -> str:
    """How long before ``now``: ``45 s``, ``12 min``, ``3.5 h``, ``12 d``; ``never`` for None."""
    if value is None:
        return "never"
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    seconds = (now - value).total_seconds()
    if seconds < 0:
        return "in the future"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            amount = seconds / size
            return (
                f"{amount:.0f} {unit}" if amount >= 10 or unit == "min" else f"{amount:.1f} {unit}"
            )
    return f"{math.floor(seconds)} s"


def safe_href(url: str | None) -> str | None:
    """``url`` when it is an http(s) address, else None: a ``javascript:`` link from a scraped
    page must never become clickable in the report."""
    if not url:
        return None
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in {"http", "https"} else None
