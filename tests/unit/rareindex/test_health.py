"""The health rules: every state, and every main reason, produced from recorded runs.

The run rows are shaped like real ``connector_runs`` rows: the clean ``engine_stats`` are copied
from a ``rareindex demo`` crawl (coins-woo, cards-shop), the failed and escalated ones from what
the router records for a transient failure, a challenge page escalated api -> firecrawl ->
scrapfly (tests/integration/test_paid_engines.py), and an open breaker.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from rareindex.health import (
    HealthInputs,
    HealthReason,
    HealthRules,
    ProbeResult,
    RunRecord,
    assess,
    is_fresh,
    worst_breaker,
)
from rareindex.health_check import breaker_states
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.runtime import DomainPolicy, HostGates, MemoryGateBackend

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[3]

# -- recorded engine_stats -------------------------------------------------------------------------
# coins-woo, demo crawl: one WooCommerce Store API page of 80 products.
COINS_WOO_STATS = json.loads(
    '{"api": {"attempts": 1, "success": 1, "credits": 0.0, "ms": 21, "statuses": {"200": 1},'
    ' "blocked": 0, "circuit_open": 0, "skipped": 0}}'
)
# cards-shop, demo crawl: four Shopify /products.json pages, 656 products.
CARDS_SHOP_STATS = json.loads(
    '{"api": {"attempts": 4, "success": 4, "credits": 0.0, "ms": 194, "statuses": {"200": 4},'
    ' "blocked": 0, "circuit_open": 0, "skipped": 0}}'
)
# A run whose source went down mid-crawl: two pages, then 503s until the retries ran out.
TRANSIENT_STATS = {
    "api": {
        "attempts": 3,
        "success": 2,
        "credits": 0.0,
        "ms": 5012,
        "statuses": {"200": 2},
        "blocked": 0,
        "circuit_open": 0,
        "skipped": 0,
    }
}
# A run whose host's breaker opened: failures, then refusals counted as circuit_open.
CIRCUIT_STATS = {
    "api": {
        "attempts": 6,
        "success": 0,
        "credits": 0.0,
        "ms": 1200,
        "statuses": {},
        "blocked": 0,
        "circuit_open": 1,
        "skipped": 0,
    }
}


def escalated_stats(pages: int) -> dict[str, Any]:
    """``pages`` fetches that met a Cloudflare challenge on api and Firecrawl, then got through on
    Scrapfly (1 and 6 credits an attempt, as the fake vendors charge)."""
    return {
        "api": {
            "attempts": pages,
            "success": 0,
            "credits": 0.0,
            "ms": 40 * pages,
            "statuses": {},
            "blocked": pages,
            "circuit_open": 0,
            "skipped": 0,
        },
        "firecrawl": {
            "attempts": pages,
            "success": 0,
            "credits": 1.0 * pages,
            "ms": 900 * pages,
            "statuses": {},
            "blocked": pages,
            "circuit_open": 0,
            "skipped": 0,
        },
        "scrapfly": {
            "attempts": pages,
            "success": pages,
            "credits": 6.0 * pages,
            "ms": 2500 * pages,
            "statuses": {"200": pages},
            "blocked": 0,
            "circuit_open": 0,
            "skipped": 0,
        },
    }


_counter = iter(range(10**6))


def run(
    hours_ago: float,
    *,
    status: str = "succeeded",
    records: int = 80,
    dupes: int = 0,
    pages: int = 1,
    stats: dict[str, Any] | None = None,
    failure_reason: str | None = None,
    mode: str = "incremental",
) -> RunRecord:
    """A finished run row, as the store loads it from ``connector_runs``."""
    finished = NOW - timedelta(hours=hours_ago)
    failed = status == "failed"
    return RunRecord(
        id=f"run_{next(_counter):026d}",
        status=status,
        mode=mode,
        outcome="failed" if failed else ("cancelled" if status == "cancelled" else "complete"),
        failure_reason=failure_reason or ("transient" if failed else None),
        pages=pages,
        records=records,
        dupes=dupes,
        engine_stats=stats if stats is not None else COINS_WOO_STATS,
        started_at=finished - timedelta(seconds=1),
        finished_at=finished,
    )


def healthy_runs(count: int = 12, *, every_hours: float = 6.0) -> list[RunRecord]:
    """coins-woo's steady state: every run re-reads the 80 products (new or dupes)."""
    return [
        run(
            1 + i * every_hours,
            records=80 if i == count - 1 else 0,
            dupes=0 if i == count - 1 else 80,
        )
        for i in range(count)
    ]


