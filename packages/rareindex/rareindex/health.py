"""Connector health: the rules that turn recent runs into UP / DEGRADED / BROKEN / DISABLED /
MAINTENANCE. Pure: :func:`assess` reads :class:`HealthInputs` (facts loaded by
:mod:`rareindex.storage.health_store`, the gates and the probe) and returns a
:class:`HealthSnapshot`; nothing here touches the database or the network.

The measures (``rules`` = :class:`HealthRules`, defaults in brackets):

* **window** — the last ``window_runs`` [10] *finished* runs (succeeded or failed; queued,
  running and cancelled runs are not judged), newest first.
* **success rate** — succeeded / finished runs in the window.
* **yield** of a run — ``records + dupes + 304s``: every item the source served, new or
  unchanged (an incremental re-crawl of an unchanged store is all dupes, and is healthy).
  **records per run** is the median yield of the last ``recent_yield_runs`` [3] succeeded
  *incremental* runs; the **baseline** is the median yield of up to ``history_runs`` [30]
  succeeded incremental runs before those (the connector's own history; backfill slices yield by
  page budget, so they are left out of both).
* **blocked rate** — Σ blocked / Σ attempts over every engine of the window's ``engine_stats``.
* **breaker** — the worst breaker among the connector's hosts (open > half-open > closed); an
  open breaker whose cooldown is over reads half-open (its next request is the trial).
* **freshness** — seconds since the last succeeded run finished, against the refresh interval
  of the connector's class (HOT 5 min, ACTIVE 60 min, NORMAL 24 h, ARCHIVE 7 d).
* **schema drift** — :func:`rareindex.quality.detect_drift` on the daily field-presence
  counters, for the latest counted day (today, or yesterday early in the UTC day).
* **engine strategy** (details only) — ``firecrawl_success_rate`` = firecrawl successes /
  firecrawl attempts; ``scrapfly_fallback_rate`` = scrapfly attempts / all attempts (Scrapfly is
  the last resort of the engine order, so its share of attempts is how often the domain needed
  it); both ``None`` where the engine was never tried.

The rules, in order. Rows 1-3 decide alone; from row 4 on, every row that fires adds its reason
to ``details["reasons"]`` and the state is the worst of them (BROKEN > DEGRADED > UP):

=== ============ ===================== ====================================================
 #  state        reason                when
=== ============ ===================== ====================================================
 1  DISABLED     disabled              ``connectors.status`` is ``disabled``
 2  MAINTENANCE  maintenance / paused  ``connectors.status`` is ``maintenance`` / ``paused``
 3  DEGRADED     no_runs               no finished run yet: nothing to judge
 4  BROKEN       consecutive_failures  the last ``broken_after_failures`` [3] runs all failed
 5  BROKEN       success_rate_critical success rate < ``broken_success_rate`` [0.5]
 6  BROKEN       breaker_open          a host's breaker is open (cooldown not over)
 7  BROKEN       no_records            the recent succeeded incremental runs all yielded
                                       nothing while the baseline is > 0
 8  DEGRADED     success_rate_low      success rate < ``degraded_success_rate`` [0.9]
                                       (and not row 5)
 9  DEGRADED     blocked_rate_high     blocked rate > ``max_blocked_rate`` [0.2], over at
                                       least ``min_attempts`` [10] attempts
10  DEGRADED     records_low           records per run < ``min_records_ratio`` [0.5] x the
                                       baseline (at least ``min_history_runs`` [3] runs in
                                       it; and not row 7)
11  DEGRADED     schema_drift          a field's presence fell (row 11's signals in details)
12  DEGRADED     stale                 no succeeded run for more than ``stale_factor`` [2] x
                                       the refresh interval, or never
13  DEGRADED     breaker_half_open     a host's breaker is half-open
14  DEGRADED     probe_failed          the light probe (run only while the data is fresh)
                                       reported anything but UP, or failed to run
15  DEGRADED     quarantine_jump       the share of its observations the review queue
                                       quarantined in the last ``quarantine_window_hours``
                                       [24] is at least ``quarantine_min_share`` [0.1], over
                                       at least ``quarantine_min_count`` [5] of them, and
                                       more than ``quarantine_jump_factor`` [3] x its share
                                       over the ``quarantine_baseline_days`` [7] before
16  UP           (none)                no row fired
=== ============ ===================== ====================================================

Example:
    >>> now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    >>> run = RunRecord(id="run_1", status="succeeded", mode="incremental", records=80,
    ...                 finished_at=now - timedelta(minutes=10))
    >>> snap = assess(HealthInputs("coins-woo", "active", "NORMAL", now, runs=(run,),
    ...                            last_success_at=run.finished_at))
    >>> snap.status, snap.reasons, snap.freshness_seconds
    ('UP', [], 600)
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

from rareindex_connectors import HealthStatus, RefreshClass, refresh_interval

from .quality import DriftSignal, FieldHistory, detect_drift
from .storage.runs import StoredRun

__all__ = [
    "DEFAULT_RULES",
    "BreakerState",
    "HealthInputs",
    "HealthReason",
    "HealthRules",
    "HealthSnapshot",
    "ProbeResult",
    "QuarantineShare",
    "RunRecord",
    "assess",
    "freshness_seconds",
    "is_fresh",
    "quarantine_jumped",
    "worst_breaker",
]

BreakerState = Literal["closed", "half_open", "open"]
_BREAKER_RANK: dict[str, int] = {"closed": 0, "half_open": 1, "open": 2}
JUDGED_STATUSES = frozenset({"succeeded", "failed"})
"""Run statuses the rules judge; queued, running and cancelled runs say nothing about the source."""


class HealthReason(StrEnum):
    """Why a connector is not UP: a closed vocabulary, safe as a metric label."""

    DISABLED = "disabled"
    MAINTENANCE = "maintenance"
    PAUSED = "paused"
    NO_RUNS = "no_runs"
    CONSECUTIVE_FAILURES = "consecutive_failures"
    SUCCESS_RATE_CRITICAL = "success_rate_critical"
    BREAKER_OPEN = "breaker_open"
    NO_RECORDS = "no_records"
    SUCCESS_RATE_LOW = "success_rate_low"
    BLOCKED_RATE_HIGH = "blocked_rate_high"
    RECORDS_LOW = "records_low"
    SCHEMA_DRIFT = "schema_drift"
    STALE = "stale"
    BREAKER_HALF_OPEN = "breaker_half_open"
    PROBE_FAILED = "probe_failed"
    QUARANTINE_JUMP = "quarantine_jump"


_BROKEN_REASONS = frozenset(
    {
        HealthReason.CONSECUTIVE_FAILURES,
        HealthReason.SUCCESS_RATE_CRITICAL,
        HealthReason.BREAKER_OPEN,
        HealthReason.NO_RECORDS,
    }
)


@dataclass(frozen=True, slots=True)
class HealthRules:
    """The thresholds of the rule table (module docstring)."""

    window_runs: int = 10
    history_runs: int = 30
    recent_yield_runs: int = 3
    min_history_runs: int = 3
    broken_after_failures: int = 3
    broken_success_rate: float = 0.5
    degraded_success_rate: float = 0.9
    max_blocked_rate: float = 0.2
    min_attempts: int = 10
    min_records_ratio: float = 0.5
    stale_factor: float = 2.0
    drift_window_days: int = 7
    quarantine_window_hours: int = 24
    quarantine_baseline_days: int = 7
    quarantine_min_count: int = 5
    quarantine_min_share: float = 0.1
    quarantine_jump_factor: float = 3.0

    @property
    def runs_to_load(self) -> int:
        """How many finished runs the store loads: the window, plus yield history."""
        return max(self.window_runs, self.recent_yield_runs + self.history_runs) * 2


DEFAULT_RULES = HealthRules()


RunRecord = StoredRun
"""One finished run as the rules read it: the stored run (a ``connector_runs`` row), not a copy."""


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What the light probe through the connector's ``health_check()`` found."""

    status: HealthStatus
    latency_ms: int | None = None
    message: str | None = None
    error: str | None = None
    """The exception class when the probe raised instead of reporting (e.g. ``UnsafeURL``)."""

    @property
    def ok(self) -> bool:
        return self.status == "UP"

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "latency_ms": self.latency_ms,
            "message": self.message,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class QuarantineShare:
    """The connector's index observations (sales, auction results, asks) written in the recent
    window and in the baseline before it, and how many of each the review queue quarantined."""

    recent: int = 0
    recent_quarantined: int = 0
    baseline: int = 0
    baseline_quarantined: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "recent": self.recent,
            "recent_quarantined": self.recent_quarantined,
            "recent_share": _ratio(self.recent_quarantined, self.recent),
            "baseline": self.baseline,
            "baseline_quarantined": self.baseline_quarantined,
            "baseline_share": _ratio(self.baseline_quarantined, self.baseline),
        }


