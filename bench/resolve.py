"""Entity resolution at scale: the RareIndex Resolver against plain rapidfuzz, on a 50,000-item
catalog full of near-miss siblings — every number measured in this run.

    python -m bench.resolve [--quick] [--size 50000] [--titles 5000] [--baseline-sample 300]
                            [--cutoff 90] [--seed 7] [--no-hint] [--by-noise] [--misses 0]
                            [--repeat 3] [--json PATH]
    python -m bench.resolve --sizes 5000,20000,50000    # how the cost grows with the catalog
    python -m bench.resolve --real [PATH] [--quick] [--titles 3000] [--seed 7]
                            [--baseline-sample 1000] [--misses N] [--json PATH]

``--real`` is the real-catalog mode (:mod:`bench.resolve_real`): the 20,106 cards of the Pokémon
TCG data at PATH (default ``../shared/data/pokemon-tcg-data`` beside the repository; absent, the
mode prints why it skipped and exits 0), read with ``rareindex.catalog``'s ``read_pokemon_tcg``,
and 3,000 titles from :mod:`bench.real_titles`, written with real marketplace habits (number
forms ``4/102``, ``008/064``, ``#4``, ``TG12/TG30``; set names, codes and series; years right,
absent or wrong; editions, rarities, grades, certs, conditions, typos, capitals, punctuation,
hype and emoji; lots, proxies, sealed product and ambiguous titles that name no single card),
each labelled with the card it names and the habits it uses. The resolver runs on every title,
rapidfuzz ``extractOne`` (``token_set_ratio``, ``default_process``, cutoff 80) on a fixed
1,000-title sample (about 11-30 ms a title over 20,106 cards), the resolver scored on that sample
too; it prints precision, recall and titles/s overall and per habit for both, the targets
(precision >= 0.99, recall >= 0.95 and >= the baseline's + 0.10, >= 1,000 titles/s and >= 10x the
baseline) with met/MISSED, and with ``--misses N`` up to N wrong or missed titles per habit.
About 40 s on 2 vCPUs. The rest of this docstring is the default mode, on the fake web's catalog:

1. ``scale_catalog(seed, size)`` (the fake web's catalog, its siblings — Prizm ↔ Mosaic, Base Set
   ↔ Base Set 2, Ken Griffey ↔ Ken Griffey Jr., other parallels, numbers, years, mint marks —
   then bulk fill) and ``noisy_titles(seed, titles)``: every fake-marketplace listing, noisy
   catalog titles, and 10% titles of items the catalog does not hold (``expected=None``).
2. ``Resolver.from_catalog`` (index build seconds), then every title resolved (titles/s), with
   the title's category as the hint unless ``--no-hint``.
   precision = correct matches / matches made; recall = correct matches / titles whose item is in
   the catalog.
3. Baseline: rapidfuzz ``process.extractOne(title, catalog_titles, scorer=fuzz.token_set_ratio,
   processor=utils.default_process, score_cutoff=cutoff)`` over all catalog titles on a fixed
   random sample of titles (it costs tens of ms a title); a score ≥ ``--cutoff`` is a match. A
   reference row pre-processes the catalog titles once (a stronger baseline than the one the
   target is set against), and the Resolver is scored on the same sample, like for like.

Baseline, reference and resolver alternate within each of ``--repeat`` repetitions (the index is
built once); each row shows its median. ``--sizes`` prints one row per catalog size instead: index
build seconds and MB, resolver and baseline titles/s, their ratio, precision and recall.

Targets: Resolver ≥ 50x the baseline's titles/s, precision ≥ 0.98, recall ≥ 0.90, set for the
default 50,000 items (the baseline's cost grows with the catalog, so ``--quick``'s 10,000 items
shrink the ratio). On 2 vCPUs the default run takes about 90 s, most of it the baseline;
``--quick`` (10,000 items, 1,000 titles, 100 baseline titles) about 15 s. If
``rareindex.resolution`` does not import, the baseline rows still print and the exit code is 1.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.common import console as make_console
from bench.common import machine, machine_facts, median, package_version

TARGET_SPEEDUP = 50.0
TARGET_PRECISION = 0.98
TARGET_RECALL = 0.90
REAL_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pokemon-tcg-data"
"""The real-catalog mode's default data: ``../shared/data/pokemon-tcg-data`` beside the repo."""


