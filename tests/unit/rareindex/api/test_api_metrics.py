"""``/metrics``: Prometheus text that parses, with the expected families and values read from the
database at scrape time, and labels that never carry a URL, a cert number or a token."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine, insert

from rareindex.api.metrics import safe_label
from rareindex.storage.schema import (
    certificate_sightings,
    certificates,
    connector_runs,
    raw_records,
)
from rareindex.storage.tokens import create_token
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.runtime import DomainPolicy, HostGates, MemoryGateBackend
from tests.unit.rareindex.api.api_helpers import make_app, seed

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

EXPECTED_FAMILIES = {
    "rareindex_database_up",
    "rareindex_runs",
    "rareindex_run_failures",
    "rareindex_runs_active",
    "rareindex_pages",
    "rareindex_records",
    "rareindex_dupes",
    "rareindex_engine_attempts",
    "rareindex_blocked",
    "rareindex_engine_credits",
    "rareindex_breaker_state",
    "rareindex_budget_left",
    "rareindex_queue_lag_seconds",
    "rareindex_normalized_pending",
    "rareindex_normalized_rows_5m",
    "rareindex_resolved_rows_5m",
    "rareindex_connector_status",
    "rareindex_connector_health",
    "rareindex_dead_letters",
}


def scrape(client: TestClient) -> tuple[set[str], Samples, dict[str, str]]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    families = list(text_string_to_metric_families(response.text))
    samples: Samples = {
        (s.name, frozenset(s.labels.items())): s.value for f in families for s in f.samples
    }
    types = {f.name: f.type for f in families}
    return {f.name for f in families}, samples, types


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name, frozenset(labels.items())]


async def _open_breaker(gates: HostGates, host: str) -> None:
    policy = DomainPolicy(circuit_failures=1, circuit_cooldown_ms=600_000, budget_per_minute=60)
    with pytest.raises(TransientFetchError):
        async with gates.slot(host, policy):
            raise TransientFetchError("timeout", url=f"https://{host}/", host=host)


def test_metrics_parse_with_the_expected_families_and_values(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    seed(sqlite_engine)
    gates = HostGates(MemoryGateBackend())
    asyncio.run(_open_breaker(gates, "market.fake.test"))
    client = TestClient(make_app(sqlite_engine, tmp_path, gates=gates))
    names, samples, types = scrape(client)
    assert names >= EXPECTED_FAMILIES
    assert types["rareindex_runs"] == "counter" and types["rareindex_breaker_state"] == "gauge"

    assert value(samples, "rareindex_database_up") == 1
    assert value(samples, "rareindex_runs_total", connector="card-market", outcome="complete") == 1
    assert value(samples, "rareindex_runs_total", connector="card-market", outcome="failed") == 1
    assert (
        value(samples, "rareindex_run_failures_total", connector="card-market", reason="blocked")
        == 1
    )
    assert value(samples, "rareindex_runs_active", connector="cards-shop", status="queued") == 1
    assert value(samples, "rareindex_records_total", connector="card-market") == 10
    assert value(samples, "rareindex_dupes_total", connector="card-market") == 3
    assert value(samples, "rareindex_pages_total", connector="card-market") == 4

    def attempts(engine: str, status: str) -> float:
        return value(
            samples,
            "rareindex_engine_attempts_total",
            connector="card-market",
            engine=engine,
            status=status,
        )

    # api: 6 + 4 attempts = 4x200 + 1x404 + 3 blocked + 1 circuit_open + 1 transport error
    assert [attempts("api", s) for s in ("200", "404", "blocked", "circuit_open", "error")] == [
        4,
        1,
        3,
        1,
        1,
    ]
    assert attempts("scrapfly", "200") == 2 and attempts("scrapfly", "error") == 0
    assert value(samples, "rareindex_blocked_total", connector="card-market", engine="api") == 3
    assert (
        value(samples, "rareindex_engine_credits_total", connector="card-market", engine="scrapfly")
        == 13.5
    )

    assert value(samples, "rareindex_breaker_state", host="market.fake.test") == 2
    assert value(samples, "rareindex_breaker_state", host="cards-shop.fake.test") == 0
    assert value(samples, "rareindex_budget_left", host="market.fake.test", window="minute") == 5999
    assert value(samples, "rareindex_budget_left", host="cards-shop.fake.test", window="day") > 0

    assert 590 <= value(samples, "rareindex_queue_lag_seconds") <= 700  # queued 10 minutes ago
    assert value(samples, "rareindex_normalized_pending") == 2
    assert value(samples, "rareindex_normalized_rows_5m", connector="cards-shop") == 2
    assert value(samples, "rareindex_normalized_rows_5m", connector="card-market") == 1
    assert value(samples, "rareindex_resolved_rows_5m", connector="card-market") == 1
    assert ("rareindex_resolved_rows_5m", frozenset({("connector", "cards-shop")})) not in samples
    assert (
        value(samples, "rareindex_connector_status", connector="auction-house", status="paused")
        == 1
    )
    assert (
        value(samples, "rareindex_connector_health", connector="card-market", status="BROKEN") == 1
    )
    assert value(samples, "rareindex_dead_letters") == 1


def test_metrics_are_read_from_the_database_at_each_scrape(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    seed(sqlite_engine)
    # two API processes on one database report the same counters, whoever wrote the runs
    first, second = (TestClient(make_app(sqlite_engine, tmp_path)) for _ in range(2))
    before = value(scrape(first)[1], "rareindex_records_total", connector="card-market")
    with sqlite_engine.begin() as conn:
        conn.execute(
            insert(connector_runs).values(
                id="run_9",
                connector_id="card-market",
                mode="incremental",
                status="succeeded",
                outcome="complete",
                records=7,
                engine_stats={"api": {"attempts": 1, "statuses": {"200": 1}}},
            )
        )
    for client in (first, second):
        samples = scrape(client)[1]
        assert value(samples, "rareindex_records_total", connector="card-market") == before + 7
        assert (
            value(samples, "rareindex_runs_total", connector="card-market", outcome="complete") == 2
        )


def test_a_database_outage_is_reported_not_raised(tmp_path: Path) -> None:
    from rareindex.storage import make_engine

    empty = make_engine(f"sqlite:///{tmp_path / 'never-migrated.db'}")
    client = TestClient(make_app(empty, tmp_path))
    names, samples, _ = scrape(client)
    assert value(samples, "rareindex_database_up") == 0
    assert "rareindex_runs" not in names


# --- label hygiene ----------------------------------------------------------------------------

CERT_NUMBER = "97038834"
UNSAFE_LABEL = (
    re.compile(r"://|^/|/"),  # a URL or a path
    re.compile(r"\d{5,}"),  # a cert-number-like digit run
    re.compile(r"rit_|[0-9a-f]{16,}|[A-Za-z0-9_-]{32,}"),  # a token, a token id, a hash
)


def test_no_label_value_looks_like_a_url_a_cert_number_or_a_token(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    seed(sqlite_engine)
    token = create_token(sqlite_engine, "label-check").token
    with sqlite_engine.begin() as conn:  # data full of things that must not become labels
        conn.execute(
            insert(connector_runs).values(
                id="run_evil",
                connector_id="market-news",
                mode="incremental",
                status="failed",
                outcome="failed",
                failure_reason="transient",
                engine_stats={
                    f"https://market.fake.test/itm/{CERT_NUMBER}": {"attempts": 1},
                    "api": {"attempts": 2, "statuses": {CERT_NUMBER: 1, token: 1}},
                },
            )
        )
        conn.execute(
            insert(raw_records).values(
                id="raw_evil",
                fetched_at=datetime.now(UTC),
                connector_id="market-news",
                external_id=CERT_NUMBER,
                url=f"https://news.market.fake.test/cert/{CERT_NUMBER}?token={token}",
                payload={"title": f"PSA 10 #{CERT_NUMBER}"},
                engine="api",
                content_hash="e" * 64,
                connector_version="1",
                parser_version="1",
            )
        )
        conn.execute(insert(certificates).values(id="crt_1", grader="PSA", cert_number=CERT_NUMBER))
        conn.execute(
            insert(certificate_sightings).values(
                id="sig_1",
                certificate_id="crt_1",
                cert_number=CERT_NUMBER,
                grader="PSA",
                attribution="attributed",
                source_id="market",
                listing_external_id=f"1{CERT_NUMBER}",
                url=f"https://market.fake.test/itm/1{CERT_NUMBER}",
                seen_at=datetime.now(UTC),
                title_hash="0" * 64,
            )
        )
    client = TestClient(make_app(sqlite_engine, tmp_path))
    names, samples, _ = scrape(client)
    assert "rareindex_engine_attempts" in names
    values = {v for _, labels in samples for _, v in labels}
    assert values  # the check below looks at something
    offenders = sorted(v for v in values if any(p.search(v) for p in UNSAFE_LABEL))
    assert offenders == []
    assert "other" in values  # the URL-named engine and the odd statuses were folded


@pytest.mark.parametrize(
    "bad",
    [
        "https://market.fake.test/itm/1",
        "/cert/97038834",
        "97038834",
        "PSA 12345678",
        "rit_0123456789abcdef_" + "A" * 43,
        "tok_0123456789abcdef",
        "e3b0c44298fc1c149afbf4c8996fb924",
        "AbC123xyzAbC123xyzAbC1",
        "someone@example.com",
        "",
    ],
)
def test_safe_label_folds_unsafe_values(bad: str) -> None:
    assert safe_label(bad) == "other"


@pytest.mark.parametrize(
    "good", ["card-market", "market.fake.test", "complete", "circuit_open", "BROKEN", "404"]
)
def test_safe_label_keeps_safe_values(good: str) -> None:
    assert safe_label(good) == good


class _DownBackend(MemoryGateBackend):
    """Shared gates whose store is gone (Redis stopped): every read raises."""

    async def snapshot(self, host: str):  # type: ignore[no-untyped-def]
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6390. Connection refused.")


def test_a_gate_or_broker_outage_is_a_gauge_at_zero_not_a_500(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rareindex.api import metrics

    async def refused() -> None:
        raise ConnectionError("Connection refused")

    monkeypatch.setattr(metrics, "broker_check", lambda url: refused)
    seed(sqlite_engine)
    gates = HostGates(_DownBackend())
    url = "redis://:s3cret@127.0.0.1:6390/0"
    fleet = {"broker_url": url, "database_url": "postgresql+psycopg://postgres@db.invalid/x"}
    client = TestClient(make_app(sqlite_engine, tmp_path, gates=gates, **fleet))  # engine: SQLite
    names, samples, _ = scrape(client)
    assert value(samples, "rareindex_gates_up") == 0
    assert value(samples, "rareindex_broker_up") == 0
    assert value(samples, "rareindex_database_up") == 1 and "rareindex_runs" in names
    assert not [k for k in samples if k[0] == "rareindex_breaker_state"]  # hosts it cannot see


def test_reachable_dependencies_are_gauges_at_one(sqlite_engine: Engine, tmp_path: Path) -> None:
    seed(sqlite_engine)
    _, samples, _ = scrape(TestClient(make_app(sqlite_engine, tmp_path)))
    assert value(samples, "rareindex_gates_up") == 1
    assert ("rareindex_broker_up", frozenset()) not in samples  # embedded: no broker to ping