def inputs(
    runs: list[RunRecord],
    *,
    status: str = "active",
    refresh_class: str = "NORMAL",
    last_success_at: datetime | str | None = "auto",
    **extra: Any,
) -> HealthInputs:
    if last_success_at == "auto":
        done = [r.finished_at for r in runs if r.status == "succeeded" and r.finished_at]
        last_success_at = max(done) if done else None
    assert not isinstance(last_success_at, str)
    return HealthInputs(
        connector_id="coins-woo",
        connector_status=status,
        refresh_class=refresh_class,  # type: ignore[arg-type]
        now=NOW,
        runs=tuple(runs),
        last_success_at=last_success_at,
        **extra,
    )


# -- UP ------------------------------------------------------------------------------------------


def test_a_connector_with_steady_successful_runs_is_up() -> None:
    snap = assess(inputs(healthy_runs()))
    assert (snap.status, snap.reasons) == ("UP", [])
    assert snap.success_rate == 1.0
    assert snap.records_per_run == 80  # dupes count: an unchanged store re-read is healthy
    assert snap.blocked_rate == 0.0
    assert snap.freshness_seconds == 3600
    assert snap.details["records_baseline"] == 80
    assert snap.details["window_runs"] == 10
    assert snap.details["engines"]["api"]["success_rate"] == 1.0
    assert (snap.details["firecrawl_success_rate"], snap.details["scrapfly_fallback_rate"]) == (
        None,
        None,
    )
    json.dumps(snap.as_dict())  # what is stored and printed is plain JSON


def test_unchanged_304_pages_count_as_yield() -> None:
    """A conditional re-crawl answered 304 everywhere stored nothing, and is not a drop."""
    not_modified = {"api": {**CARDS_SHOP_STATS["api"], "statuses": {"304": 4}}}
    runs = [run(1 + i, records=0, dupes=0, stats=not_modified) for i in range(3)]
    runs += [run(10 + i, records=0, dupes=4, stats=CARDS_SHOP_STATS) for i in range(5)]
    snap = assess(inputs(runs))
    assert (snap.status, snap.records_per_run) == ("UP", 4)


# -- DISABLED and MAINTENANCE: the operator's word first -------------------------------------------


def test_a_disabled_connector_is_disabled_whatever_its_runs_say() -> None:
    broken = [run(1 + i, status="failed") for i in range(5)]
    snap = assess(inputs(broken, status="disabled"))
    assert (snap.status, snap.reasons) == ("DISABLED", ["disabled"])
    assert snap.success_rate == 0.0  # the measures are still reported


@pytest.mark.parametrize("status", ["maintenance", "paused"])
def test_a_paused_or_maintained_connector_is_in_maintenance(status: str) -> None:
    stale = [run(24 * 30 + i) for i in range(3)]
    snap = assess(inputs(stale, status=status))
    assert (snap.status, snap.reasons) == ("MAINTENANCE", [status])


# -- BROKEN --------------------------------------------------------------------------------------


def test_three_failed_runs_in_a_row_are_broken() -> None:
    runs = [run(1 + i, status="failed", stats=TRANSIENT_STATS) for i in range(3)]
    runs += [run(4 + i, records=0, dupes=80) for i in range(7)]
    snap = assess(inputs(runs, refresh_class="ACTIVE", last_success_at=NOW - timedelta(hours=4)))
    assert snap.status == "BROKEN"
    assert snap.reasons[:1] == ["consecutive_failures"]
    assert snap.success_rate == 0.7
    assert "success_rate_low" in snap.reasons  # 7 of 10: the DEGRADED row fires too
    assert snap.details["failure_reasons"] == {"transient": 3}


