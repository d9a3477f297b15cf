"""The weekly repeat-sales index on sales whose true path is known."""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections import defaultdict
from datetime import date, timedelta

import pytest

from rareindex.pricing import (
    IndexParams,
    PricedSale,
    SalePair,
    repeat_sales_index,
    sale_pairs,
    week_of,
)
from tests.pricing_helpers import MONDAY, sale, trending_sales

PATH = [1.0, 1.02, 1.05, 1.05, 1.08, 0.90, 0.92, 0.95, 0.97, 1.0]


def test_noise_free_pairs_give_the_true_path_exactly() -> None:
    points = repeat_sales_index(sale_pairs(trending_sales(PATH)))
    assert [p.week for p in points] == [week_of(MONDAY) + timedelta(weeks=w) for w in range(10)]
    assert [p.level for p in points] == pytest.approx([100 * x for x in PATH], rel=1e-6)
    assert points[0].method == "base" and all(p.method == "wls" for p in points[1:])
    # each sale pairs with up to four earlier weeks of its variant
    assert [p.pairs for p in points[1:]] == [60 * min(w, 4) for w in range(1, 10)]


def test_noisy_pairs_track_the_path_and_the_shock_lands_in_its_week() -> None:
    points = repeat_sales_index(sale_pairs(trending_sales(PATH, variants=200, noise=0.1)))
    errors = [abs(p.level / (100 * x) - 1) for p, x in zip(points, PATH, strict=True)]
    assert max(errors) < 0.03
    falls = [points[n].level / points[n - 1].level for n in range(1, len(points))]
    assert falls.index(min(falls)) + 1 == 5


def test_the_base_week_is_100() -> None:
    base = MONDAY + timedelta(weeks=4)
    points = repeat_sales_index(sale_pairs(trending_sales(PATH)), base=base)
    assert points[4].level == pytest.approx(100.0)
    assert points[0].level == pytest.approx(100 / 1.08)


def test_a_thin_week_takes_the_median_and_one_odd_pair_cannot_swing_it() -> None:
    sales = trending_sales(PATH[:3], variants=30)
    # week 3: only five variants sell again (15 pairs with their weeks 0-2), one at ten times
    # its value
    for v in range(5):
        price = 100 * (1 + v) * 1.05 * (10 if v == 0 else 1)
        sales.append(sale(f"var_{v:03d}", MONDAY + timedelta(weeks=3, hours=1), price, n=9))
    points = repeat_sales_index(sale_pairs(sales), params=IndexParams(min_pairs=20))
    assert points[3].method == "median" and points[3].pairs == 15  # 5 sales x 3 earlier weeks
    assert points[3].level == pytest.approx(105.0, rel=1e-6)


def test_a_week_without_pairs_carries_the_level_before_it() -> None:
    sales = [
        s
        for s in trending_sales(PATH[:4])
        if week_of(s.sold_at) != week_of(MONDAY) + timedelta(weeks=2)
    ]
    points = repeat_sales_index(sale_pairs(sales))
    assert points[2].method == "carried" and points[2].pairs == 0
    assert points[2].level == points[1].level
    assert points[3].level == pytest.approx(105.0, rel=1e-6)


def test_same_week_resales_are_not_pairs_and_input_order_does_not_matter() -> None:
    sales = trending_sales(PATH, variants=40, per_week=2, noise=0.05)
    assert all(p.second > p.first for p in sale_pairs(sales))
    forward = repeat_sales_index(sale_pairs(sales))
    backward = repeat_sales_index(sale_pairs(list(reversed(sales))))
    assert forward == backward


def test_a_resumed_index_equals_a_full_computation_to_the_last_bit() -> None:
    sales = trending_sales(PATH, variants=80, noise=0.2)
    cut = week_of(MONDAY) + timedelta(weeks=6)
    earlier = [s for s in sales if week_of(s.sold_at) < cut or s.variant_id >= "var_040"]
    before = repeat_sales_index(sale_pairs(earlier))
    full = repeat_sales_index(sale_pairs(sales))
    resumed = repeat_sales_index(sale_pairs(sales), resume=before, resume_from=cut)
    assert resumed == full
    assert [p for p in resumed if p.week < cut] == [p for p in before if p.week < cut]
    # resumed a week too late, the new sales of week 6 are missed
    wrong = repeat_sales_index(
        sale_pairs(sales), resume=before, resume_from=cut + timedelta(weeks=1)
    )
    assert wrong != full
    # a resume that does not start on the same first week is ignored
    assert repeat_sales_index(sale_pairs(sales), resume=before[1:], resume_from=cut) == full


