"""A watchlist as the matcher reads it, and the checks a new one must pass.

A watchlist names what it watches — assets, variants, categories or a title query, at least one
of them — and optionally conditions on the event's price: ``below`` / ``above`` a value in
``currency`` (USD when none is given), and ``move_pct``: a price move of more than that many
percent. It belongs to one principal (``token:<name>``); nobody else reads it.

Example:
    >>> w = Watchlist.create("token:alice", "cheap zards", asset_ids=["ast_1"],
    ...                      below=Decimal("100"), currency="usd")
    >>> w.currency, w.id.startswith("wch_")
    ('USD', True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from ..errors import InvalidWatchlist
from ..storage.ids import new_id

__all__ = ["MAX_ITEMS", "Watchlist"]

MAX_ITEMS = 500
"""At most this many assets, variants or categories in one watchlist."""


def _ids(values: Sequence[str] | None, what: str) -> tuple[str, ...]:
    cleaned = tuple(dict.fromkeys(v for v in values or () if v))
    if len(cleaned) > MAX_ITEMS:
        raise InvalidWatchlist(f"at most {MAX_ITEMS} {what} in one watchlist, not {len(cleaned)}")
    return cleaned


@dataclass(frozen=True, slots=True)
class Watchlist:
    """One stored watchlist (see the module docstring)."""

    id: str
    principal: str
    name: str
    asset_ids: tuple[str, ...] = ()
    variant_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    title_query: str | None = None
    below: Decimal | None = None
    above: Decimal | None = None
    currency: str | None = None
    move_pct: Decimal | None = None
    created_at: datetime | None = None

    @classmethod
    def create(
        cls,
        principal: str,
        name: str,
        *,
        asset_ids: Sequence[str] | None = None,
        variant_ids: Sequence[str] | None = None,
        categories: Sequence[str] | None = None,
        title_query: str | None = None,
        below: Decimal | None = None,
        above: Decimal | None = None,
        currency: str | None = None,
        move_pct: Decimal | None = None,
    ) -> Watchlist:
        """A new watchlist with a fresh id, checked: raises :class:`InvalidWatchlist`."""
        if not name or len(name) > 200:
            raise InvalidWatchlist("a watchlist needs a name of 1 to 200 characters")
        query = title_query or None
        if query is not None and len(query) > 500:
            raise InvalidWatchlist("the title query may have at most 500 characters")
        assets = _ids(asset_ids, "assets")
        variants = _ids(variant_ids, "variants")
        cats = _ids(categories, "categories")
        if not (assets or variants or cats or query):
            raise InvalidWatchlist(
                "a watchlist names assets, variants, categories or a title query (at least one)"
            )
        code = currency.upper() if currency else None
        if code is not None and len(code) != 3:
            raise InvalidWatchlist(f"currency {currency!r} is not a 3-letter code such as USD")
        if (below is not None or above is not None) and code is None:
            code = "USD"  # a value without a currency is in dollars, as the index's
        for label, value in (("below", below), ("above", above), ("move_pct", move_pct)):
            if value is not None and (not value.is_finite() or value <= 0):
                raise InvalidWatchlist(f"{label} must be a positive number, not {value}")
            if value is not None and abs(value) >= Decimal("1e14"):
                raise InvalidWatchlist(f"{label} must be below 10^14, not {value}")
        if below is not None and above is not None and above >= below:
            # both make a band (above < price < below): the other way round nothing ever matches
            raise InvalidWatchlist("with both, above must be less than below (a price band)")
        return cls(
            id=new_id("wch"),
            principal=principal,
            name=name,
            asset_ids=assets,
            variant_ids=variants,
            categories=cats,
            title_query=query,
            below=below,
            above=above,
            currency=code,
            move_pct=move_pct,
            created_at=datetime.now(UTC),
        )