def test_two_failures_then_a_success_are_not_consecutive_failures() -> None:
    runs = [run(1, status="failed"), run(2, status="failed"), *healthy_runs(10, every_hours=1)]
    snap = assess(inputs(runs))
    assert "consecutive_failures" not in snap.reasons
    assert snap.status == "DEGRADED"  # 8 of 10 succeeded


def test_a_success_rate_under_half_is_broken() -> None:
    # f s f s f f s f s f: 4 of 10, never three failures in a row
    pattern = "fsfsffsfsf"
    runs = [
        run(1 + i, status="failed", stats=TRANSIENT_STATS) if c == "f" else run(1 + i)
        for i, c in enumerate(pattern)
    ]
    snap = assess(inputs(runs))
    assert snap.status == "BROKEN"
    assert snap.reasons == ["success_rate_critical"]  # and not also success_rate_low
    assert snap.success_rate == 0.4


def test_an_open_breaker_is_broken() -> None:
    runs = healthy_runs()
    runs[0] = run(0.5, status="failed", stats=CIRCUIT_STATS, failure_reason="circuit_open")
    snap = assess(inputs(runs, breakers={"coins-woo.fake.test": "open", "cdn.fake.test": "closed"}))
    assert snap.status == "BROKEN"
    assert "breaker_open" in snap.reasons
    assert snap.breaker_state == "open"
    assert snap.details["hosts"] == {"cdn.fake.test": "closed", "coins-woo.fake.test": "open"}
    assert snap.details["engines"]["api"]["circuit_open"] == 1


def test_records_falling_to_zero_against_the_connector_s_own_history_is_broken() -> None:
    runs = [run(1 + i, records=0, dupes=0, stats=COINS_WOO_STATS) for i in range(3)]
    runs += [run(10 + i, records=0, dupes=80) for i in range(10)]
    snap = assess(inputs(runs))
    assert snap.status == "BROKEN"
    assert snap.reasons == ["no_records"]  # and not also records_low
    assert (snap.records_per_run, snap.details["records_baseline"]) == (0, 80)


def test_a_connector_that_never_yields_is_not_judged_by_a_zero_history() -> None:
    runs = [run(1 + i, records=0, dupes=0) for i in range(13)]
    assert assess(inputs(runs)).status == "UP"


# -- DEGRADED, one reason at a time ----------------------------------------------------------------


def test_no_runs_yet_is_degraded() -> None:
    snap = assess(inputs([], last_success_at=None))
    assert (snap.status, snap.reasons) == ("DEGRADED", ["no_runs"])
    assert (snap.success_rate, snap.records_per_run, snap.freshness_seconds) == (None, None, None)


def test_queued_running_and_cancelled_runs_are_not_judged() -> None:
    runs = [run(1, status="cancelled"), run(2, status="running"), run(3, status="queued")]
    assert assess(inputs(runs, last_success_at=None)).reasons == ["no_runs"]


def test_a_success_rate_under_ninety_percent_is_degraded() -> None:
    runs = healthy_runs()
    runs[1] = run(7, status="failed", stats=TRANSIENT_STATS)
    runs[4] = run(25, status="failed", stats=TRANSIENT_STATS)
    snap = assess(inputs(runs))
    assert (snap.status, snap.reasons, snap.success_rate) == (
        "DEGRADED",
        ["success_rate_low"],
        0.8,
    )


def test_one_failure_in_ten_is_still_up() -> None:
    runs = healthy_runs()
    runs[3] = run(19, status="failed", stats=TRANSIENT_STATS)
    assert assess(inputs(runs)).status == "UP"  # 0.9 is not under 0.9


def test_a_high_blocked_rate_is_degraded_and_engine_strategy_is_reported() -> None:
    runs = [
        run(1 + i * 6, records=0, dupes=30, pages=3, stats=escalated_stats(3)) for i in range(12)
    ]
    snap = assess(inputs(runs))
    assert (snap.status, snap.reasons) == ("DEGRADED", ["blocked_rate_high"])
    assert snap.blocked_rate == round(60 / 90, 4)  # api and firecrawl blocked on every page
    assert snap.details["firecrawl_success_rate"] == 0.0
    assert snap.details["scrapfly_fallback_rate"] == round(30 / 90, 4)
    assert snap.details["engines"]["scrapfly"]["success_rate"] == 1.0


