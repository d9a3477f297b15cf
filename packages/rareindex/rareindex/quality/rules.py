"""Rules before statistics: what a record says about itself that keeps it out of the index.

docs/domain.md#anomalies puts rules ahead of any outlier test: a lot, a reprint, a custom card, a
redemption, sealed product or a hidden Best Offer price is not a sale of one graded copy at a
known price, so it must never reach the price statistics. :func:`rule_flags` reads a normalized
record (its fields, the flags its connector stated, and its title through the SDK's
:func:`~rareindex_adapters.lift_grading`) and returns :class:`QualityFlag` values;
:func:`excluded_from_index` says whether those flags keep the observation out of the index.
Flagged records are stored all the same: a flag is never a deletion.

Only priced observations (``sale``, ``listing``, ``auction_lot``, ``price_observation``) are read;
catalog items, population reports and news carry no price and get no flags.

Example:
    >>> from datetime import UTC, datetime
    >>> from rareindex_connectors.records import Money, Sale
    >>> sale = Sale(external_id="e-1", title="Lot of 3 Luka Doncic Prizm RC PSA 10",
    ...             price=Money(amount="900", currency="USD"), sale_type="best_offer",
    ...             sold_at=datetime(2026, 11, 1, tzinfo=UTC))
    >>> rule_flags(sale)
    ('lot', 'hidden_price')
    >>> excluded_from_index(rule_flags(sale))
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from rareindex_adapters import TitleFlag, lift_grading
from rareindex_connectors.records import (
    AuctionLot,
    Listing,
    NormalizedRecord,
    PriceObservation,
    Sale,
)

__all__ = ["EXCLUDING_FLAGS", "QualityFlag", "excluded_from_index", "rule_flags"]


class QualityFlag(StrEnum):
    """Why a record is not a clean observation of one item at a known price: a closed vocabulary."""

    LOT = "lot"
    REPRINT = "reprint"
    CUSTOM = "custom"
    REDEMPTION = "redemption"
    SEALED = "sealed"
    NEGATED_GRADE = "negated_grade"
    SPECULATIVE_GRADE = "speculative_grade"
    HIDDEN_PRICE = "hidden_price"
    MULTIPLE_GRADES = "multiple_grades"


EXCLUDING_FLAGS: frozenset[QualityFlag] = frozenset(
    {
        QualityFlag.LOT,
        QualityFlag.REPRINT,
        QualityFlag.CUSTOM,
        QualityFlag.REDEMPTION,
        QualityFlag.SEALED,
        QualityFlag.HIDDEN_PRICE,
    }
)
"""Flags that keep an observation out of the price statistics (it is still stored).

The grade flags are not among them: a negated, speculative or doubled grade makes the *variant*
uncertain (entity resolution treats the item as ungraded-unknown), not the price wrong.
"""

# The title reader's flags we act on, named explicitly so a rename in the SDK fails at import
# time instead of silently matching nothing. best_offer in a title ("OBO") says offers were
# welcome, not that one was accepted, so it is left to the record's sale_type; invalid_grade,
# other_grader and legacy_scale are grade-parsing notes for entity resolution.
_FROM_TITLE: dict[TitleFlag, QualityFlag] = {
    TitleFlag.LOT: QualityFlag.LOT,
    TitleFlag.REPRINT: QualityFlag.REPRINT,
    TitleFlag.CUSTOM: QualityFlag.CUSTOM,
    TitleFlag.REDEMPTION: QualityFlag.REDEMPTION,
    TitleFlag.SEALED: QualityFlag.SEALED,
    TitleFlag.NEGATED_GRADE: QualityFlag.NEGATED_GRADE,
    TitleFlag.SPECULATIVE_GRADE: QualityFlag.SPECULATIVE_GRADE,
    TitleFlag.MULTIPLE_GRADES: QualityFlag.MULTIPLE_GRADES,
}
_VALUES: dict[str, QualityFlag] = {flag.value: flag for flag in QualityFlag}
_ORDER: dict[QualityFlag, int] = {flag: i for i, flag in enumerate(QualityFlag)}

_PricedRecord = Sale | Listing | AuctionLot | PriceObservation


def rule_flags(record: NormalizedRecord) -> tuple[str, ...]:
    """The :class:`QualityFlag` values of one normalized record, in enum order, without repeats.

    Sources, all of them honoured:

    * the title, read by ``lift_grading`` (lot, reprint, custom, redemption, sealed, negated,
      speculative and multiple grades);
    * ``Sale.is_lot`` (``lot``) and the connector-stated ``Sale.flags`` that are in the vocabulary;
    * a ``Sale`` whose ``price_visibility`` is ``hidden`` or whose ``sale_type`` is
      ``best_offer`` (eBay shows the list price, not the accepted one: ``hidden_price``).

    Records that are not priced observations give ``()``.
    """
    if not isinstance(record, _PricedRecord):
        return ()
    found: set[QualityFlag] = set()
    title_flags = lift_grading(record.title).flags
    found.update(_FROM_TITLE[TitleFlag(f)] for f in title_flags if f in _FROM_TITLE)
    if isinstance(record, Sale):
        found.update(_VALUES[f] for f in record.flags if f in _VALUES)
        if record.is_lot:
            found.add(QualityFlag.LOT)
        if record.price_visibility == "hidden" or record.sale_type == "best_offer":
            found.add(QualityFlag.HIDDEN_PRICE)
    return tuple(str(flag) for flag in sorted(found, key=_ORDER.__getitem__))


def excluded_from_index(flags: Iterable[str]) -> bool:
    """True when any of ``flags`` keeps the observation out of the price statistics.

    Example:
        >>> excluded_from_index(["negated_grade"]), excluded_from_index(["sealed"])
        (False, True)
    """
    return any(flag in EXCLUDING_FLAGS for flag in flags)
