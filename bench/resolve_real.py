"""``bench.resolve --real``: the Resolver and plain rapidfuzz on the real Pokémon TCG catalog, on
titles written with real marketplace habits (:mod:`bench.real_titles`).

    python -m bench.resolve --real [PATH] [--quick] [--titles 3000] [--seed 7]
                            [--baseline-sample N] [--misses N] [--json PATH]

1. ``read_pokemon_tcg(PATH)`` (default ``../shared/data/pokemon-tcg-data`` beside the repository:
   20,106 cards); when PATH is not such a folder the mode prints why it skipped and exits 0.
2. ``real_titles(items, titles, seed)`` (3,000 titles; ``--quick`` 1,000).
3. ``Resolver.from_catalog`` (index build seconds), 50 titles to warm up, then every title
   resolved once, each timed: titles/s overall and per habit.
4. The baseline the resolver is measured against: rapidfuzz ``process.extractOne(title,
   catalog_titles, scorer=fuzz.token_set_ratio, processor=utils.default_process,
   score_cutoff=80)``, each title timed. Over 20,106 cards it costs 11-30 ms a title on 2 vCPUs
   (35-90 s for 3,000 titles), so it runs on a fixed random sample of ``--baseline-sample``
   titles (default 1,000, drawn with ``random.Random("bench-resolve-real/<seed>")``; ``0``: all
   titles), and the resolver is also scored on that sample, like for like: the recall-gain target
   compares the two on it. The default run takes about 30-50 s.

precision = correct matches / matches (a match on a title that names no card counts against
it); recall = correct matches / titles that name a card. Targets: precision >= 0.99, recall >=
0.95, recall >= the baseline's + 0.10 (on the baseline's titles), >= 1,000 titles/s and >= 10x
the baseline's titles/s. A missed target is printed, not an error; the exit code is 1 only when
``rareindex.resolution`` does not import (the baseline still runs).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import console as make_console
from bench.common import machine, machine_facts, package_version
from bench.real_titles import HABITS, RealTitle, real_titles
from bench.resolve import Row, _fmt, _verdict, score, timed

BASELINE_CUTOFF = 80.0
TARGET_PRECISION = 0.99
TARGET_RECALL = 0.95
TARGET_RECALL_GAIN = 0.10
TARGET_TITLES_S = 1_000.0
TARGET_SPEEDUP = 10.0
WARM_UP = 50
DEFAULT_BASELINE_SAMPLE = 1_000


def resolve_each(resolver: Any, titles: Sequence[RealTitle]) -> tuple[list[Any], list[float]]:
    """Every title's decision and its seconds."""
    decisions, seconds = [], []
    clock = time.perf_counter
    for t in titles:
        began = clock()
        decisions.append(resolver.resolve(t.title))
        seconds.append(clock() - began)
    return decisions, seconds


def baseline_each(
    items: Sequence[Any], titles: Sequence[RealTitle], cutoff: float
) -> tuple[list[str | None], list[float]]:
    """rapidfuzz's best ``token_set_ratio`` over every catalog title, kept at ``cutoff`` or more:
    every title's answer and its seconds."""
    from rapidfuzz import fuzz, process, utils

    ids = [i.external_id for i in items]
    choices = [i.title for i in items]
    answers: list[str | None] = []
    seconds: list[float] = []
    clock = time.perf_counter
    for t in titles:
        began = clock()
        best = process.extractOne(
            t.title,
            choices,
            scorer=fuzz.token_set_ratio,
            processor=utils.default_process,
            score_cutoff=cutoff,
        )
        seconds.append(clock() - began)
        answers.append(ids[best[2]] if best else None)
    return answers, seconds


