"""``/metrics``: Prometheus text, read from the database at scrape time.

Counters are sums over ``connector_runs`` (and ``costs``), so they are the same whichever API
process is scraped and however many workers wrote them — no per-process registry to aggregate.
The host gauges come from the host gates (Redis in a fleet). The collector is built per scrape.

Families (labels in braces):

=====================================================  ===========================================
``rareindex_runs_total{connector,outcome}``             finished runs by outcome
``rareindex_run_failures_total{connector,reason}``      failed runs by closed-vocabulary reason
``rareindex_runs_active{connector,status}``             queued / running runs now
``rareindex_pages_total{connector}``                    pages fetched
``rareindex_records_total{connector}``                  raw records stored
``rareindex_dupes_total{connector}``                    identical re-fetches not stored
``rareindex_engine_attempts_total{connector,engine,status}``  HTTP status, or blocked /
                                                        circuit_open / error
``rareindex_blocked_total{connector,engine}``           challenge pages
``rareindex_engine_credits_total{connector,engine}``    paid-engine credits
``rareindex_breaker_state{host}``                       0 closed, 1 half-open, 2 open
``rareindex_budget_left{host,window}``                  requests left this minute / day
``rareindex_queue_lag_seconds``                         age of the oldest queued run
``rareindex_normalized_pending``                        normalized records awaiting resolution
``rareindex_normalized_rows_5m{connector}``             rows normalized in the last 5 minutes
``rareindex_resolved_rows_5m{connector}``               rows resolved in the last 5 minutes
``rareindex_connector_status{connector,status}``        1 for the connector's current status
``rareindex_connector_health{connector,status}``        1 for its latest health status
``rareindex_dead_letters``                              dead letters not requeued
``rareindex_database_up``                               0 when the database could not be read
=====================================================  ===========================================

Label values pass :func:`safe_label`: connector slugs, engine names, closed vocabularies and
configured host names only — never a URL, a path, a cert-number-like digit run or a token.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated

import structlog
from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..storage import Engine
from ..storage.admin_queries import connector_host_hints
from ..storage.metrics_queries import metrics_snapshot
from .checks import broker_check, timed
from .hosts import BREAKER_VALUE, HostView, connector_hosts, host_view, read_gates
from .state import ApiState, api_state

__all__ = ["RECENT", "DatabaseCollector", "render_metrics", "router", "safe_label"]

log = structlog.get_logger(__name__)

RECENT = timedelta(minutes=5)
"""The throughput window of ``rareindex_normalized_rows_5m`` and ``rareindex_resolved_rows_5m``."""

_ENGINES = frozenset({"api", "firecrawl", "scrapfly"})
_UNSAFE = (
    re.compile(r"[/:?#@=&%\s]"),  # URLs, paths, queries, e-mail-like values
    re.compile(r"\d{5,}"),  # cert numbers, item ids, phone numbers
    re.compile(r"[0-9a-f]{16,}"),  # hashes, token ids
    re.compile(r"^rit_"),  # our bearer tokens
    re.compile(r"(?=[A-Za-z0-9_-]*[A-Z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),  # secret-like
)
OTHER = "other"


def safe_label(value: object) -> str:
    """``value`` when it is safe as a label, else ``"other"``."""
    text = str(value)
    if not text or len(text) > 100 or any(p.search(text) for p in _UNSAFE):
        return OTHER
    return text


def _engine(name: str) -> str:
    return name if name in _ENGINES else OTHER


def _status(code: str) -> str:
    return code if re.fullmatch(r"[1-5]\d\d", code) else OTHER


class DatabaseCollector(Collector):
    """Reads the database when collected; ``hosts`` are the host gauges read just before."""

    def __init__(
        self, engine: Engine, hosts: Iterable[HostView] = (), *, now: datetime | None = None
    ):
        self.engine = engine
        self.hosts = list(hosts)
        self.now = now

    def collect(self) -> Iterator[Metric]:
        now = self.now or datetime.now(UTC)
        up = GaugeMetricFamily("rareindex_database_up", "1 when the database could be read")
        try:
            snap = metrics_snapshot(self.engine, now=now, recent=RECENT)
        except Exception as exc:  # a scrape reports the outage instead of failing
            log.warning("metrics.database_failed", error=type(exc).__name__)
            up.add_metric([], 0)
            yield up
            yield from self._host_families()
            return
        up.add_metric([], 1)
        yield up

        def counter(name: str, doc: str, labels: list[str]) -> CounterMetricFamily:
            return CounterMetricFamily(name, doc, labels=labels)

        def gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, labels=labels)

        runs = counter("rareindex_runs", "Finished crawl runs by outcome", ["connector", "outcome"])
        for (connector, outcome), n in sorted(snap.runs_by_outcome.items()):
            runs.add_metric([safe_label(connector), safe_label(outcome)], n)
        failures = counter(
            "rareindex_run_failures", "Failed runs by reason", ["connector", "reason"]
        )
        for (connector, reason), n in sorted(snap.run_failures.items()):
            failures.add_metric([safe_label(connector), safe_label(reason)], n)
        active = gauge("rareindex_runs_active", "Queued and running runs", ["connector", "status"])
        for (connector, status), n in sorted(snap.runs_active.items()):
            active.add_metric([safe_label(connector), safe_label(status)], n)
        yield from (runs, failures, active)

        for name, doc, values in (
            ("rareindex_pages", "Pages fetched by crawl runs", snap.pages),
            ("rareindex_records", "Raw records stored by crawl runs", snap.records),
            ("rareindex_dupes", "Identical re-fetches recognised and not stored", snap.dupes),
        ):
            totals = counter(name, doc, ["connector"])
            for connector, n in sorted(values.items()):
                totals.add_metric([safe_label(connector)], n)
            yield totals

        attempts = counter(
            "rareindex_engine_attempts",
            "Fetch attempts by engine and status (HTTP code, blocked, circuit_open or error)",
            ["connector", "engine", "status"],
        )
        blocked = counter(
            "rareindex_blocked", "Challenge pages met, by engine", ["connector", "engine"]
        )
        for (connector, engine_name), stats in sorted(snap.engines.items()):
            labels = [safe_label(connector), _engine(engine_name)]
            answered = 0
            for code, n in sorted(stats.statuses.items()):
                attempts.add_metric([*labels, _status(code)], n)
                answered += n
            attempts.add_metric([*labels, "blocked"], stats.blocked)
            attempts.add_metric([*labels, "circuit_open"], stats.circuit_open)
            other = stats.attempts - answered - stats.blocked - stats.circuit_open
            attempts.add_metric([*labels, "error"], max(0, other))
            blocked.add_metric(labels, stats.blocked)
        credits = counter(
            "rareindex_engine_credits", "Paid-engine credits spent", ["connector", "engine"]
        )
        for (connector, engine_name), amount in sorted(snap.credits.items()):
            credits.add_metric([safe_label(connector), _engine(engine_name)], float(amount))
        yield from (attempts, blocked, credits)

        yield from self._host_families()

        lag = gauge("rareindex_queue_lag_seconds", "Age of the oldest queued run (0: none)", [])
        oldest = snap.oldest_queued_at
        lag.add_metric([], max(0.0, (now - oldest).total_seconds()) if oldest else 0.0)
        pending = gauge(
            "rareindex_normalized_pending", "Normalized records awaiting resolution", []
        )
        pending.add_metric([], snap.normalized_pending)
        yield from (lag, pending)
        for name, doc, values in (
            (
                "rareindex_normalized_rows_5m",
                "Rows normalized in the last 5 minutes",
                snap.normalized_recent,
            ),
            (
                "rareindex_resolved_rows_5m",
                "Rows resolved in the last 5 minutes",
                snap.resolved_recent,
            ),
        ):
            throughput = gauge(name, doc, ["connector"])
            for connector, n in sorted(values.items()):
                throughput.add_metric([safe_label(connector)], n)
            yield throughput

        states = gauge(
            "rareindex_connector_status", "1 for the connector's status", ["connector", "status"]
        )
        for connector, value in snap.connectors.items():
            states.add_metric([safe_label(connector), safe_label(value)], 1)
        health = gauge(
            "rareindex_connector_health",
            "1 for the connector's latest health status",
            ["connector", "status"],
        )
        for connector, value in sorted(snap.health.items()):
            health.add_metric([safe_label(connector), safe_label(value)], 1)
        letters = gauge("rareindex_dead_letters", "Dead letters not requeued", [])
        letters.add_metric([], snap.dead_letters)
        yield from (states, health, letters)

    def _host_families(self) -> Iterator[Metric]:
        breaker = GaugeMetricFamily(
            "rareindex_breaker_state",
            "Circuit breaker: 0 closed, 1 half-open, 2 open",
            labels=["host"],
        )
        budget = GaugeMetricFamily(
            "rareindex_budget_left",
            "Requests a host may still receive (policy budget minus use)",
            labels=["host", "window"],
        )
        for view in sorted(self.hosts, key=lambda v: v.host):
            host = safe_label(view.host)
            breaker.add_metric([host], BREAKER_VALUE[view.breaker])
            if view.left_per_minute is not None:
                budget.add_metric([host, "minute"], view.left_per_minute)
            if view.left_per_day is not None:
                budget.add_metric([host, "day"], view.left_per_day)
        yield from (breaker, budget)


def render_metrics(
    engine: Engine, hosts: Iterable[HostView] = (), up: Mapping[str, bool] | None = None
) -> bytes:
    """The Prometheus text of one scrape; ``up`` says which other dependencies answered
    (``broker``, ``gates``): each becomes a ``rareindex_<name>_up`` gauge."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(engine, hosts))
    registry.register(DependencyCollector(up or {}))
    return generate_latest(registry)