def quarantine_jumped(share: QuarantineShare | None, rules: HealthRules) -> bool:
    """Row 15: the recent quarantined share is high, and well above the baseline's."""
    if share is None or share.recent_quarantined < rules.quarantine_min_count:
        return False
    recent = share.recent_quarantined / share.recent if share.recent else 0.0
    baseline = share.baseline_quarantined / share.baseline if share.baseline else 0.0
    return recent >= rules.quarantine_min_share and recent > rules.quarantine_jump_factor * baseline


@dataclass(frozen=True, slots=True)
class HealthInputs:
    """Everything :func:`assess` needs about one connector."""

    connector_id: str
    connector_status: str
    """``connectors.status``: active, paused, maintenance or disabled."""
    refresh_class: RefreshClass
    now: datetime
    runs: Sequence[RunRecord] = ()
    """Finished runs, newest first (see :attr:`HealthRules.runs_to_load`)."""
    last_success_at: datetime | None = None
    """When the last succeeded run finished (it may be older than :attr:`runs`)."""
    field_history: FieldHistory = field(default_factory=dict)
    breakers: Mapping[str, BreakerState] = field(default_factory=dict)
    """Host -> breaker state, for the hosts the connector fetches from."""
    probe: ProbeResult | None = None
    probe_skipped: str | None = None
    """Why no probe ran (``stale``, ``not_active``, ``disabled_by_caller``, ...)."""
    quarantine: QuarantineShare | None = None
    """What the review queue quarantined of its recent observations (row 15)."""


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    """One connector's health, as stored in ``connector_health``."""

    connector_id: str
    status: HealthStatus
    checked_at: datetime
    success_rate: float | None = None
    records_per_run: float | None = None
    blocked_rate: float | None = None
    breaker_state: str | None = None
    schema_drift: bool = False
    freshness_seconds: int | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reasons(self) -> list[str]:
        """Why it is not UP, in rule-table order (empty when UP)."""
        return list(self.details.get("reasons", []))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the CLI's ``--json``, the admin API)."""
        return {
            "connector_id": self.connector_id,
            "status": self.status,
            "checked_at": self.checked_at.isoformat(),
            "reasons": self.reasons,
            "success_rate": self.success_rate,
            "records_per_run": self.records_per_run,
            "blocked_rate": self.blocked_rate,
            "breaker_state": self.breaker_state,
            "schema_drift": self.schema_drift,
            "freshness_seconds": self.freshness_seconds,
            "details": dict(self.details),
        }


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def worst_breaker(
    states: Sequence[BreakerState] | Mapping[str, BreakerState],
) -> BreakerState | None:
    """The worst of some breaker states (None when there are none)."""
    values: list[BreakerState] = list(states.values() if isinstance(states, Mapping) else states)
    worst: BreakerState | None = None
    for state in values:
        if worst is None or _BREAKER_RANK[state] > _BREAKER_RANK[worst]:
            worst = state
    return worst


