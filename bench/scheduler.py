"""The scheduler's tick with 100, 1,000 and 10,000 connectors on SQLite and PostgreSQL, against the
least any tick must read — every number measured in this run.

    python -m bench.scheduler [--quick] [--sizes 100,1000,10000] [--repeat 5] [--history 6]

For each size a fresh database gets a synthetic fleet (not timed): ``connectors`` rows with a
refresh-class mix (10% HOT, 20% ACTIVE, 50% NORMAL, 20% ARCHIVE) and ``--history`` past
incremental runs each, the last one started a uniform fraction of its refresh interval (plus up to
a minute) ago — so a tick finds what came due in the last minute, as a per-minute scheduler does
(about 1% of the fleet). Mixed in: 1% paused, 0.5% disabled, 1% with a running run, 1% with a
queued one, 2% with a running backfill campaign (a tenth of them backing off after a failed
slice; the others want their next slice, so they count as due), 3% whose ``requires`` are
unset, 0.5% not in the registry.

Then, alternating, ``--repeat`` times (medians shown):

* baseline: one plain ``SELECT`` of every connector with its last run's start (``GROUP BY``), all
  rows fetched — what any tick must at least read;
* ``Scheduler.decide(now)``: what is due (reads only);
* ``Scheduler.tick(now)``: renew the lease, decide, and in one fenced transaction enqueue every
  due run and sweep lost ones; the runs it enqueued are deleted afterwards (not timed), so every
  repetition sees the same fleet. Logs are rendered at info into /dev/null.

"x baseline" is tick ÷ baseline time: how many times the minimum read a tick costs (lower is
better). ``--quick``: 100, 1,000 and 5,000 connectors, 3 repetitions (about 40 s on 2 vCPUs);
the default (10,000) about 2 minutes. ``--backfill-share 0`` leaves the campaigns out.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import (
    StatementCounter,
    console,
    machine,
    median,
    quiet_logs,
    scratch_postgres,
    spread,
)

MIX = (("HOT", 0.10), ("ACTIVE", 0.20), ("NORMAL", 0.50), ("ARCHIVE", 0.20))
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
HISTORY = 6  # past incremental runs per connector
BASELINE_SQL = """
SELECT c.id, c.status, c.refresh_class, r.last_started_at
FROM connectors AS c
LEFT JOIN (
    SELECT connector_id, max(started_at) AS last_started_at
    FROM connector_runs
    GROUP BY connector_id
) AS r ON r.connector_id = c.id
ORDER BY c.id
"""


@dataclass(slots=True)
class Declared:
    """What the scheduler reads of a connector: its meta."""

    meta: Any


@dataclass(slots=True)
class Result:
    backend: str
    connectors: int
    runs: int
    campaigns: int
    build_s: float
    due: list[int] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    decide: list[float] = field(default_factory=list)
    tick: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)


# --- the fleet ------------------------------------------------------------------------------------


def _rows_for(
    n: int, seed: int, history: int, backfill_share: float
) -> tuple[list[Any], dict[str, list[dict[str, Any]]]]:
    """The registry (metas) and the rows of ``sources``, ``connectors``, ``connector_backfills``
    and ``connector_runs`` for a fleet of ``n`` connectors."""
    from rareindex.storage import new_id
    from rareindex_connectors import ConnectorMeta, refresh_interval

    rng = random.Random(f"bench-scheduler/{seed}/{n}")
    classes, weights = zip(*MIX, strict=True)
    registry: list[Declared] = []
    rows: dict[str, list[dict[str, Any]]] = {
        "sources": [],
        "connectors": [],
        "connector_backfills": [],
        "connector_runs": [],
    }
    sources = max(1, n // 10)
    rows["sources"] = [{"id": f"source-{s:05d}", "name": f"Source {s}"} for s in range(sources)]
    for i in range(n):
        cid = f"bench-{i:05d}"
        refresh = rng.choices(classes, weights)[0]
        roll, unset, unregistered = rng.random(), rng.random(), rng.random()
        meta = ConnectorMeta(
            id=cid,
            source=f"Source {i % sources}",
            engines=("api",),
            categories=("tcg_card",),
            capabilities=("listing",),
            refresh_class=refresh,
            requires=("RI_BENCH_UNSET_TOKEN",) if unset < 0.03 else (),
        )
        if unregistered >= 0.005:  # 0.5% not in the registry
            registry.append(Declared(meta))
        status = "paused" if roll < 0.01 else "disabled" if roll < 0.015 else "active"
        rows["connectors"].append(
            {
                "id": cid,
                "source_id": f"source-{i % sources:05d}",
                "version": "1",
                "parser_version": "1",
                "refresh_class": refresh,
                "meta": meta.model_dump(mode="json"),
                "status": status,
            }
        )
        interval = refresh_interval(refresh)
        last = NOW - interval * rng.random() - timedelta(seconds=rng.uniform(0, 60))
        runs = rows["connector_runs"]
        for k in range(history, 0, -1):
            started = last - interval * (k - 1)
            runs.append(_run(new_id("run"), cid, "incremental", "succeeded", started))
        if 0.015 <= roll < 0.025:  # running now, lease live
            run = _run(new_id("run"), cid, "incremental", "running", NOW - timedelta(minutes=2))
            run.update(finished_at=None, outcome=None, lease_expires_at=NOW + timedelta(minutes=5))
            runs.append(run)
        elif 0.025 <= roll < 0.035:  # queued a minute ago, not picked up yet
            run = _run(new_id("run"), cid, "incremental", "queued", None)
            run.update(finished_at=None, outcome=None, queued_at=NOW - timedelta(minutes=1))
            runs.append(run)
        elif 0.035 <= roll < 0.035 + backfill_share:  # a running campaign, three past slices
            backfill_id = new_id("bkf")
            rows["connector_backfills"].append(
                {
                    "id": backfill_id,
                    "connector_id": cid,
                    "status": "running",
                    "created_at": NOW - timedelta(days=2),
                }
            )
            for s in range(3, 0, -1):
                started = NOW - timedelta(minutes=10 * s)
                run = _run(new_id("run"), cid, "backfill", "succeeded", started)
                run["backfill_id"] = backfill_id
                if s == 1 and rng.random() < 0.1:  # the last slice failed: backing off
                    run.update(status="failed", outcome="failed", failure_reason="transient")
                runs.append(run)
    return registry, rows


def _run(run_id: str, cid: str, mode: str, status: str, started: datetime | None) -> dict[str, Any]:
    created = started or NOW - timedelta(minutes=1)
    return {
        "id": run_id,
        "connector_id": cid,
        "mode": mode,
        "backfill_id": None,
        "status": status,
        "outcome": "complete" if status == "succeeded" else None,
        "failure_reason": None,
        "lease_token": 1 if started else 0,
        "lease_expires_at": None,
        "queued_at": created,
        "started_at": started,
        "finished_at": started + timedelta(seconds=30) if started else None,
        "pages": 10,
        "records": 250,
        "created_at": created,
    }


def build_fleet(
    db_url: str, n: int, seed: int, history: int, backfill_share: float
) -> tuple[Any, list[Any], dict[str, int]]:
    """Migrate ``db_url`` and fill it with a fleet of ``n``; the engine, the registry and the
    row count of each table."""
    from sqlalchemy import text

    from rareindex.storage import make_engine, upgrade
    from rareindex.storage.schema import connector_backfills, connector_runs, connectors, sources

    engine = make_engine(db_url)
    upgrade(engine)
    registry, rows = _rows_for(n, seed, history, backfill_share)
    tables = {
        "sources": sources,
        "connectors": connectors,
        "connector_backfills": connector_backfills,
        "connector_runs": connector_runs,
    }
    with engine.begin() as conn:
        for name, table in tables.items():
            for start in range(0, len(rows[name]), 5_000):
                # one shape per table: every dict of a table has the same keys
                conn.execute(table.insert(), rows[name][start : start + 5_000])
    with engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    return engine, registry, {name: len(values) for name, values in rows.items()}


# --- the measured calls ---------------------------------------------------------------------------


def baseline_read(engine: Any) -> tuple[float, int]:
    from sqlalchemy import text

    began = time.perf_counter()
    with engine.connect() as conn:
        rows = conn.execute(text(BASELINE_SQL)).all()
    return time.perf_counter() - began, len(rows)


def delete_runs(engine: Any, run_ids: list[str]) -> None:
    from sqlalchemy import delete

    from rareindex.storage.schema import connector_runs

    if run_ids:
        with engine.begin() as conn:
            conn.execute(delete(connector_runs).where(connector_runs.c.id.in_(run_ids)))


def measure(
    backend: str, db_url: str, n: int, repeat: int, seed: int, history: int, backfills: float
) -> Result:
    from rareindex.scheduler import Scheduler

    began = time.perf_counter()
    engine, registry, counts = build_fleet(db_url, n, seed, history, backfills)
    result = Result(
        backend,
        n,
        counts["connector_runs"],
        counts["connector_backfills"],
        time.perf_counter() - began,
    )
    sent: list[str] = []
    counter = StatementCounter(engine)
    scheduler = Scheduler(engine, registry, holder_id="bench-scheduler", env={}, send=sent.append)
    warm = scheduler.tick(NOW)  # takes the lease, resends nothing: the steady state
    if not warm.leader:
        raise SystemExit(f"{backend} {n}: the scheduler did not lead")
    delete_runs(engine, warm.enqueued)
    for _ in range(repeat):
        wall, count = baseline_read(engine)
        if count != n:
            raise SystemExit(f"{backend} {n}: the baseline read {count} connectors")
        result.baseline.append(wall)
        t0 = time.perf_counter()
        plan = scheduler.decide(NOW)
        result.decide.append(time.perf_counter() - t0)
        before = counter.count
        t0 = time.perf_counter()
        tick = scheduler.tick(NOW)
        result.tick.append(time.perf_counter() - t0)
        result.statements.append(counter.count - before)
        if not tick.leader or len(tick.enqueued) != len(plan.due):
            raise SystemExit(
                f"{backend} {n}: tick enqueued {len(tick.enqueued)} of {len(plan.due)} due"
            )
        result.due.append(len(tick.enqueued))
        result.skipped.append(len(tick.skipped))
        delete_runs(engine, tick.enqueued)
    scheduler.release()
    engine.dispose()
    return result


# --- main -----------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100, 1,000, 5,000; 3 repetitions")
    parser.add_argument("--sizes", help="connector counts (default 100,1000,10000)")
    parser.add_argument("--repeat", type=int, help="repetitions per size (default 5)")
    parser.add_argument("--history", type=int, default=HISTORY, help="past runs per connector")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--backfill-share",
        type=float,
        default=0.02,
        help="share of connectors with a running backfill campaign (default 0.02)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    args = parser.parse_args()
    history = max(1, args.history)
    quiet_logs()
    from rich.table import Table

    began = time.perf_counter()
    sizes_arg = args.sizes or ("100,1000,5000" if args.quick else "100,1000,10000")
    sizes = [int(s) for s in sizes_arg.split(",") if s.strip()]
    share = min(max(args.backfill_share, 0.0), 0.5)
    repeat = max(1, args.repeat or (3 if args.quick else 5))
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="ri-bench-scheduler-") as tmp, scratch_postgres() as pg:
        for n in sizes:  # both backends per size, one after the other
            results.append(
                measure(
                    "SQLite",
                    f"sqlite:///{Path(tmp) / f'fleet{n}.db'}",
                    n,
                    repeat,
                    args.seed,
                    history,
                    share,
                )
            )
            if not args.no_postgres:
                url = pg.create(f"fleet{n}")
                results.append(measure("PostgreSQL", url, n, repeat, args.seed, history, share))
                pg.drop(f"fleet{n}")
    table = Table(
        title=(
            f"scheduler tick vs the minimum read (all connectors + last run), {history} past runs "
            f"per connector; median of {repeat} alternating repetitions"
        ),
        caption=machine(),
    )
    columns = (
        "backend",
        "connectors",
        "runs rows",
        "backfills",
        "due",
        "skipped",
        "baseline ms",
        "decide ms",
        "tick ms",
        "SQL/tick",
        "tick µs/connector",
        "spread",
        "x baseline",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "backend" else "right")
    for r in results:
        tick = median(r.tick)
        table.add_row(
            r.backend,
            f"{r.connectors:,}",
            f"{r.runs:,}",
            f"{r.campaigns:,}",
            f"{median(r.due):.0f}",
            f"{median(r.skipped):.0f}",
            f"{median(r.baseline) * 1000:.1f}",
            f"{median(r.decide) * 1000:.1f}",
            f"{tick * 1000:.1f}",
            f"{median(r.statements):.0f}",
            f"{tick * 1e6 / r.connectors:.0f}",
            f"{spread(r.tick):.0%}",
            f"{tick / median(r.baseline):.1f}x",
        )
    out = console()
    out.print(table)
    out.print(
        "x baseline: tick time ÷ the plain SELECT's (lower is better); SQL/tick: statements a "
        "tick sends; backfills: running "
        "campaigns; due: runs each tick enqueued; skipped: connectors that wanted a run and got "
        "none (busy, paused, requires…)"
    )
    out.print(f"elapsed {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