def test_a_sale_pairs_with_its_variants_four_latest_earlier_weeks_weighing_one_in_all() -> None:
    sales = [
        sale("var_a", MONDAY + timedelta(weeks=w), 100.0 + w, n=w) for w in (0, 1, 3, 4, 6, 40)
    ]
    pairs = sale_pairs(sales)
    by_second: dict[object, list[float]] = {}
    for pair in pairs:
        by_second.setdefault(pair.second, []).append(pair.weight)
    weeks = [week_of(MONDAY) + timedelta(weeks=w) for w in (1, 3, 4, 6)]
    assert sorted(by_second) == weeks  # week 40 is more than 25 weeks after week 6: unpaired
    assert [len(by_second[w]) for w in weeks] == [1, 2, 3, 4]
    assert all(sum(ws) == pytest.approx(1.0) for ws in by_second.values())
    six = [p for p in pairs if p.second == weeks[-1]]
    assert sorted(p.first for p in six) == [
        week_of(MONDAY) + timedelta(weeks=w) for w in (0, 1, 3, 4)
    ]
    assert six[0].log_ratio == pytest.approx(math.log(106 / 100))
    # the same pairs, with the same weights, when only those from week 3 on are asked for
    later = sale_pairs(sales, since=weeks[1])
    assert later == [p for p in pairs if p.first >= weeks[1]]


def plain_pairs(sales: list[PricedSale], since: date | None = None) -> list[SalePair]:
    """:func:`sale_pairs` the plain way: every sale against each of its variant's four latest
    earlier weeks sold at most 25 weeks before, sorted after."""
    logs: dict[str, dict[date, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in sales:
        logs[s.variant_id][week_of(s.sold_at)].append(math.log(s.price_usd))
    pairs = []
    for variant_id, weeks in logs.items():
        ordered = sorted(weeks)
        for n, second in enumerate(ordered):
            found = [u for u in ordered[max(0, n - 4) : n] if second - u <= timedelta(weeks=25)]
            for y in weeks[second]:
                for first in found:
                    if since is None or first >= since:
                        middle = statistics.median(weeks[first])
                        pairs.append(
                            SalePair(variant_id, first, second, y - middle, 1 / len(found))
                        )
    return sorted(pairs, key=lambda p: (p.second, p.first, p.variant_id, p.log_ratio, p.weight))


def test_pairs_are_formed_in_the_order_a_plain_pairing_sorted_after_has() -> None:
    """sale_pairs forms its pairs in their sorted order (cell by cell) and reads the weeks before
    ``since`` too: the same pairs, to the bit and in the same order, as the plain way."""
    rng = random.Random(3)
    sales = [
        sale(f"var_{v:02d}", MONDAY + timedelta(weeks=w, hours=rng.randrange(160)), price, n=k)
        for v in range(12)
        for w in sorted(rng.sample(range(60), 25))
        for k in range(rng.choice((1, 1, 2, 3)))
        for price in [100 * (1 + v) * math.exp(rng.gauss(0, 0.3))]
    ]
    rng.shuffle(sales)
    assert sale_pairs(sales) == plain_pairs(sales)
    since = week_of(MONDAY) + timedelta(weeks=30)
    assert sale_pairs(sales, since=since) == plain_pairs(sales, since)


@pytest.mark.parametrize(
    ("params", "digest"),
    [
        (IndexParams(), "ca85014258f6b309"),
        (IndexParams(window_weeks=6, min_pairs=150), "7df19cdd6b5b2538"),
    ],
)
def test_the_fit_gives_the_same_bits_as_before(params: IndexParams, digest: str) -> None:
    """Every point's exact log level and standard error, as the fit computed them before it read
    its pairs as columns (dfe53cc): an update resumes from published levels, so a fit that
    changed their last bit would leave tables a full rebuild does not."""
    sales = trending_sales(PATH, variants=40, per_week=2, noise=0.3, seed=5)
    points = repeat_sales_index(sale_pairs(sales), params=params)
    text = repr([(p.log_level.hex(), p.se.hex(), p.pairs, p.method) for p in points])
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == digest