def test_a_few_blocked_attempts_are_not_judged() -> None:
    runs = [run(1 + i * 6, stats=escalated_stats(1)) for i in range(3)]  # 9 attempts < 10
    assert "blocked_rate_high" not in assess(inputs(runs)).reasons


def test_firecrawl_that_works_has_a_high_success_rate_and_no_fallback() -> None:
    works = {
        "firecrawl": {"attempts": 5, "success": 5, "credits": 5.0, "blocked": 0},
        "api": {"attempts": 5, "success": 0, "blocked": 5},
    }
    snap = assess(inputs([run(1 + i, stats=works) for i in range(3)]))
    assert snap.details["firecrawl_success_rate"] == 1.0
    assert snap.details["scrapfly_fallback_rate"] is None


def test_records_under_half_the_connector_s_median_are_degraded() -> None:
    runs = [run(1 + i, records=0, dupes=30) for i in range(3)]
    runs += [run(10 + i, records=0, dupes=d) for i, d in enumerate([80, 75, 82, 78, 80])]
    snap = assess(inputs(runs))
    assert (snap.status, snap.reasons) == ("DEGRADED", ["records_low"])
    assert (snap.records_per_run, snap.details["records_baseline"]) == (30, 80)


def test_records_at_half_the_median_are_still_up() -> None:
    runs = [run(1 + i, records=0, dupes=40) for i in range(3)]
    runs += [run(10 + i, records=0, dupes=80) for i in range(5)]
    assert assess(inputs(runs)).status == "UP"


def test_backfill_slices_are_left_out_of_records_per_run() -> None:
    runs = [run(1 + i, records=500, mode="backfill") for i in range(5)]
    runs += [run(10 + i, records=0, dupes=80) for i in range(6)]
    snap = assess(inputs(runs))
    assert (snap.status, snap.records_per_run) == ("UP", 80)


def test_schema_drift_is_degraded() -> None:
    today = NOW.date()
    history: dict[date, dict[tuple[str, str], tuple[int, int]]] = {
        today - timedelta(days=d): {("listing", "identifiers.upc"): (76, 80)} for d in range(1, 8)
    }
    history[today] = {("listing", "identifiers.upc"): (8, 80)}
    snap = assess(inputs(healthy_runs(), field_history=history))
    assert (snap.status, snap.reasons, snap.schema_drift) == ("DEGRADED", ["schema_drift"], True)
    assert snap.details["drift"] == [
        {
            "record_kind": "listing",
            "field": "identifiers.upc",
            "baseline_ratio": 0.95,
            "today_ratio": 0.1,
        }
    ]


def test_yesterday_s_drift_still_counts_early_in_the_day_but_older_does_not() -> None:
    def drifted(last: date) -> dict[date, dict[tuple[str, str], tuple[int, int]]]:
        history = {last - timedelta(days=d): {("listing", "price"): (80, 80)} for d in range(1, 8)}
        history[last] = {("listing", "price"): (0, 80)}
        return history

    yesterday, older = NOW.date() - timedelta(days=1), NOW.date() - timedelta(days=3)
    assert assess(inputs(healthy_runs(), field_history=drifted(yesterday))).schema_drift
    assert not assess(inputs(healthy_runs(), field_history=drifted(older))).schema_drift


@pytest.mark.parametrize(
    ("refresh_class", "hours", "stale"),
    [
        ("HOT", 0.2, True),  # 12 min > 2 x 5 min
        ("HOT", 0.15, False),  # 9 min
        ("ACTIVE", 2.5, True),
        ("ACTIVE", 1.9, False),
        ("NORMAL", 49, True),
        ("NORMAL", 47, False),
        ("ARCHIVE", 24 * 15, True),
        ("ARCHIVE", 24 * 13, False),
    ],
)
def test_stale_is_older_than_twice_the_refresh_interval(
    refresh_class: str, hours: float, stale: bool
) -> None:
    runs = [run(hours + i * 0.01) for i in range(3)]
    snap = assess(inputs(runs, refresh_class=refresh_class))
    assert (snap.status, snap.reasons) == (("DEGRADED", ["stale"]) if stale else ("UP", []))