@dataclass
class Row:
    """One matcher on one set of titles."""

    name: str
    titles: int
    wall: float
    matched: int
    correct: int
    expected: int
    """Titles whose item is in the catalog (the recall denominator)."""
    false_on_held_out: int
    """Matches made for titles whose item is not in the catalog."""

    @property
    def titles_s(self) -> float:
        return self.titles / self.wall if self.wall else math.inf

    @property
    def precision(self) -> float | None:
        return self.correct / self.matched if self.matched else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.expected if self.expected else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "titles_s": self.titles_s,
            "precision": self.precision,
            "recall": self.recall,
        }


def score(name: str, titles: Sequence[Any], answers: Sequence[str | None], wall: float) -> Row:
    matched = sum(a is not None for a in answers)
    correct = sum(a is not None and a == t.expected for t, a in zip(titles, answers, strict=True))
    false = sum(a is not None and t.expected is None for t, a in zip(titles, answers, strict=True))
    expected = sum(t.expected is not None for t in titles)
    return Row(name, len(titles), wall, matched, correct, expected, false)


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    began = time.perf_counter()
    out = run()
    return out, time.perf_counter() - began


def rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return math.nan


def baseline(
    catalog: Sequence[Any], sample: Sequence[Any], cutoff: float, *, preprocessed: bool
) -> tuple[list[str | None], float]:
    """rapidfuzz's best ``token_set_ratio`` over every catalog title, kept at ``cutoff`` or more."""
    from rapidfuzz import fuzz, process, utils

    ids = [r.external_id for r in catalog]
    choices = [r.title for r in catalog]

    def run() -> list[str | None]:
        answers: list[str | None] = []
        if preprocessed:  # what a careful user would do: normalise the 50k choices once
            ready = [utils.default_process(c) for c in choices]
            for t in sample:
                best = process.extractOne(
                    utils.default_process(t.title),
                    ready,
                    scorer=fuzz.token_set_ratio,
                    processor=None,
                    score_cutoff=cutoff,
                )
                answers.append(ids[best[2]] if best else None)
            return answers
        for t in sample:
            best = process.extractOne(
                t.title,
                choices,
                scorer=fuzz.token_set_ratio,
                processor=utils.default_process,
                score_cutoff=cutoff,
            )
            answers.append(ids[best[2]] if best else None)
        return answers

    return timed(run)


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None or math.isnan(value) else format(value, spec)


def _verdict(ok: bool) -> str:
    return "[green]met[/]" if ok else "[red]MISSED[/]"


def by_noise(titles: Sequence[Any], answers: Sequence[str | None], market: int) -> list[Row]:
    """The resolver's rows per title origin and per noise kind (a title counts in each kind)."""
    groups: dict[str, list[int]] = {"market listings": list(range(min(market, len(titles))))}
    groups["held out (not in catalog)"] = [i for i, t in enumerate(titles) if t.expected is None]
    groups["clean (no noise)"] = [i for i, t in enumerate(titles) if not t.noise]
    for kind in sorted({k for t in titles for k in t.noise}):
        groups[kind] = [i for i, t in enumerate(titles) if kind in t.noise]
    return [
        score(name, [titles[i] for i in idx], [answers[i] for i in idx], 0.0)
        for name, idx in groups.items()
    ]


@dataclass
class Measured:
    rows: list[Row]
    """baseline, reference, then (when the resolver imports) same sample and all titles"""
    decisions: list[Any]
    build_s: float
    rss_index: float
    missing: str | None


