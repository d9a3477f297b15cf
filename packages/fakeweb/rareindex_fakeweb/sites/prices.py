"""The fake web's price truth: what every copy is worth in any week, published beside the sites.

The marketplace's sales and asks and the auction house's lots scatter around these values
(:mod:`.market_data`, :mod:`.auction_data`), so a price index built from them can be checked
against the truth:

* :func:`price_truth` — per category, a weekly index path over the :data:`WEEKS` weeks up to
  :data:`~._web.NOW`: a drift (uniform in -0.1 % .. +0.4 % a week), a weekly noise (sd 0.8 %)
  and one shock (a fall of 12-20 % in one week, a different week per category:
  :attr:`PriceTruth.shocks`).
  Levels are relative to the newest week (1.0 there): what a copy is worth today is what the sites
  priced it at before they had a truth.
* :meth:`PriceTruth.value_cents` — a copy's true USD value in a week: its fixed value (item
  value x grade factor, :meth:`~.world.Copy.value_cents`) times its category's level that week.
  Every variant (item x grade) follows its category's path exactly.

The paths come from their own generator (``site_rng(seed, "prices")``), so drawing them changes
no other generated page; a site's prices are its old draws times the level of their date.

Example:
    >>> truth = price_truth(7)
    >>> sorted(truth.shocks)
    ['coin', 'comic', 'sports', 'tcg']
    >>> truth.level("coin", NOW)
    1.0
    >>> truth.weeks[0], len(truth.paths["coin"])
    (datetime.date(2025, 5, 5), 52)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ._web import NOW, site_rng
from .catalog import Category
from .world import Copy

__all__ = ["CATEGORIES", "SHOCK_WEEKS", "WEEKS", "PriceTruth", "build_price_truth", "price_truth"]

WEEKS = 52
CATEGORIES: tuple[Category, ...] = ("coin", "comic", "sports", "tcg")
SHOCK_WEEKS = {"coin": 30, "comic": 35, "sports": 40, "tcg": 45}
"""The week (0 = the first) of each category's shock. The marketplace's sold listings span the
last 120 days (from week 34): the comic, sports and tcg shocks fall inside them; the auction
house's sales close in weeks 41, 44 and 48."""
DRIFT = (-0.001, 0.004)
NOISE = 0.008
SHOCK = (0.12, 0.20)


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


@dataclass(frozen=True, slots=True)
class PriceTruth:
    weeks: tuple[date, ...]
    """The Monday (UTC) of each week, oldest first; the last is the week of ``NOW``."""
    paths: dict[str, tuple[float, ...]]
    """Category -> its level each week (1.0 on the newest)."""
    shocks: dict[str, date]
    """Category -> the week its shock fell in."""

    def week_index(self, when: datetime | date) -> int:
        """The week ``when`` falls in (clamped to the published weeks)."""
        day = when.date() if isinstance(when, datetime) else when
        n = (_monday(day) - self.weeks[0]).days // 7
        return min(max(n, 0), len(self.weeks) - 1)

    def level(self, category: str, when: datetime | date) -> float:
        """The category's level in the week of ``when`` (1.0: as today)."""
        return self.paths[category][self.week_index(when)]

    def value_cents(self, copy: Copy, when: datetime | date) -> float:
        """``copy``'s true USD value in cents in the week of ``when``."""
        return copy.value_cents() * self.level(copy.item.category, when)


@functools.lru_cache(maxsize=4)
def price_truth(seed: int) -> PriceTruth:
    """The price truth for ``seed`` (cached: ground truth for tests and the index bench)."""
    return build_price_truth(seed)


def build_price_truth(seed: int) -> PriceTruth:
    """Generate the paths for ``seed`` afresh."""
    rng = site_rng(seed, "prices")
    last = _monday(NOW.date())
    weeks = tuple(last - timedelta(weeks=WEEKS - 1 - n) for n in range(WEEKS))
    paths: dict[str, tuple[float, ...]] = {}
    shocks: dict[str, date] = {}
    for category in CATEGORIES:
        drift = rng.uniform(*DRIFT)
        shock = -rng.uniform(*SHOCK)
        level, logs = 0.0, []
        for week in range(WEEKS):
            if week:
                level += drift + rng.gauss(0, NOISE)
                level += shock if week == SHOCK_WEEKS[category] else 0.0
            logs.append(level)
        paths[category] = tuple(math.exp(x - logs[-1]) for x in logs)
        shocks[category] = weeks[SHOCK_WEEKS[category]]
    return PriceTruth(weeks, paths, shocks)
