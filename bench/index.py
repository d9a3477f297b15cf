"""The price index against a known truth, and against naive estimators on the same sales.

    python -m bench.index [--quick] [--seed 7] [--sales 100000]

The truth is the fake web's own (:func:`rareindex_fakeweb.sites.prices.price_truth`, published
beside its other ground truth): per category a weekly index path over 52 weeks (a drift, a weekly
noise of sd 0.8 %, one shock of 12-20 % in a different week per category), the path the fake
market's and auction house's prices follow. The fake market sells a few hundred copies, far from
the 100,000 sales this bench needs, so the sales themselves come from a bench-only sampler on the
fake web's catalog (:func:`rareindex_fakeweb.sites.world.world`: 884 items in four categories),
priced around the fake web's true values:

* each item has four variants (raw, PSA 8, PSA 9, PSA 10 at 1, 1.6, 2.5 and 7 times the item's
  fake-web value) whose true value follows its category's path exactly: ``V(t) = V0 * I(t)``;
* each variant gets a popularity (log-normal) and its share of ``--sales`` sales at uniform times,
  priced ``V(t) * exp(e)`` with ``e`` from N(0, 0.15) in 92 % of sales and N(0, 0.6) in 8 %
  (shill bids, mis-described copies: collectibles' prices have fat tails); 10 % in GBP;
* sale types: 50 % marketplace auction, 35 % fixed price, 10 % auction house at its hammer
  price with a 20 % buyer's premium rate (the index must add it back), 3 % lots and 2 % hidden
  best offers priced at random (the index must leave them out).

It prints, in one run:

* **backtest** on the last 13 weeks: each sale predicted from its variant's earlier sales, by the
  RareIndex estimate (the index it uses only knows the weeks before), the last sale, the plain
  median and the mean of all earlier sales; the median absolute percentage error against the
  sale's price and against the true value, and each peer's error divided by "last sale"'s;
* the **coverage** of the 80 % interval of the later sale;
* the **category index** against the true path: median absolute error of ``level/100`` against
  ``I(t)/I(base)`` at weeks with >= 30 pairs, and the week of the largest one-week fall against
  the true shock's week;
* the **grade curve** ratios fitted against the true ones;
* the time of :func:`~rareindex.pricing.build_pricing` on every sale (pure, in memory), and of
  :func:`~rareindex.storage.pricing_store.rebuild` (read through the FX view, build, write) on a
  fresh SQLite and PostgreSQL database holding every generated sale (``--no-store`` skips it).

``--quick``: 20,000 sales and a backtest on every fourth sale (about 30 s on 2 vCPUs).

The database table also times the update after a resolve batch: every sale but the newest 500
is stored and built, then those 500 arrive and
:func:`~rareindex.storage.pricing_store.update_after_batch` runs on the variants they touch; a
full rebuild on every sale follows, and the two must leave identical tables.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from bench.common import console, machine, quiet_logs
from rareindex.pricing import (
    PricedSale,
    SaleRecord,
    VariantRef,
    build_pricing,
    estimate_variant,
    priced_sales,
    week_of,
)
from rareindex.pricing.build import drift_of
from rareindex_fakeweb.sites.prices import price_truth
from rareindex_fakeweb.sites.world import world

START = datetime(2025, 5, 5, tzinfo=UTC)  # the first week of the fake web's price truth
WEEKS = 52
GRADES = {"raw": 1.0, "PSA 8": 1.6, "PSA 9": 2.5, "PSA 10": 7.0}
GBP_PER_USD = 0.79
PREMIUM = Decimal("0.20")
BACKTEST_WEEKS = 13


@dataclass(frozen=True, slots=True)
class Truth:
    paths: dict[str, list[float]]
    """Category -> the true index level of each week (the fake web's: 1.0 on the newest)."""
    shock_week: dict[str, int]
    values: dict[str, float]
    """Variant id -> its true USD value when the level is 1.0 (today)."""
    variants: list[VariantRef]
    records: list[SaleRecord]

    def value(self, variant: str, category: str, when: datetime) -> float:
        week = min((when - START).days // 7, WEEKS - 1)
        return self.values[variant] * self.paths[category][week]


def generate(seed: int, n_sales: int) -> Truth:
    rng = random.Random(f"bench.index/{seed}")
    items = world(seed).items
    published = price_truth(seed)
    assert published.weeks[0] == START.date() and len(published.weeks) == WEEKS
    paths = {category: list(path) for category, path in published.paths.items()}
    shocks = {c: (week - START.date()).days // 7 for c, week in published.shocks.items()}
    variants: list[VariantRef] = []
    values: dict[str, float] = {}
    popularity: dict[str, float] = {}
    for item in items:
        for grade, factor in GRADES.items():
            vid = f"var_{item.key}_{grade.replace(' ', '').lower()}"
            variants.append(VariantRef(vid, f"ast_{item.key}", item.category, grade))
            values[vid] = item.value_cents / 100 * factor * math.exp(rng.gauss(0, 0.1))
            popularity[vid] = rng.lognormvariate(0, 0.8)
    total = sum(popularity.values())
    by_id = {v.variant_id: v for v in variants}
    records: list[SaleRecord] = []
    span = WEEKS * 7 * 86_400
    for vid in sorted(popularity):
        ref = by_id[vid]
        count = max(1, round(n_sales * popularity[vid] / total))
        for k in range(count):
            when = START + timedelta(seconds=rng.randrange(span))
            week = (when - START).days // 7
            true = values[vid] * paths[ref.category][week]
            noise = rng.gauss(0, 0.6) if rng.random() < 0.08 else rng.gauss(0, 0.15)
            price = true * math.exp(noise)
            kind = rng.random()
            sale_type, basis, rate, is_lot, visibility = (
                "auction",
                "sold_price",
                None,
                False,
                "exact",
            )
            if kind < 0.35:
                sale_type = "fixed"
            elif kind < 0.45:
                sale_type, basis, rate = "auction_house", "hammer", PREMIUM
                price /= 1 + float(PREMIUM)
            elif kind < 0.48:
                is_lot, price = True, price * rng.choice((3, 5, 10)) * 0.8
            elif kind < 0.50:
                sale_type, basis, visibility = "best_offer", "offer_accepted", "hidden"
                price *= rng.uniform(0.8, 1.6)
            gbp = rng.random() < 0.1
            amount = Decimal(f"{price * (GBP_PER_USD if gbp else 1):.2f}")
            records.append(
                SaleRecord(
                    sale_id=f"sal_{vid}_{k}",
                    variant_id=vid,
                    asset_id=ref.asset_id,
                    category=ref.category,
                    sold_at=when,
                    sale_type=sale_type,
                    price_basis=basis,
                    price=amount,
                    currency="GBP" if gbp else "USD",
                    price_usd=Decimal(f"{float(amount) / GBP_PER_USD:.2f}") if gbp else amount,
                    premium_rate=rate,
                    price_visibility=visibility,
                    is_lot=is_lot,
                )
            )
    return Truth(paths, shocks, values, variants, records)


def mdape(errors: list[float]) -> float:
    return 100 * statistics.median(errors) if errors else float("nan")


def backtest(truth: Truth, sales: list[PricedSale], every: int) -> dict[str, list[float]]:
    """Absolute percentage errors of each estimator (vs the sale, vs the true value) and the
    interval hits, on the last :data:`BACKTEST_WEEKS` weeks' sales."""
    result = build_pricing(sales, truth.variants)
    drifts = {
        key.split(":", 1)[1]: drift_of(points)
        for key, points in result.indices.items()
        if key.startswith("category:")
    }
    cutoff = START + timedelta(weeks=WEEKS - BACKTEST_WEEKS)
    by_variant: dict[str, list[PricedSale]] = {}
    for sale in sales:
        by_variant.setdefault(sale.variant_id, []).append(sale)
    out: dict[str, list[float]] = {
        k: []
        for k in (
            "rareindex",
            "last sale",
            "median",
            "mean",
            "rareindex|true",
            "last sale|true",
            "median|true",
            "mean|true",
            "hits",
        )
    }
    n = 0
    for vid in sorted(by_variant):
        chain = sorted(by_variant[vid], key=lambda s: (s.sold_at, s.sale_id))
        for k, sale in enumerate(chain):
            if k == 0 or sale.sold_at < cutoff:
                continue
            n += 1
            if n % every:
                continue
            before = [s for s in chain[:k] if s.sold_at < sale.sold_at]
            if not before:
                continue
            known_week = week_of(sale.sold_at) - timedelta(weeks=1)
            full = drifts[sale.category]

            def drift(when: datetime, full=full, known_week=known_week) -> float:
                return full(min(when, datetime.combine(known_week, datetime.min.time(), UTC)))

            est = estimate_variant(before, as_of=sale.sold_at, drift=drift)
            assert est is not None
            prices = [s.price_usd for s in before]
            guesses = {
                "rareindex": est.value_usd,
                "last sale": prices[-1],
                "median": statistics.median(prices),
                "mean": statistics.fmean(prices),
            }
            true = truth.value(vid, sale.category, sale.sold_at)
            for name, guess in guesses.items():
                out[name].append(abs(guess / sale.price_usd - 1))
                out[f"{name}|true"].append(abs(guess / true - 1))
            out["hits"].append(1.0 if est.low_usd <= sale.price_usd <= est.high_usd else 0.0)
    return out


def index_errors(truth: Truth, sales: list[PricedSale]) -> list[tuple[str, float, int, int, int]]:
    """Per category: median abs error (%), weeks compared, index's sharpest-fall week, truth's."""
    result = build_pricing(sales, truth.variants, base=START.date())
    rows = []
    for key, points in sorted(result.indices.items()):
        category = key.split(":", 1)[1]
        path = truth.paths[category]
        errors = []
        for p in points:
            week = (p.week - START.date()).days // 7
            if p.pairs >= 30 and 0 <= week < WEEKS:
                errors.append(abs(p.level / 100 / (path[week] / path[0]) - 1))
        falls = [
            (points[n].level / points[n - 1].level, (points[n].week - START.date()).days // 7)
            for n in range(1, len(points))
        ]
        fell_at = min(falls)[1]
        rows.append(
            (
                category,
                100 * statistics.median(errors),
                len(errors),
                fell_at,
                truth.shock_week[category],
            )
        )
    return rows


def curve_errors(truth: Truth, sales: list[PricedSale]) -> list[tuple[str, str, float, float]]:
    result = build_pricing(sales, truth.variants)
    rows = []
    for category, curve in sorted(result.curves.items()):
        for grade in ("PSA 8", "PSA 9", "PSA 10"):
            fitted = curve.ratio(grade, "raw")
            if fitted is not None:
                rows.append((category, grade, fitted, GRADES[grade]))
    return rows


@dataclass(frozen=True, slots=True)
class Stored:
    inserted: float
    """Seconds to insert the generated sales (not part of any build)."""
    rebuilt: float
    """Seconds of a full rebuild on every sale."""
    updated: float
    """Seconds of the incremental update after the newest :data:`BATCH` sales arrived."""
    batch: int
    identical: bool
    """The incremental update's tables equal the full rebuild's, row for row."""
    points: int


BATCH = 500


def store_and_rebuild(url: str, truth: Truth) -> Stored:
    """Insert every generated sale but the newest :data:`BATCH` into a fresh database (seconds,
    not part of the build) and build the index; then insert those :data:`BATCH` sales (as one
    resolve batch would write them) and time
    :func:`~rareindex.storage.pricing_store.update_after_batch` on the variants they touch; then
    time a full :func:`~rareindex.storage.pricing_store.rebuild` on every sale (read, build,
    write) and compare the tables the two left, row for row."""
    from sqlalchemy import func, insert, select

    from rareindex.fx import load_ecb_rates
    from rareindex.storage import make_engine, upgrade
    from rareindex.storage.pricing_store import rebuild, table_rows, update_after_batch
    from rareindex.storage.schema import (
        asset_variants,
        assets,
        auctions,
        connectors,
        index_values,
        sources,
    )

    engine = make_engine(url)
    upgrade(engine)
    started = time.perf_counter()
    load_ecb_rates(engine, currencies=["GBP", "USD"], since=START.date() - timedelta(days=7))
    subject = {"source_id": "bench", "connector_id": "bench-market"}
    by_id = {v.variant_id: v for v in truth.variants}
    with engine.begin() as conn:
        conn.execute(insert(sources).values(id="bench", name="Bench market"))
        conn.execute(
            insert(connectors).values(
                id="bench-market",
                source_id="bench",
                version="1",
                parser_version="1",
                refresh_class="ACTIVE",
                meta={},
            )
        )
        items = sorted({(v.asset_id, v.category) for v in truth.variants})
        conn.execute(
            insert(assets),
            [{"id": a, "asset_key": a, "category": c, "title": a} for a, c in items],
        )
        conn.execute(
            insert(asset_variants),
            [
                {
                    "id": v.variant_id,
                    "asset_id": v.asset_id,
                    "variant_key": v.variant_id,
                    "grader": None if v.grade == "raw" else "PSA",
                    "grade": None if v.grade == "raw" else v.grade.split()[1],
                }
                for v in truth.variants
            ],
        )
        conn.execute(insert(auctions).values(id="auc_bench", source_id="bench", external_id="a"))
    newest = sorted(truth.records, key=lambda r: (r.sold_at, r.sale_id))[-BATCH:]
    late = {r.sale_id for r in newest}
    earlier = [r for r in truth.records if r.sale_id not in late]
    inserted = time.perf_counter() - started
    inserted += _insert_sales(engine, earlier, by_id, subject)
    rebuild(engine, base=START.date())
    _insert_sales(engine, newest, by_id, subject)
    started = time.perf_counter()
    with engine.begin() as conn:
        update_after_batch(conn, {r.variant_id or "" for r in newest})
    updated = time.perf_counter() - started
    with engine.connect() as conn:
        incremental = table_rows(conn)
    started = time.perf_counter()
    rebuild(engine, base=START.date())
    rebuilt = time.perf_counter() - started
    with engine.connect() as conn:
        full = table_rows(conn)
        points = int(conn.execute(select(func.count()).select_from(index_values)).scalar_one())
    engine.dispose()
    return Stored(inserted, rebuilt, updated, len(newest), incremental == full, points)


def _insert_sales(
    engine: Any, records: list[SaleRecord], by_id: dict[str, VariantRef], subject: dict[str, str]
) -> float:
    """Insert ``records`` as sales (and auction lots); returns the seconds it took."""
    from sqlalchemy import insert

    from rareindex.storage.schema import auction_lots, sales

    started = time.perf_counter()
    with engine.begin() as conn:
        lots, rows = [], []
        for r in records:
            rows.append(
                {
                    "id": r.sale_id,
                    "sale_date": r.sold_at,
                    "external_id": r.sale_id,
                    "title": r.sale_id,
                    "sale_type": r.sale_type,
                    "price_basis": r.price_basis,
                    "price_visibility": r.price_visibility,
                    "price": r.price,
                    "currency": r.currency,
                    "is_lot": r.is_lot,
                    "asset_id": by_id[r.variant_id or ""].asset_id,
                    "variant_id": r.variant_id,
                    **subject,
                }
            )
            if r.premium_rate is not None:
                lots.append(
                    {
                        "id": f"lot_{r.sale_id}",
                        "auction_id": "auc_bench",
                        "lot_number": r.sale_id,
                        "external_id": r.sale_id,
                        "title": r.sale_id,
                        "status": "sold",
                        "currency": r.currency,
                        "hammer_price": r.price,
                        "buyer_premium_rate": r.premium_rate,
                        "asset_id": by_id[r.variant_id or ""].asset_id,
                        "variant_id": r.variant_id,
                        **subject,
                    }
                )
        for start in range(0, len(rows), 5_000):
            conn.execute(insert(sales), rows[start : start + 5_000])
        for start in range(0, len(lots), 5_000):
            conn.execute(insert(auction_lots), lots[start : start + 5_000])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20,000 sales, every 4th backtested")
    parser.add_argument("--sales", type=int, help="sales to generate (default 106,000)")
    parser.add_argument("--every", type=int, help="backtest every n-th later sale (default 1)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-store", action="store_true", help="skip the database rebuilds")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    quiet_logs()
    from rich.table import Table

    n_sales = args.sales or (20_000 if args.quick else 106_000)
    every = args.every or (4 if args.quick else 1)
    out = console()
    began = time.perf_counter()
    truth = generate(args.seed, n_sales)
    sales, dropped = priced_sales(truth.records)
    generated = time.perf_counter() - began

    started = time.perf_counter()
    result = build_pricing(sales, truth.variants, base=START.date())
    build_s = time.perf_counter() - started

    errors = backtest(truth, sales, every)
    last = mdape(errors["last sale"])
    table = Table(
        title=f"backtest: each of the last {BACKTEST_WEEKS} weeks' sales from earlier ones"
    )
    for column in (
        "estimator",
        "MdAPE vs sale %",
        "x last sale",
        "MdAPE vs true value %",
        "predictions",
    ):
        table.add_column(column, justify="right")
    for name in ("rareindex", "last sale", "median", "mean"):
        value = mdape(errors[name])
        table.add_row(
            name,
            f"{value:.1f}",
            f"{value / last:.2f}",
            f"{mdape(errors[name + '|true']):.1f}",
            f"{len(errors[name]):,}",
        )
    out.print(table)
    coverage = 100 * statistics.fmean(errors["hits"])
    out.print(f"interval coverage of the later sale: {coverage:.1f} % (nominal 80 %)")

    table = Table(title="category index vs the true path (weeks with >= 30 pairs)")
    for column in (
        "category",
        "median abs error %",
        "weeks",
        "sharpest fall (week)",
        "true shock (week)",
    ):
        table.add_column(column, justify="right")
    for category, error, weeks, fell, shock in index_errors(truth, sales):
        table.add_row(category, f"{error:.2f}", str(weeks), str(fell), str(shock))
    out.print(table)

    table = Table(title="grade curve: fitted ratio to raw vs the true one")
    for column in ("category", "grade", "fitted", "true"):
        table.add_column(column, justify="right")
    for category, grade, fitted, true in curve_errors(truth, sales):
        table.add_row(category, grade, f"{fitted:.2f}", f"{true:.2f}")
    out.print(table)

    derived = sum(1 for e in result.estimates.values() if e.basis == "derived")
    out.print(
        f"sales generated {len(truth.records):,}, priced {len(sales):,}, left out "
        f"{sum(dropped.values()):,} ({', '.join(f'{k} {v}' for k, v in sorted(dropped.items()))})"
    )
    out.print(
        f"build_pricing on {len(sales):,} sales: {build_s:.1f} s "
        f"({len(result.estimates):,} estimates, {derived:,} derived, "
        f"{len(result.indices)} indices); generating took {generated:.1f} s"
    )
    if not args.no_store:
        import tempfile
        from pathlib import Path

        from bench.common import scratch_postgres

        table = Table(title=f"rareindex index build on {len(truth.records):,} stored sales")
        for column in (
            "database",
            "insert s (not the build)",
            "full rebuild s",
            f"update after {BATCH} new sales s",
            "update == full rebuild",
            "index rows",
        ):
            table.add_column(column, justify="right")
        with tempfile.TemporaryDirectory(prefix="ri-bench-index-") as tmp, scratch_postgres() as pg:
            targets = [("SQLite", f"sqlite:///{Path(tmp) / 'index.db'}")]
            if not args.no_postgres and not args.quick:
                targets.append(("PostgreSQL", pg.create("index")))
            for name, url in targets:
                got = store_and_rebuild(url, truth)
                table.add_row(
                    name,
                    f"{got.inserted:.1f}",
                    f"{got.rebuilt:.1f}",
                    f"{got.updated:.2f}",
                    "identical" if got.identical else "DIFFERENT",
                    f"{got.points:,}",
                )
        out.print(table)
    out.print(f"machine: {machine()}; total {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
