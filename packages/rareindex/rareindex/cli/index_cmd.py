"""``rareindex index build|show``: the price index — estimates, grade ladders, category indices.

``build`` reads every stored sale, leaves out lots, hidden prices, flagged and anomalous ones
(counted by reason), and replaces ``price_estimates``, ``grade_curves`` and ``index_values``: the
same sales always give the same rows. ``show`` prints what was published: the list of indices, one
index week by week with a chart in the terminal, a variant's estimate, or an asset's grade ladder.

Example:
    $ rareindex index build --base 2026-01-05
    $ rareindex index show
    $ rareindex index show category:sports
    $ rareindex index show --variant var_01J…
    $ rareindex index show --asset ast_01J…
    $ rareindex index show --basket ast_01J…,ast_01K…
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..pricing import Estimate, priced_sales
from ..pricing.build import basket_index
from ..storage import Engine
from ..storage.pricing_store import (
    BuildSummary,
    StoredIndexPoint,
    asset_estimates,
    index_ids,
    index_series,
    most_sold_estimates,
    rebuild,
    sale_records,
    stored_estimate,
)
from ._common import console, errors, migrated_database, settings_of

__all__ = ["app", "build_cmd", "estimate_table", "index_chart", "print_price_index", "show_cmd"]

app = typer.Typer(help="The price index: build it from the stored sales, show it.")

DAY = ["%Y-%m-%d"]
BARS = " ▁▂▃▄▅▆▇█"


def _summary_line(summary: BuildSummary) -> str:
    dropped = ", ".join(f"{n} {r}" for r, n in sorted(summary.dropped.items())) or "none"
    as_of = summary.as_of.date().isoformat() if summary.as_of else "-"
    return (
        f"index built as of {as_of} from {summary.sales} sales (left out: {dropped}): "
        f"{summary.estimates} estimates ({summary.derived} derived), "
        f"{summary.curves} grade curves, {summary.indices} indices"
    )


@app.command("build")
def build_cmd(
    ctx: typer.Context,
    base: Annotated[
        datetime | None,
        typer.Option(
            formats=DAY,
            help="The week whose level is 100 (default, or outside an index: its first week).",
        ),
    ] = None,
    as_of: Annotated[
        datetime | None,
        typer.Option("--as-of", formats=DAY, help="Value on this day (default: the newest sale)."),
    ] = None,
) -> None:
    """Rebuild every estimate, grade curve and index from the stored sales."""
    engine = migrated_database(settings_of(ctx))
    when = as_of.replace(hour=23, minute=59, second=59, tzinfo=UTC) if as_of else None
    summary = rebuild(engine, base=base.date() if base else None, as_of=when)
    console.print(_summary_line(summary))


def index_chart(points: Sequence[StoredIndexPoint], *, width: int = 60) -> str:
    """A one-line chart of the levels (the newest ``width`` weeks), low to high in 8 steps."""
    shown = [float(p.level) for p in points[-width:]]
    if not shown:
        return ""
    low, high = min(shown), max(shown)
    span = (high - low) or 1.0
    return "".join(BARS[1 + round((v - low) / span * (len(BARS) - 2))] for v in shown)


def estimate_table(rows: Sequence[tuple[str, Estimate]], *, title: str) -> Table:
    table = Table(
        "variant",
        "value USD",
        "80% interval USD",
        "in sale currency",
        "sales",
        "dates",
        "confidence",
        "basis",
        title=title,
    )
    for label, est in rows:
        basis = est.basis if est.derived_from is None else f"derived from {est.derived_from}"
        table.add_row(
            label,
            f"{est.value_usd:,.2f}",
            f"{est.low_usd:,.2f} – {est.high_usd:,.2f}",
            f"{est.value:,} {est.currency}",
            str(est.n_sales),
            f"{est.first_sale} – {est.last_sale}",
            est.confidence,
            basis,
        )
    return table


def _series_table(index_id: str, points: Sequence[StoredIndexPoint]) -> Table:
    table = Table("week", "level", "80% band", "pairs", "method", title=f"Index {index_id}")
    for p in points:
        table.add_row(
            p.week.isoformat(),
            f"{p.level:.2f}",
            f"{p.low:.2f} – {p.high:.2f}",
            str(p.pairs),
            p.method,
        )
    return table


@app.command("show")
def show_cmd(
    ctx: typer.Context,
    index_id: Annotated[
        str | None, typer.Argument(metavar="[INDEX]", help="category:<name> or set:<id>.")
    ] = None,
    variant: Annotated[str | None, typer.Option(help="A variant id: its estimate.")] = None,
    asset: Annotated[str | None, typer.Option(help="An asset id: its grade ladder.")] = None,
    basket: Annotated[
        str | None,
        typer.Option(help="Comma-separated asset ids: their repeat-sales index, not stored."),
    ] = None,
) -> None:
    """The published indices, one index week by week, a variant's estimate or a grade ladder."""
    engine = migrated_database(settings_of(ctx))
    if basket is not None:
        _show_basket(engine, [a.strip() for a in basket.split(",") if a.strip()])
        return
    with engine.connect() as conn:
        if variant is not None:
            est = stored_estimate(conn, variant)
            if est is None:
                errors.print(f"no estimate for variant {variant}; run `rareindex index build`")
                raise typer.Exit(1)
            console.print(estimate_table([(variant, est)], title="Estimate"))
            return
        if asset is not None:
            ladder = asset_estimates(conn, asset)
            if not ladder:
                errors.print(f"no estimate for asset {asset}; run `rareindex index build`")
                raise typer.Exit(1)
            console.print(estimate_table(ladder, title=f"Grade ladder of {asset}"))
            return
        if index_id is None:
            found = index_ids(conn)
            if not found:
                errors.print("no index published yet; run `rareindex index build`")
                raise typer.Exit(1)
            table = Table("index", "weeks", "from", "to", "chart", title="Indices")
            for name, weeks, first, last in found:
                table.add_row(
                    name, str(weeks), str(first), str(last), index_chart(index_series(conn, name))
                )
            console.print(table)
            return
        points = index_series(conn, index_id)
    if not points:
        errors.print(f"no index {index_id!r}; `rareindex index show` lists them")
        raise typer.Exit(1)
    console.print(_series_table(index_id, points))
    console.print(
        f"{index_id}  {index_chart(points)}  (low {min(p.level for p in points):.1f}, "
        f"high {max(p.level for p in points):.1f})"
    )