def test_a_connector_that_never_succeeded_is_stale_as_well_as_broken() -> None:
    runs = [run(1 + i, status="failed", failure_reason="blocked") for i in range(3)]
    snap = assess(inputs(runs))
    assert snap.status == "BROKEN"
    assert snap.reasons == ["consecutive_failures", "success_rate_critical", "stale"]
    assert snap.freshness_seconds is None


def test_a_half_open_breaker_is_degraded() -> None:
    snap = assess(inputs(healthy_runs(), breakers={"coins-woo.fake.test": "half_open"}))
    assert (snap.status, snap.reasons, snap.breaker_state) == (
        "DEGRADED",
        ["breaker_half_open"],
        "half_open",
    )


@pytest.mark.parametrize("probe_status", ["BROKEN", "DEGRADED"])
def test_a_failing_probe_makes_an_up_connector_degraded(probe_status: str) -> None:
    probe = ProbeResult(probe_status, message="UnsafeURL: 127.0.0.1 is loopback", error="UnsafeURL")  # type: ignore[arg-type]
    snap = assess(inputs(healthy_runs(), probe=probe))
    assert (snap.status, snap.reasons) == ("DEGRADED", ["probe_failed"])
    assert snap.details["probe"]["error"] == "UnsafeURL"


def test_a_passing_probe_leaves_it_up_and_is_recorded() -> None:
    snap = assess(inputs(healthy_runs(), probe=ProbeResult("UP", latency_ms=21)))
    assert (snap.status, snap.details["probe"]["latency_ms"]) == ("UP", 21)


def test_a_failing_probe_does_not_lift_a_broken_connector() -> None:
    runs = [run(1 + i, status="failed") for i in range(3)] + healthy_runs(3)
    snap = assess(inputs(runs, probe=ProbeResult("BROKEN")))
    assert snap.status == "BROKEN"
    assert snap.reasons[-1] == "probe_failed"


# -- freshness, breakers, vocabulary ---------------------------------------------------------------


def test_data_is_fresh_within_one_refresh_interval() -> None:
    assert is_fresh(inputs([run(0.9)], refresh_class="ACTIVE"))
    assert not is_fresh(inputs([run(1.1)], refresh_class="ACTIVE"))
    assert not is_fresh(inputs([], last_success_at=None))


def test_the_worst_breaker_wins() -> None:
    assert worst_breaker({"a": "closed", "b": "half_open"}) == "half_open"
    assert worst_breaker(["half_open", "open", "closed"]) == "open"
    assert worst_breaker({}) is None


class ManualClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_breaker_states_read_the_gates_and_an_expired_cooldown_reads_half_open() -> None:
    clock = ManualClock(1_800_000_000.0)
    gates = HostGates(MemoryGateBackend(), clock=clock)
    policy = DomainPolicy(circuit_failures=2, circuit_cooldown_ms=60_000, min_interval_ms=0)

    async def fail_twice() -> None:
        for _ in range(2):
            with pytest.raises(TransientFetchError):
                async with gates.slot("down.example", policy):
                    raise TransientFetchError("503", url="http://down.example/")

    async def main() -> list[dict[str, str]]:
        async with gates.slot("up.example", policy):
            pass
        await fail_twice()
        seen = [dict(await breaker_states(gates, ["down.example", "up.example", "new.example"]))]
        clock.now += 61
        seen.append(dict(await breaker_states(gates, ["down.example"])))
        return seen

    during, after = asyncio.run(main())
    assert during == {"down.example": "open", "new.example": "closed", "up.example": "closed"}
    assert after == {"down.example": "half_open"}


def test_reasons_are_a_closed_vocabulary_written_down_in_the_docs() -> None:
    import rareindex.health as module

    docs = (REPO / "docs/health.md").read_text()
    table = module.__doc__ or ""
    for reason in HealthReason:
        assert re.search(rf"\b{reason.value}\b", table), f"{reason.value} not in the rule table"
        assert f"`{reason.value}`" in docs, f"{reason.value} not in docs/health.md"


def test_rules_are_configurable() -> None:
    runs = healthy_runs()
    runs[3] = run(19, status="failed")
    assert assess(inputs(runs), HealthRules(degraded_success_rate=0.95)).status == "DEGRADED"
