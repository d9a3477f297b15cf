"""Which stored sales enter the price index, and at what price: :func:`priced_sales`.

A sale is left out — counted under a reason, never silently — when it is not a clean price of one
item (rules of docs/domain.md#anomalies the normalizer and the resolver already flag):

=========================  ==================================================================
``unresolved``             no variant (the title did not resolve to one asset and grade)
``lot``                    several items sold together
``hidden_price``           an accepted best offer: the price shown is not the price paid
``flagged``                a rule flag that keeps it out of the index (reprint, custom, …)
``quarantined``            held in the review queue (pending or rejected; see rareindex.review)
``anomaly``                its price observation was flagged a statistical outlier
``hammer_without_premium`` an auction hammer price whose buyer's premium is unknown
``no_fx_rate``             no ECB rate on or before the sale date for its currency
=========================  ==================================================================

Auction prices enter at the price realised, buyer's premium included (the hammer plus the stored
premium, or the hammer times one plus the lot's premium rate), so an auction-house sale and a
fixed-price sale of the same slab are on the same footing; shipping never counts. Asks (listings)
are not sales and never reach this module.

Example:
    >>> kept, dropped = priced_sales(records)                              # doctest: +SKIP
    >>> dropped                                                            # doctest: +SKIP
    Counter({'hidden_price': 12, 'lot': 7, 'anomaly': 3})
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from ..quality import excluded_from_index

__all__ = ["EXCLUSION_REASONS", "PricedSale", "SaleRecord", "exclusion_reason", "priced_sales"]

EXCLUSION_REASONS = (
    "unresolved",
    "lot",
    "hidden_price",
    "flagged",
    "quarantined",
    "anomaly",
    "hammer_without_premium",
    "no_fx_rate",
)


@dataclass(frozen=True, slots=True)
class SaleRecord:
    """One stored sale as the index reads it (``sales`` joined with its variant, asset, lot, FX
    view and price observation)."""

    sale_id: str
    variant_id: str | None
    asset_id: str | None
    category: str | None
    sold_at: datetime
    sale_type: str
    price_basis: str
    price: Decimal
    currency: str
    price_usd: Decimal | None = None
    """``price`` in USD at the sale date's ECB rate (the ``sales_multi_currency`` view)."""
    buyer_premium: Decimal | None = None
    premium_rate: Decimal | None = None
    """The auction lot's buyer's premium rate (0.2 = 20 %), when the lot states one."""
    price_visibility: str = "exact"
    is_lot: bool = False
    flags: tuple[str, ...] = ()
    anomaly_reason: str | None = None
    set_id: str | None = None
    quarantined: bool = False
    """Held in the review queue: pending or rejected (an accepted sale enters)."""


@dataclass(frozen=True, slots=True)
class PricedSale:
    """A sale that enters the index: its price realised in USD and in its own currency."""

    sale_id: str
    variant_id: str
    asset_id: str
    category: str
    sold_at: datetime
    price_usd: float
    price: Decimal
    """The price realised in ``currency`` (buyer's premium included, shipping excluded)."""
    currency: str
    sale_type: str
    set_id: str | None = None


def _realised(record: SaleRecord) -> Decimal | None:
    if record.price_basis != "hammer":
        return record.price
    if record.buyer_premium is not None:
        return record.price + record.buyer_premium
    if record.premium_rate is not None:
        return record.price * (1 + record.premium_rate)
    return None


def exclusion_reason(record: SaleRecord) -> str | None:
    """Why ``record`` stays out of the index (one of :data:`EXCLUSION_REASONS`), None if it
    enters. The first reason in the table's order wins."""
    if record.variant_id is None or record.asset_id is None or record.category is None:
        return "unresolved"
    if record.is_lot or "lot" in record.flags:
        return "lot"
    if record.price_visibility == "hidden":
        return "hidden_price"
    if record.flags and excluded_from_index(record.flags):
        return "flagged"
    if record.quarantined:
        return "quarantined"
    if record.anomaly_reason is not None:
        return "anomaly"
    if _realised(record) is None:
        return "hammer_without_premium"
    if record.price_usd is None and record.currency != "USD":
        return "no_fx_rate"
    return None


def priced_sales(records: Iterable[SaleRecord]) -> tuple[list[PricedSale], Counter[str]]:
    """The records that enter the index, priced realised in USD, sorted by (variant, date, id);
    and how many were left out by reason."""
    kept: list[PricedSale] = []
    dropped: Counter[str] = Counter()
    for record in records:
        reason = exclusion_reason(record)
        if reason is not None:
            dropped[reason] += 1
            continue
        realised = _realised(record)
        assert realised is not None and record.variant_id and record.asset_id and record.category
        if realised <= 0 or record.price <= 0:
            dropped["flagged"] += 1
            continue
        if record.currency == "USD":
            usd = float(realised)
        else:
            assert record.price_usd is not None
            usd = float(realised) * float(record.price_usd) / float(record.price)
        kept.append(
            PricedSale(
                sale_id=record.sale_id,
                variant_id=record.variant_id,
                asset_id=record.asset_id,
                category=record.category,
                sold_at=record.sold_at,
                price_usd=usd,
                price=realised,
                currency=record.currency,
                sale_type=record.sale_type,
                set_id=record.set_id,
            )
        )
    kept.sort(key=lambda s: (s.variant_id, s.sold_at, s.sale_id))
    return kept, dropped