def _show_basket(engine: Engine, asset_ids: list[str]) -> None:
    with engine.connect() as conn:
        kept, _ = priced_sales(sale_records(conn, asset_ids=asset_ids))
    points = [StoredIndexPoint.of(p) for p in basket_index(kept, asset_ids)]
    if not points:
        errors.print(f"no pairs of sales among the {len(asset_ids)} assets of the basket")
        raise typer.Exit(1)
    name = f"basket of {len(asset_ids)} assets"
    console.print(_series_table(name, points))
    console.print(f"{name}  {index_chart(points)}")


def print_price_index(engine: Engine, out: Console = console, *, top: int = 5) -> None:
    """Build the index and print a few estimates and each category index (the demo's end)."""
    summary = rebuild(engine)
    out.print(_summary_line(summary))
    with engine.connect() as conn:
        rows = most_sold_estimates(conn, top=top)
        series = [(name, index_series(conn, name)) for name, *_ in index_ids(conn)]
    if rows:
        out.print(estimate_table(rows, title=f"Estimates of the {len(rows)} most-sold variants"))
    for name, points in series:
        if name.startswith("category:") and points:
            last = points[-1]
            out.print(
                f"{name}: {index_chart(points)} {last.level:.1f} in the week of {last.week} "
                f"({last.pairs} pairs, {last.method})"
            )