def freshness_seconds(last_success_at: datetime | None, now: datetime) -> int | None:
    """Seconds since the last succeeded run finished (None: never)."""
    if last_success_at is None:
        return None
    return max(0, int((now - last_success_at).total_seconds()))


def is_fresh(inputs: HealthInputs) -> bool:
    """Whether the last succeeded run is within the refresh interval: then a probe is worth it."""
    age = freshness_seconds(inputs.last_success_at, inputs.now)
    interval = refresh_interval(inputs.refresh_class).total_seconds()
    return age is not None and age <= interval


def _engine_totals(runs: Sequence[RunRecord]) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = {}
    for run in runs:
        for name, stats in run.engine_stats.items():
            if not isinstance(stats, Mapping):
                continue
            into = totals.setdefault(
                str(name), {"attempts": 0, "success": 0, "blocked": 0, "circuit_open": 0}
            )
            for key in into:
                into[key] += _int(stats.get(key))
    return totals


def _latest_counted_day(history: FieldHistory, today: date) -> date | None:
    days = [day for day in history if today - timedelta(days=1) <= day <= today]
    return max(days) if days else None


def _drift(inputs: HealthInputs, rules: HealthRules) -> list[DriftSignal]:
    day = _latest_counted_day(inputs.field_history, inputs.now.astimezone(UTC).date())
    if day is None:
        return []
    return detect_drift(inputs.field_history, day, window_days=rules.drift_window_days)