def measure(
    catalog: Sequence[Any],
    titles: Sequence[Any],
    sample: Sequence[Any],
    cutoff: float,
    *,
    hint: bool,
    repeat: int,
) -> Measured:
    """Baseline, reference and resolver, alternating, ``repeat`` times; each row at its median
    wall time (the answers do not change between repetitions)."""
    walls: dict[str, list[float]] = {"base": [], "ready": [], "same": [], "all": []}
    answers: dict[str, list[Any]] = {}
    build_s, rss_index, missing = math.nan, math.nan, None
    resolver: Any = None
    try:
        from rareindex.resolution import Resolver
    except ImportError as exc:  # the resolver lands separately; the baseline still runs
        missing = f"{type(exc).__name__}: {exc}"
    else:
        rss_before = rss_mb()
        resolver, build_s = timed(lambda: Resolver.from_catalog(catalog))
        rss_index = rss_mb() - rss_before

    def resolve_all(chosen: Sequence[Any]) -> list[Any]:
        return [resolver.resolve(t.title, category=t.category if hint else None) for t in chosen]

    if resolver is not None:
        resolve_all(titles[:50])  # warm caches the way a long-running worker has them
    for _ in range(repeat):
        answers["base"], wall = baseline(catalog, sample, cutoff, preprocessed=False)
        walls["base"].append(wall)
        answers["ready"], wall = baseline(catalog, sample, cutoff, preprocessed=True)
        walls["ready"].append(wall)
        if resolver is None:
            continue
        answers["same"], wall = timed(lambda: resolve_all(sample))
        walls["same"].append(wall)
        answers["all"], wall = timed(lambda: resolve_all(titles))
        walls["all"].append(wall)
    rows = [
        score(
            f"rapidfuzz extractOne, token_set_ratio ≥ {cutoff:g} (baseline)",
            sample,
            answers["base"],
            median(walls["base"]),
        ),
        score(
            "  same, choices pre-processed once (reference)",
            sample,
            answers["ready"],
            median(walls["ready"]),
        ),
    ]
    decisions: list[Any] = []
    if resolver is not None:
        rows.append(
            score(
                "RareIndex Resolver, same sample",
                sample,
                [d.catalog_id for d in answers["same"]],
                median(walls["same"]),
            )
        )
        decisions = answers["all"]
        rows.append(
            score(
                f"RareIndex Resolver, all {len(titles):,} titles",
                titles,
                [d.catalog_id for d in decisions],
                median(walls["all"]),
            )
        )
    return Measured(rows, decisions, build_s, rss_index, missing)