def by_habit(
    titles: Sequence[RealTitle], answers: Sequence[str | None], seconds: Sequence[float]
) -> dict[str, Row]:
    """One row per habit (a title counts in each of its habits), wall = the titles' own seconds."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(titles):
        for habit in t.habits:
            groups[habit].append(i)
    return {
        habit: score(
            habit,
            [titles[i] for i in groups[habit]],
            [answers[i] for i in groups[habit]],
            sum(seconds[i] for i in groups[habit]),
        )
        for habit in HABITS
        if habit in groups
    }


def run(args: argparse.Namespace) -> int:
    """The real-catalog mode; the process exit code."""
    from rich.table import Table

    console = make_console()
    path: Path = args.real
    from rareindex.catalog.pokemon_tcg import is_pokemon_tcg, read_pokemon_tcg

    if not is_pokemon_tcg(path):
        console.print(
            f"skipped: no Pokémon TCG data at {path} (a folder with sets/<lang>.json and "
            "cards/<lang>/); pass its path: python -m bench.resolve --real PATH",
            markup=False,
        )
        return 0
    began = time.perf_counter()
    count = args.titles or (1_000 if args.quick else 3_000)
    cutoff = BASELINE_CUTOFF if args.cutoff is None else args.cutoff
    items, load_s = timed(lambda: list(read_pokemon_tcg(path)))
    titles, generate_s = timed(lambda: real_titles(items, count, args.seed))
    by_id = {i.external_id: i for i in items}

    sample_idx = list(range(len(titles)))
    wanted = DEFAULT_BASELINE_SAMPLE if args.baseline_sample is None else args.baseline_sample
    if 0 < wanted < len(titles):
        rng = random.Random(f"bench-resolve-real/{args.seed}")
        sample_idx = sorted(rng.sample(sample_idx, wanted))
    sample = [titles[i] for i in sample_idx]
    sampled = len(sample) < len(titles)

    missing, build_s = None, math.nan
    decisions: list[Any] = []
    seconds: list[float] = []
    try:
        from rareindex.resolution import Resolver
    except ImportError as exc:
        missing = f"{type(exc).__name__}: {exc}"
    else:
        resolver, build_s = timed(lambda: Resolver.from_catalog(items))
        resolve_each(resolver, titles[:WARM_UP])
        decisions, seconds = resolve_each(resolver, titles)
    base_answers, base_seconds = baseline_each(items, sample, cutoff)
    answers = [d.catalog_id for d in decisions]

    base = score(
        f"rapidfuzz extractOne, token_set_ratio ≥ {cutoff:g} (baseline"
        + (f", {len(sample):,}-title sample)" if sampled else ")"),
        sample,
        base_answers,
        sum(base_seconds),
    )
    rows = [base]
    resolver_row = same_row = None
    if not missing:
        if sampled:
            same_row = score(
                "RareIndex Resolver, the baseline's sample",
                sample,
                [answers[i] for i in sample_idx],
                sum(seconds[i] for i in sample_idx),
            )
            rows.append(same_row)
        resolver_row = score(
            f"RareIndex Resolver, all {len(titles):,} titles", titles, answers, sum(seconds)
        )
        same_row = same_row or resolver_row
        rows.append(resolver_row)

    named = sum(t.expected is not None for t in titles)
    table = Table(
        title=(
            f"entity resolution on the real Pokémon TCG catalog: {len(items):,} cards, "
            f"{len(titles):,} titles with real marketplace habits ({named:,} name one card, "
            f"{len(titles) - named:,} none), seed {args.seed}"
        ),
        caption=(
            f"{machine()}, rapidfuzz {package_version('rapidfuzz')}; "
            f"catalog read in {load_s:.1f} s, "
            f"titles generated in {generate_s:.1f} s; index build {_fmt(build_s, '.2f')} s; "
            "one timed pass each"
            + (
                f"; baseline on a fixed sample of {len(sample):,} titles (--baseline-sample)"
                if sampled
                else ""
            )
        ),
    )
    columns = ("matcher", "titles", "titles/s", "ms/title", "matched", "precision", "recall")
    for column in (*columns, "matched, names none", "vs baseline"):
        table.add_column(column, justify="left" if column == "matcher" else "right")
    for row in rows:
        table.add_row(
            row.name,
            f"{row.titles:,}",
            f"{row.titles_s:,.1f}",
            f"{1000 / row.titles_s:.3f}",
            f"{row.matched:,}",
            _fmt(row.precision, ".3f"),
            _fmt(row.recall, ".3f"),
            f"{row.false_on_held_out:,}",
            f"{row.titles_s / base.titles_s:,.1f}x",
        )
    if missing:
        table.add_row("RareIndex Resolver", *["-"] * 7, "not available")
    console.print(table)
    if missing:
        console.print(f"[red]rareindex.resolution is not importable:[/] {missing}")

    habit_rows = by_habit(titles, answers, seconds) if not missing else {}
    base_habits = by_habit(sample, base_answers, base_seconds)
    habits = Table(
        title="per habit (a title counts in each habit it uses)"
        + (f"; baseline on its sample of {len(sample):,}" if sampled else "")
    )
    for column in ("habit", "titles", "name a card"):
        habits.add_column(column, justify="left" if column == "habit" else "right")
    for column in ("matched", "precision", "recall", "titles/s"):
        habits.add_column(f"resolver {column}", justify="right")
    for column in (*(("titles",) if sampled else ()), "precision", "recall", "titles/s"):
        habits.add_column(f"baseline {column}", justify="right")
    for habit in HABITS:
        b = base_habits.get(habit)
        r = habit_rows.get(habit)
        if b is None and r is None:
            continue
        anchor = r or b
        assert anchor is not None
        cells = [habit, f"{anchor.titles:,}", f"{anchor.expected:,}"]
        if r is not None:
            cells += [
                f"{r.matched:,}",
                _fmt(r.precision, ".3f"),
                _fmt(r.recall, ".3f"),
                f"{r.titles_s:,.0f}",
            ]
        else:
            cells += ["-"] * 4
        if b is not None:
            cells += [f"{b.titles:,}"] if sampled else []
            cells += [_fmt(b.precision, ".3f"), _fmt(b.recall, ".3f"), f"{b.titles_s:,.1f}"]
        else:
            cells += ["-"] * (4 if sampled else 3)
        habits.add_row(*cells)
    console.print(habits)

    targets: dict[str, bool] = {}
    measured: dict[str, float] = {}
    if resolver_row is not None and same_row is not None:
        reasons = Counter(d.reject_reason for d in decisions if not d.catalog_id)
        methods = Counter(d.method for d in decisions if d.catalog_id)
        console.print(
            f"resolver methods: {dict(methods.most_common())}; "
            f"unmatched: {dict(reasons.most_common())}",
            markup=False,
        )
        measured = {
            "precision": resolver_row.precision or 0.0,
            "recall": resolver_row.recall or 0.0,
            "recall_gain": (same_row.recall or 0.0) - (base.recall or 0.0),
            "titles_s": resolver_row.titles_s,
            "speedup": resolver_row.titles_s / base.titles_s,
        }
        goals = {
            "precision": (TARGET_PRECISION, f"≥ {TARGET_PRECISION:.2f}", ".3f", ""),
            "recall": (TARGET_RECALL, f"≥ {TARGET_RECALL:.2f}", ".3f", ""),
            "recall_gain": (
                TARGET_RECALL_GAIN,
                f"≥ baseline + {TARGET_RECALL_GAIN:.2f}",
                "+.3f",
                f" (resolver {_fmt(same_row.recall, '.3f')}, baseline {_fmt(base.recall, '.3f')})",
            ),
            "titles_s": (TARGET_TITLES_S, f"≥ {TARGET_TITLES_S:,.0f}", ",.0f", ""),
            "speedup": (TARGET_SPEEDUP, f"≥ {TARGET_SPEEDUP:.0f}x baseline", ",.1f", "x"),
        }
        console.print("targets")
        for key, (goal, text, spec, note) in goals.items():
            targets[key] = measured[key] >= goal
            label = key.replace("_s", "/s").replace("_", " ")
            console.print(
                f"  {label:<12} {text:<20} measured {format(measured[key], spec)}{note}   "
                f"{_verdict(targets[key])}"
            )

    misses: dict[str, list[dict[str, Any]]] = {}
    if args.misses and decisions:
        misses = print_misses(console, titles, decisions, by_id, args.misses)
    elapsed = time.perf_counter() - began
    console.print(f"elapsed {elapsed:.0f} s")
    if args.json:
        report = {
            "mode": "real",
            "data": str(path),
            "seed": args.seed,
            "catalog_items": len(items),
            "titles": len(titles),
            "titles_naming_a_card": named,
            "baseline_cutoff": cutoff,
            "baseline_titles": len(sample),
            "baseline_sampled": sampled,
            "load_s": load_s,
            "titles_generate_s": generate_s,
            "index_build_s": None if math.isnan(build_s) else build_s,
            "rows": [row.as_dict() for row in rows],
            "by_habit": {
                habit: {
                    "resolver": habit_rows[habit].as_dict() if habit in habit_rows else None,
                    "baseline": base_habits[habit].as_dict() if habit in base_habits else None,
                }
                for habit in HABITS
                if habit in habit_rows or habit in base_habits
            },
            "targets": {
                "precision": TARGET_PRECISION,
                "recall": TARGET_RECALL,
                "recall_gain_vs_baseline": TARGET_RECALL_GAIN,
                "titles_s": TARGET_TITLES_S,
                "speedup_vs_baseline": TARGET_SPEEDUP,
                "measured": measured,
                "met": targets,
            },
            "misses": misses,
            "resolver_error": missing,
            "machine": machine_facts("rapidfuzz"),
            "elapsed_s": elapsed,
        }
        args.json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 1 if missing else 0


def print_misses(
    console: Any,
    titles: Sequence[RealTitle],
    decisions: Sequence[Any],
    by_id: dict[str, Any],
    n: int,
) -> dict[str, list[dict[str, Any]]]:
    """Per habit, up to ``n`` titles the resolver got wrong (a wrong card, a card for a title that
    names none, or none for one that names a card); also returned for the JSON report."""

    def label(card_id: str | None) -> str:
        return f"{card_id} ({by_id[card_id].title})" if card_id in by_id else "None"

    wrong: dict[str, list[dict[str, Any]]] = defaultdict(list)
    totals: Counter[str] = Counter()
    for t, d in zip(titles, decisions, strict=True):
        if d.catalog_id == t.expected:
            continue
        for habit in t.habits:
            totals[habit] += 1
            if len(wrong[habit]) < n:
                wrong[habit].append(
                    {
                        "title": t.title,
                        "expected": t.expected,
                        "got": d.catalog_id,
                        "reject_reason": d.reject_reason,
                        "habits": list(t.habits),
                    }
                )
    console.print(f"\nwrong or missed, up to {n} per habit:", markup=False)
    for habit in HABITS:
        if not wrong.get(habit):
            continue
        console.print(f"  {habit} ({totals[habit]:,} wrong or missed)", markup=False)
        for m in wrong[habit]:
            console.print(
                f"    {m['title']}\n      want {label(m['expected'])}; got {label(m['got'])}"
                f"{'; ' + m['reject_reason'] if m['reject_reason'] else ''}",
                markup=False,
            )
    return dict(wrong)