def assess(inputs: HealthInputs, rules: HealthRules = DEFAULT_RULES) -> HealthSnapshot:
    """Apply the rule table (module docstring) to one connector's inputs."""
    runs = [run for run in inputs.runs if run.status in JUDGED_STATUSES]
    window = runs[: rules.window_runs]
    succeeded = [run for run in window if run.status == "succeeded"]
    success_rate = _ratio(len(succeeded), len(window))

    yields = [r.yielded for r in runs if r.status == "succeeded" and r.mode == "incremental"]
    recent_yields = yields[: rules.recent_yield_runs]
    history_yields = yields[rules.recent_yield_runs : rules.recent_yield_runs + rules.history_runs]
    records_per_run = float(statistics.median(recent_yields)) if recent_yields else None
    baseline = float(statistics.median(history_yields)) if history_yields else None

    engines = _engine_totals(window)
    attempts = sum(e["attempts"] for e in engines.values())
    blocked_rate = _ratio(sum(e["blocked"] for e in engines.values()), attempts)
    firecrawl, scrapfly = engines.get("firecrawl"), engines.get("scrapfly")

    breaker = worst_breaker(inputs.breakers)
    freshness = freshness_seconds(inputs.last_success_at, inputs.now)
    interval_s = refresh_interval(inputs.refresh_class).total_seconds()
    drift = _drift(inputs, rules) if runs else []

    details: dict[str, Any] = {
        "reasons": [],
        "window_runs": len(window),
        "succeeded": len(succeeded),
        "failed": len(window) - len(succeeded),
        "failure_reasons": dict(
            Counter(r.failure_reason for r in window if r.status == "failed" and r.failure_reason)
        ),
        "records_baseline": baseline,
        "attempts": attempts,
        "firecrawl_success_rate": _ratio(firecrawl["success"], firecrawl["attempts"])
        if firecrawl
        else None,
        "scrapfly_fallback_rate": _ratio(scrapfly["attempts"], attempts) if scrapfly else None,
        "engines": {
            name: {**totals, "success_rate": _ratio(totals["success"], totals["attempts"])}
            for name, totals in sorted(engines.items())
        },
        "refresh_class": inputs.refresh_class,
        "refresh_interval_seconds": int(interval_s),
        "hosts": dict(sorted(inputs.breakers.items())),
        "drift": [
            {
                "record_kind": s.record_kind,
                "field": s.field,
                "baseline_ratio": round(s.baseline_ratio, 4),
                "today_ratio": round(s.today_ratio, 4),
            }
            for s in drift
        ],
        "probe": inputs.probe.as_dict() if inputs.probe else None,
        "probe_skipped": inputs.probe_skipped,
        "quarantine": inputs.quarantine.as_dict() if inputs.quarantine else None,
    }
    reasons = _reasons(
        inputs,
        rules,
        window=window,
        success_rate=success_rate,
        recent_yields=recent_yields,
        records_per_run=records_per_run,
        baseline=baseline,
        history_count=len(history_yields),
        attempts=attempts,
        blocked_rate=blocked_rate,
        breaker=breaker,
        drift=bool(drift),
        freshness=freshness,
        interval_s=interval_s,
        quarantine_jump=quarantine_jumped(inputs.quarantine, rules),
    )
    details["reasons"] = [str(reason) for reason in reasons]
    return HealthSnapshot(
        connector_id=inputs.connector_id,
        status=_state(inputs.connector_status, reasons),
        checked_at=inputs.now,
        success_rate=success_rate,
        records_per_run=records_per_run,
        blocked_rate=blocked_rate,
        breaker_state=breaker,
        schema_drift=bool(drift),
        freshness_seconds=freshness,
        details=details,
    )