def scaling(args: argparse.Namespace, sizes: Sequence[int], count: int, sample_size: int) -> None:
    """One row per catalog size: index build, resolver and baseline titles/s, their ratio,
    precision and recall — how the cost grows with the catalog."""
    from rich.table import Table

    from bench.scale.catalog import noisy_titles, scale_catalog

    began = time.perf_counter()
    repeat = max(1, args.repeat)
    table = Table(
        title=(
            f"entity resolution by catalog size: {count:,} titles, baseline on {sample_size} of "
            f"them, seed {args.seed}, category hint {'off' if args.no_hint else 'on'}; median "
            f"of {repeat} alternating repetitions"
        ),
        caption=f"{machine()}, rapidfuzz {package_version('rapidfuzz')}",
    )
    columns = (
        "catalog items",
        "index build s",
        "index MB",
        "resolver titles/s",
        "baseline titles/s",
        "vs baseline",
        "precision",
        "recall",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for size in sizes:
        catalog = scale_catalog(args.seed, size)
        titles = noisy_titles(args.seed, count, catalog)
        rng = random.Random(f"bench-resolve/{args.seed}")
        picks = sorted(rng.sample(range(len(titles)), min(sample_size, len(titles))))
        sample = [titles[i] for i in picks]
        measured = measure(
            catalog, titles, sample, args.cutoff, hint=not args.no_hint, repeat=repeat
        )
        if measured.missing:
            raise SystemExit(f"rareindex.resolution is not importable: {measured.missing}")
        base, resolver = measured.rows[0], measured.rows[-1]
        table.add_row(
            f"{size:,}",
            f"{measured.build_s:.2f}",
            f"{measured.rss_index:.0f}",
            f"{resolver.titles_s:,.0f}",
            f"{base.titles_s:,.1f}",
            f"{resolver.titles_s / base.titles_s:,.1f}x",
            _fmt(resolver.precision, ".3f"),
            _fmt(resolver.recall, ".3f"),
        )
    out = make_console()
    out.print(table)
    out.print(
        "index MB: RSS growth while building the index (approximate); vs baseline: resolver "
        "titles/s ÷ rapidfuzz extractOne's over the whole catalog"
    )
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10,000 items, 1,000 titles")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", type=int, help="catalog items (default 50,000)")
    parser.add_argument("--titles", type=int, help="labelled titles (default 5,000; --real: 3,000)")
    parser.add_argument(
        "--baseline-sample", type=int, help="titles for rapidfuzz (default 300; --real: 1,000)"
    )
    parser.add_argument(
        "--cutoff", type=float, help="baseline match score (default 90; --real: 80)"
    )
    parser.add_argument("--no-hint", action="store_true", help="resolve without the category")
    parser.add_argument("--by-noise", action="store_true", help="a second table per noise kind")
    parser.add_argument("--misses", type=int, default=0, help="print N wrong or missed titles")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--repeat", type=int, default=3, help="timed repetitions; medians shown")
    parser.add_argument(
        "--sizes", help="catalog sizes, e.g. 5000,20000,50000: one scaling table instead"
    )
    parser.add_argument(
        "--real",
        nargs="?",
        const=REAL_DATA,
        type=Path,
        metavar="PATH",
        help="the real-catalog mode on the Pokémon TCG data at PATH (default: "
        "../shared/data/pokemon-tcg-data beside the repository)",
    )
    args = parser.parse_args(argv)
    if args.real is not None:
        from bench.resolve_real import run

        raise SystemExit(run(args))
    if args.cutoff is None:
        args.cutoff = 90.0
    size = args.size or (10_000 if args.quick else 50_000)
    count = args.titles or (1_000 if args.quick else 5_000)
    sample_size = args.baseline_sample or (100 if args.quick else 300)
    hint = not args.no_hint
    repeat = max(1, args.repeat)
    if args.sizes:
        scaling(args, [int(n) for n in args.sizes.split(",") if n.strip()], count, sample_size)
        return

    from rich.table import Table

    from bench.scale.catalog import noisy_titles, scale_catalog
    from rareindex_fakeweb.sites.market_data import market_data

    console = make_console()  # one row per matcher, even when piped
    began = time.perf_counter()
    catalog, generate_s = timed(lambda: scale_catalog(args.seed, size))
    titles, titles_s = timed(lambda: noisy_titles(args.seed, count, catalog))
    market = min(len(market_data(args.seed).listings), len(titles))
    rng = random.Random(f"bench-resolve/{args.seed}")
    picks = sorted(rng.sample(range(len(titles)), min(sample_size, len(titles))))
    sample = [titles[i] for i in picks]

    measured = measure(catalog, titles, sample, args.cutoff, hint=hint, repeat=repeat)
    rows, missing, decisions = measured.rows, measured.missing, measured.decisions
    base, build_s, rss_index = rows[0], measured.build_s, measured.rss_index
    answers = [d.catalog_id for d in decisions]

    resolver_row = rows[-1] if missing is None else None
    speedup = resolver_row.titles_s / base.titles_s if resolver_row else None
    categories = Counter(r.category for r in catalog)
    held = sum(t.expected is None for t in titles)
    table = Table(
        title=(
            f"entity resolution: {len(catalog):,}-item catalog "
            f"({', '.join(f'{n:,} {c}' for c, n in categories.most_common())}), "
            f"{len(titles):,} titles ({market} market listings, {held} not in the catalog), "
            f"seed {args.seed}, category hint {'on' if hint else 'off'}"
        ),
        caption=(
            f"{machine()}, rapidfuzz {package_version('rapidfuzz')}; catalog generated in "
            f"{generate_s:.1f} s, titles in {titles_s:.1f} s; index build "
            f"{_fmt(build_s, '.2f')} s (+{_fmt(rss_index, '.0f')} MB RSS); median of {repeat} "
            "alternating repetitions"
        ),
    )
    for column in ("matcher", "titles", "titles/s", "ms/title", "matched", "precision", "recall"):
        table.add_column(column, justify="left" if column == "matcher" else "right")
    table.add_column("vs baseline", justify="right")
    for row in rows:
        table.add_row(
            row.name,
            f"{row.titles:,}",
            f"{row.titles_s:,.1f}",
            f"{1000 / row.titles_s:.2f}",
            f"{row.matched:,}",
            _fmt(row.precision, ".3f"),
            _fmt(row.recall, ".3f"),
            f"{row.titles_s / base.titles_s:,.1f}x",
        )
    if missing:
        table.add_row("RareIndex Resolver", "-", "-", "-", "-", "-", "-", "not available")
    console.print(table)
    if missing:
        console.print(f"[red]rareindex.resolution is not importable:[/] {missing}")

    targets: dict[str, bool] = {}
    if resolver_row is not None and speedup is not None:
        precision, recall = resolver_row.precision or 0.0, resolver_row.recall or 0.0
        targets = {
            "speed": speedup >= TARGET_SPEEDUP,
            "precision": precision >= TARGET_PRECISION,
            "recall": recall >= TARGET_RECALL,
        }
        methods = Counter(d.method for d in decisions if d.catalog_id)
        reasons = Counter(d.reject_reason for d in decisions if not d.catalog_id)
        console.print(
            f"resolver methods: {dict(methods.most_common())}; "
            f"unmatched: {dict(reasons.most_common())}; "
            f"false matches on held-out titles: {resolver_row.false_on_held_out} of {held}"
        )
        console.print("targets")
        console.print(
            f"  speed vs baseline  ≥ {TARGET_SPEEDUP:.0f}x    measured {speedup:,.1f}x   "
            f"{_verdict(targets['speed'])}"
        )
        console.print(
            f"  precision          ≥ {TARGET_PRECISION:.2f}   measured {precision:.3f}   "
            f"{_verdict(targets['precision'])}"
        )
        console.print(
            f"  recall             ≥ {TARGET_RECALL:.2f}   measured {recall:.3f}   "
            f"{_verdict(targets['recall'])}"
        )
    noise_rows = by_noise(titles, answers, market) if answers else []
    if args.by_noise and noise_rows:
        breakdown = Table(title="RareIndex Resolver by title origin and noise kind")
        for column in ("group", "titles", "matched", "precision", "recall", "held-out matched"):
            breakdown.add_column(column, justify="left" if column == "group" else "right")
        for row in noise_rows:
            breakdown.add_row(
                row.name,
                f"{row.titles:,}",
                f"{row.matched:,}",
                _fmt(row.precision, ".3f"),
                _fmt(row.recall, ".3f"),
                f"{row.false_on_held_out:,}",
            )
        console.print(breakdown)
    if args.misses and decisions:
        print_misses(console, catalog, titles, decisions, args.misses)
    elapsed = time.perf_counter() - began
    console.print(f"elapsed {elapsed:.0f} s")
    if args.json:
        report = {
            "seed": args.seed,
            "catalog_items": len(catalog),
            "titles": len(titles),
            "market_titles": market,
            "held_out_titles": held,
            "category_hint": hint,
            "baseline_cutoff": args.cutoff,
            "baseline_sample": len(sample),
            "generate_s": generate_s,
            "titles_generate_s": titles_s,
            "index_build_s": None if math.isnan(build_s) else build_s,
            "index_rss_mb": None if math.isnan(rss_index) else rss_index,
            "rows": [row.as_dict() for row in rows],
            "speedup_vs_baseline": speedup,
            "targets": {
                "speedup": TARGET_SPEEDUP,
                "precision": TARGET_PRECISION,
                "recall": TARGET_RECALL,
                "met": targets,
            },
            "by_noise": [row.as_dict() for row in noise_rows],
            "resolver_error": missing,
            "machine": machine_facts("rapidfuzz"),
            "elapsed_s": elapsed,
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    if missing:
        raise SystemExit(1)


def print_misses(
    console: Any, catalog: Sequence[Any], titles: Sequence[Any], decisions: Sequence[Any], n: int
) -> None:
    """Up to ``n`` wrong matches and up to ``n`` misses, with the titles involved."""
    by_id = {r.external_id: r.title for r in catalog}
    wrong = [
        (t, d)
        for t, d in zip(titles, decisions, strict=True)
        if d.catalog_id not in (None, t.expected)
    ]
    missed = [
        (t, d) for t, d in zip(titles, decisions, strict=True) if t.expected and not d.catalog_id
    ]
    console.print(f"\nwrong matches ({len(wrong)}), first {min(n, len(wrong))}:", markup=False)
    for t, d in wrong[:n]:
        expected = by_id.get(t.expected, "(not in catalog)") if t.expected else "(not in catalog)"
        console.print(
            f"  {t.title}\n    want {expected}\n    got  {by_id[d.catalog_id]} "
            f"[{d.method} {d.confidence:.2f}]",
            markup=False,
        )
    console.print(f"\nmissed ({len(missed)}), first {min(n, len(missed))}:", markup=False)
    for t, d in missed[:n]:
        console.print(
            f"  {t.title}\n    want {by_id[t.expected]}\n    {d.reject_reason} {d.confidence:.2f}",
            markup=False,
        )


if __name__ == "__main__":
    main()