class DependencyCollector(Collector):
    """``rareindex_broker_up`` and ``rareindex_gates_up``: 1 when the dependency answered this
    scrape, 0 when it did not (the scrape itself still answers 200)."""

    def __init__(self, up: Mapping[str, bool]):
        self.up = dict(up)

    def collect(self) -> Iterator[Metric]:
        docs = {
            "broker": "1 when the broker answered a PING this scrape",
            "gates": "1 when the host gates (Redis in a fleet) could be read this scrape",
        }
        for name, ok in sorted(self.up.items()):
            gauge = GaugeMetricFamily(f"rareindex_{name}_up", docs.get(name, name))
            gauge.add_metric([], 1 if ok else 0)
            yield gauge


router = APIRouter(tags=["metrics"])


@router.get(
    "/metrics", response_class=Response, responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}}
)
async def metrics(state: Annotated[ApiState, Depends(api_state)]) -> Response:
    """Prometheus text format (no token: labels carry nothing private)."""
    try:
        hints = await run_in_threadpool(connector_host_hints, state.engine)
    except Exception:  # the collector reports the database outage itself
        hints = {}
    hosts = {h for meta, recent in hints.values() for h in connector_hosts(meta, recent)}
    reading = await read_gates(state.gates, hosts)
    epoch = time.time()
    views = [
        host_view(host, gate_state, state.policies.for_host(host), epoch)
        for host, gate_state in reading.states.items()
    ]
    up = {"gates": reading.error is None}
    if state.settings.broker_url:
        url = state.settings.broker_url
        up["broker"] = (await timed(broker_check(url), url)).ok
    body = await run_in_threadpool(render_metrics, state.engine, views, up)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