def _reasons(
    inputs: HealthInputs,
    rules: HealthRules,
    *,
    window: Sequence[RunRecord],
    success_rate: float | None,
    recent_yields: Sequence[int],
    records_per_run: float | None,
    baseline: float | None,
    history_count: int,
    attempts: int,
    blocked_rate: float | None,
    breaker: BreakerState | None,
    drift: bool,
    freshness: int | None,
    interval_s: float,
    quarantine_jump: bool = False,
) -> list[HealthReason]:
    """Rows 1-15 of the rule table, in order."""
    status = inputs.connector_status
    if status == "disabled":  # row 1
        return [HealthReason.DISABLED]
    if status in ("maintenance", "paused"):  # row 2
        return [HealthReason(status)]
    if not window:  # row 3
        return [HealthReason.NO_RUNS]
    reasons: list[HealthReason] = []
    last = window[: rules.broken_after_failures]
    if len(last) == rules.broken_after_failures and all(r.status == "failed" for r in last):
        reasons.append(HealthReason.CONSECUTIVE_FAILURES)  # row 4
    critical = success_rate is not None and success_rate < rules.broken_success_rate
    if critical:
        reasons.append(HealthReason.SUCCESS_RATE_CRITICAL)  # row 5
    if breaker == "open":
        reasons.append(HealthReason.BREAKER_OPEN)  # row 6
    judged_yield = baseline is not None and history_count >= rules.min_history_runs
    no_records = (
        judged_yield
        and len(recent_yields) >= rules.recent_yield_runs
        and not any(recent_yields)
        and (baseline or 0) > 0
    )
    if no_records:
        reasons.append(HealthReason.NO_RECORDS)  # row 7
    if not critical and success_rate is not None and success_rate < rules.degraded_success_rate:
        reasons.append(HealthReason.SUCCESS_RATE_LOW)  # row 8
    if (
        attempts >= rules.min_attempts
        and blocked_rate is not None
        and blocked_rate > rules.max_blocked_rate
    ):
        reasons.append(HealthReason.BLOCKED_RATE_HIGH)  # row 9
    if (
        judged_yield
        and not no_records
        and records_per_run is not None
        and baseline is not None
        and records_per_run < rules.min_records_ratio * baseline
    ):
        reasons.append(HealthReason.RECORDS_LOW)  # row 10
    if drift:
        reasons.append(HealthReason.SCHEMA_DRIFT)  # row 11
    if freshness is None or freshness > rules.stale_factor * interval_s:
        reasons.append(HealthReason.STALE)  # row 12
    if breaker == "half_open":
        reasons.append(HealthReason.BREAKER_HALF_OPEN)  # row 13
    if inputs.probe is not None and not inputs.probe.ok:
        reasons.append(HealthReason.PROBE_FAILED)  # row 14
    if quarantine_jump:
        reasons.append(HealthReason.QUARANTINE_JUMP)  # row 15
    return reasons


def _state(connector_status: str, reasons: Sequence[HealthReason]) -> HealthStatus:
    if connector_status == "disabled":
        return "DISABLED"
    if connector_status in ("maintenance", "paused"):
        return "MAINTENANCE"
    if any(reason in _BROKEN_REASONS for reason in reasons):
        return "BROKEN"
    return "DEGRADED" if reasons else "UP"
