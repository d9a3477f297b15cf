"""The report's price-index parts: category index charts (band or pairs) and grade ladders."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from sqlalchemy import Engine

from rareindex.report import load_report, render_report
from rareindex.report._pricing import IndexSeries, PricingSection, index_chart, render_indices
from rareindex.storage import upgrade
from rareindex.storage.pricing_store import StoredIndexPoint, rebuild
from tests.pricing_helpers import seed_market

NOW = datetime(2025, 3, 10, tzinfo=UTC)


def _page(engine: Engine) -> str:
    upgrade(engine)
    seed_market(engine)
    rebuild(engine)
    return render_report(load_report(engine, now=NOW, top=6))


def test_the_category_index_is_drawn_with_its_band(sqlite_engine: Engine) -> None:
    page = _page(sqlite_engine)
    section = page.split('<section id="indices">', 1)[1].split("</section>", 1)[0]
    assert section.count('<svg class="index-chart"') == 1 and "sports" in section
    assert section.count('class="band"') == 1 and 'class="pairs"' not in section
    assert section.count('<g class="ipoint">') == 8  # one marker per week
    assert "8 weeks" in section and "80% band" in section
    assert '<a href="#indices">' in page


def test_each_top_asset_has_its_grade_ladder_with_derived_grades_marked(
    sqlite_engine: Engine,
) -> None:
    page = _page(sqlite_engine)
    articles = re.findall(r'<article class="asset".*?</article>', page, flags=re.S)
    assert len(articles) == 6 and all('<table class="ladder">' in a for a in articles)
    (card0,) = [a for a in articles if "Card 0</h3>" in a]
    rows = re.findall(r'<tr class="(direct|derived)"><td>([^<]+)</td>', card0)
    assert rows[-1] == ("derived", "PSA 10")  # never sold: borrowed through the curve
    assert [kind for kind, _ in rows].count("derived") == 1
    assert '<span class="badge derived">derived</span> from' in card0
    others = [a for a in articles if "Card 0</h3>" not in a]
    assert all('class="derived"' not in a for a in others)  # every grade sold there


def test_an_index_without_a_band_shows_its_pairs() -> None:
    monday = date(2026, 1, 5)
    points = tuple(
        StoredIndexPoint(
            monday + timedelta(weeks=w),
            Decimal(100 + w),
            Decimal(100 + w),
            Decimal(100 + w),
            3 * w,
            "base" if w == 0 else "carried",
        )
        for w in range(6)
    )
    svg = index_chart(IndexSeries("category:coins", points))
    assert 'class="band"' not in svg and svg.count('class="pairs"') == 6
    assert "pairs (max 15)" in svg and svg.count('<g class="ipoint">') == 6


def test_no_index_yet_says_how_to_build_one() -> None:
    assert "rareindex index build" in render_indices(PricingSection((), {}))
