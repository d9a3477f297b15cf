"""``/api/admin/*``: connectors, coverage (checked against SQL written here), pause / resume and
dead letters, on a migrated SQLite file."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select, text, update

from rareindex.storage.dead_letters import DeadLetter
from rareindex.storage.schema import connectors, dead_letters
from rareindex_connectors.errors import TransientFetchError
from rareindex_connectors.runtime import DomainPolicy, HostGates, MemoryGateBackend
from tests.unit.rareindex.api.api_helpers import Dataset, bearer, make_app, seed

FLEET: dict[str, Any] = {
    "database_url": "postgresql+psycopg://unused@127.0.0.1/unused",  # the engine is injected
    "broker_url": "redis://127.0.0.1:6379/0",  # never contacted: gates and requeue are injected
}


def _client(engine: Engine, tmp_path: Path, **kwargs: Any) -> tuple[TestClient, Dataset]:
    data = seed(engine)
    return TestClient(make_app(engine, tmp_path, **kwargs)), data


# --- connectors -------------------------------------------------------------------------------


async def _trip_breaker(gates: HostGates, host: str, policy: DomainPolicy) -> None:
    for _ in range(policy.circuit_failures):
        with pytest.raises(TransientFetchError):
            async with gates.slot(host, policy):
                raise TransientFetchError("503", url=f"https://{host}/", host=host)


def test_connectors_show_state_last_run_health_hosts_and_cost(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    gates = HostGates(MemoryGateBackend())
    policy = DomainPolicy(circuit_failures=2, circuit_cooldown_ms=600_000, budget_per_minute=60)
    asyncio.run(_trip_breaker(gates, "market.fake.test", policy))
    client, data = _client(sqlite_engine, tmp_path, gates=gates)
    body = client.get("/api/admin/connectors", headers=bearer(data.read_token)).json()
    assert body["gates"] == "process"
    by_id = {c["id"]: c for c in body["connectors"]}
    assert sorted(by_id) == ["auction-house", "card-market", "cards-shop", "market-news"]

    market = by_id["card-market"]
    assert market["source_id"] == "market" and market["source_name"] == "Market"
    assert market["status"] == "active" and market["refresh_class"] == "ACTIVE"
    assert market["engines"] == ["api", "scrapfly"]
    assert market["last_run"] == {
        "id": "run_2",
        "mode": "incremental",
        "status": "failed",
        "outcome": "failed",
        "failure_reason": "blocked",
        "queued_at": None,
        "started_at": market["last_run"]["started_at"],
        "finished_at": market["last_run"]["finished_at"],
        "pages": 1,
        "records": 0,
        "dupes": 1,
    }
    assert market["health"]["status"] == "BROKEN"
    assert market["health"]["details"] == {"reasons": ["blocked_rate 0.30 > 0.20"]}
    assert market["cost_this_month"] == {
        "month": f"{data.now:%Y-%m}",
        "credits": "3.5",  # last month's 10 credits are not this month's
        "by_engine": {"scrapfly": "3.5"},
    }
    [host] = market["hosts"]  # from the URL pattern, without the port group
    assert host["host"] == "market.fake.test"
    assert host["breaker"] == "open"  # tripped above, in the gates the app reads
    assert host["failures"] == 2 and host["reopens_at"] is not None
    assert host["budget"]["budget_per_minute"] == 6000  # connectors/domains.d/fake-web.json
    assert host["budget"]["per_minute"] == 6000 - 2  # two requests went out this minute

    shop = by_id["cards-shop"]
    assert shop["last_run"]["status"] == "queued"
    assert shop["health"]["status"] == "UP"
    assert [h["host"] for h in shop["hosts"]] == ["cards-shop.fake.test"]
    assert shop["hosts"][0]["breaker"] == "closed"
    assert shop["cost_this_month"]["credits"] == "0"
    # no URL pattern: the hosts of its recent raw records
    assert [h["host"] for h in by_id["market-news"]["hosts"]] == ["news.market.fake.test"]
    assert by_id["auction-house"]["status"] == "paused"
    assert by_id["auction-house"]["health"] is None
    assert by_id["auction-house"]["last_run"] is None


# --- coverage ---------------------------------------------------------------------------------

OBSERVED = """
SELECT a.category, o.source_id, COUNT(DISTINCT o.asset_id), COUNT(DISTINCT o.variant_id)
  FROM (SELECT source_id, asset_id, variant_id FROM sales
        UNION ALL SELECT source_id, asset_id, variant_id FROM listings
        UNION ALL SELECT source_id, asset_id, variant_id FROM price_observations
        UNION ALL SELECT source_id, asset_id, variant_id FROM auction_lots) AS o
  JOIN assets AS a ON a.id = o.asset_id
 GROUP BY a.category, o.source_id
"""
RECENT_SALES = """
SELECT a.category, s.source_id, COUNT(*)
  FROM sales AS s LEFT JOIN assets AS a ON a.id = s.asset_id
 WHERE s.sale_date >= :since
 GROUP BY a.category, s.source_id
"""
HEALTH = """
SELECT c.source_id, h.status FROM connectors AS c
  LEFT JOIN connector_health AS h ON h.connector_id = c.id
"""


def test_coverage_matches_counts_computed_with_sql(sqlite_engine: Engine, tmp_path: Path) -> None:
    client, data = _client(sqlite_engine, tmp_path)
    body = client.get("/api/admin/coverage", headers=bearer(data.read_token)).json()
    assert body["window_days"] == 30
    rows = {(r["category"], r["source_id"]): r for r in body["rows"]}
    since = (data.now - timedelta(days=30)).replace(tzinfo=None)
    with sqlite_engine.connect() as conn:
        observed = {(c, s): (a, v) for c, s, a, v in conn.execute(text(OBSERVED))}
        recent = {(c, s): n for c, s, n in conn.execute(text(RECENT_SALES), {"since": since})}
        health = conn.execute(text(HEALTH)).all()
    assert {k: (r["assets"], r["variants"]) for k, r in rows.items() if r["assets"]} == observed
    assert {k: r["sales_30d"] for k, r in rows.items() if r["sales_30d"]} == recent
    for (_, source), row in rows.items():
        statuses = [status for s, status in health if s == source]
        assert row["connectors_up"] == sum(s in ("UP", "DEGRADED") for s in statuses)
        assert row["connectors_down"] == sum(
            s in ("BROKEN", "DISABLED", "MAINTENANCE") for s in statuses
        )
        assert row["connectors_unchecked"] == statuses.count(None)

    # and the same numbers, worked out by hand from the dataset
    assert (
        rows["tcg_card", "cards-shop"]["assets"],
        rows["tcg_card", "cards-shop"]["variants"],
    ) == (2, 3)
    assert rows["tcg_card", "cards-shop"]["sales_30d"] == 1  # the 40-day-old sale is out
    assert rows["tcg_card", "market"]["sales_30d"] == 2  # 10 and 29 days, not 31
    assert rows["sports_card", "cards-shop"]["sales_30d"] == 1
    assert rows[None, "cards-shop"]["sales_30d"] == 1  # unresolved sale, no asset
    assert rows[None, "cards-shop"]["assets"] == 0
    assert rows["coin", "auction-house"]["assets"] == 1
    assert rows["coin", "auction-house"]["sales_30d"] == 0
    assert (
        rows["tcg_card", "market"]["connectors_up"],
        rows["tcg_card", "market"]["connectors_down"],
    ) == (1, 1)
    assert rows["coin", "auction-house"]["connectors_unchecked"] == 1
    assert rows["tcg_card", "market"]["newest_raw_fetch_at"] is not None
    assert rows["tcg_card", "market"]["newest_observation_at"] is not None
    assert rows["coin", "auction-house"]["newest_raw_fetch_at"] is None
    assert set(rows) == {
        ("tcg_card", "cards-shop"),
        ("sports_card", "cards-shop"),
        (None, "cards-shop"),
        ("tcg_card", "market"),
        ("coin", "auction-house"),
    }


# --- pause / resume ---------------------------------------------------------------------------


def _status(engine: Engine, connector_id: str) -> str:
    with engine.connect() as conn:
        return str(
            conn.execute(
                select(connectors.c.status).where(connectors.c.id == connector_id)
            ).scalar_one()
        )


def test_pause_and_resume_change_the_database(sqlite_engine: Engine, tmp_path: Path) -> None:
    client, data = _client(sqlite_engine, tmp_path)
    headers = bearer(data.admin_token)
    paused = client.post("/api/admin/connectors/cards-shop/pause", headers=headers)
    assert paused.status_code == 200
    assert paused.json() == {"id": "cards-shop", "previous_status": "active", "status": "paused"}
    assert _status(sqlite_engine, "cards-shop") == "paused"
    assert (
        client.post("/api/admin/connectors/cards-shop/pause", headers=headers).json()[
            "previous_status"
        ]
        == "paused"
    )  # idempotent
    resumed = client.post("/api/admin/connectors/cards-shop/resume", headers=headers)
    assert resumed.json()["status"] == "active"
    assert _status(sqlite_engine, "cards-shop") == "active"

    unknown = client.post("/api/admin/connectors/ghost/pause", headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_connector"
    with sqlite_engine.begin() as conn:
        conn.execute(
            update(connectors).where(connectors.c.id == "card-market").values(status="disabled")
        )
    conflict = client.post("/api/admin/connectors/card-market/resume", headers=headers)
    assert conflict.status_code == 409 and conflict.json()["error"] == "status_conflict"
    assert _status(sqlite_engine, "card-market") == "disabled"


# --- dead letters -----------------------------------------------------------------------------


def _requeued_at(engine: Engine) -> object:
    with engine.connect() as conn:
        return conn.execute(select(dead_letters.c.requeued_at)).scalar_one()


def test_dead_letters_are_listed(sqlite_engine: Engine, tmp_path: Path) -> None:
    client, data = _client(sqlite_engine, tmp_path)
    [letter] = client.get("/api/admin/deadletters", headers=bearer(data.read_token)).json()[
        "dead_letters"
    ]
    assert letter["id"] == "msg-1" and letter["actor"] == "crawl_run"
    assert letter["args"] == ["run_2"] and letter["kwargs"] == {}
    assert letter["requeued_at"] is None


def test_requeue_sends_through_the_injected_hook_once(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    sent: list[DeadLetter] = []
    client, data = _client(sqlite_engine, tmp_path, requeue=sent.append, **FLEET)
    headers = bearer(data.admin_token)
    answer = client.post("/api/admin/deadletters/msg-1/requeue", headers=headers)
    assert answer.status_code == 200, answer.json()
    assert answer.json() == {
        "id": "msg-1",
        "queue": "crawl",
        "actor": "crawl_run",
        "requeued": True,
    }
    assert [(d.id, d.args) for d in sent] == [("msg-1", ["run_2"])]
    assert _requeued_at(sqlite_engine) is not None
    again = client.post("/api/admin/deadletters/msg-1/requeue", headers=headers)
    assert again.status_code == 409 and again.json()["error"] == "already_requeued"
    assert len(sent) == 1
    assert client.get("/api/admin/deadletters", headers=headers).json()["dead_letters"] == []
    missing = client.post("/api/admin/deadletters/msg-404/requeue", headers=headers)
    assert missing.status_code == 404


def test_a_failed_send_keeps_the_dead_letter(sqlite_engine: Engine, tmp_path: Path) -> None:
    def refuse(letter: DeadLetter) -> None:
        raise ConnectionError("broker down")

    client, data = _client(sqlite_engine, tmp_path, requeue=refuse, **FLEET)
    answer = client.post("/api/admin/deadletters/msg-1/requeue", headers=bearer(data.admin_token))
    assert answer.status_code == 502
    assert answer.json() == {
        "error": "broker_error",
        "detail": "the broker refused the message: broker down",
    }
    assert _requeued_at(sqlite_engine) is None


def test_requeue_without_a_broker_or_a_hook_says_what_to_do(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    client, data = _client(sqlite_engine, tmp_path, requeue=lambda letter: None)
    embedded = client.post("/api/admin/deadletters/msg-1/requeue", headers=bearer(data.admin_token))
    assert embedded.status_code == 409 and embedded.json()["error"] == "no_broker"
    fleet = TestClient(make_app(sqlite_engine, tmp_path, **FLEET))  # no hook injected
    answer = fleet.post("/api/admin/deadletters/msg-1/requeue", headers=bearer(data.admin_token))
    assert answer.status_code == 503
    assert answer.json()["error"] == "requeue_unavailable"
    assert "rareindex deadletters requeue" in answer.json()["detail"]
    assert _requeued_at(sqlite_engine) is None


def test_connectors_answer_when_the_shared_gates_are_down(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    from tests.unit.rareindex.api.test_api_metrics import _DownBackend

    client, data = _client(sqlite_engine, tmp_path, gates=HostGates(_DownBackend()))
    response = client.get("/api/admin/connectors", headers=bearer(data.read_token))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["gates"] == "unavailable"
    assert body["gates_error"].startswith("ConnectionError: Error 111")
    assert body["connectors"] and all(c["hosts"] == [] for c in body["connectors"])


def test_coverage_says_how_the_fx_rates_price_the_sales(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    client, data = _client(sqlite_engine, tmp_path, fx_stale_days=3)
    with sqlite_engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO fx_rates (rate_date, currency, per_usd, source) VALUES "
                "('2000-01-03', 'EUR', '1', 'ecb'), ('2000-01-03', 'CAD', '1', 'ecb'), "
                "('2000-01-03', 'GBP', '1', 'ecb'), ('2000-01-03', 'JPY', '1', 'ecb')"
            )
        )
        newest = conn.execute(text("SELECT date(max(sale_date)) FROM sales")).scalar_one()
        counted = conn.execute(text("SELECT currency, COUNT(*) FROM sales GROUP BY currency"))
        by_currency: dict[str, int] = {c: n for c, n in counted}
    fx = client.get("/api/admin/coverage", headers=bearer(data.read_token)).json()["fx"]
    assert fx["stale"] is True and fx["stale_days"] == 3
    assert fx["newest_rate_date"] == "2000-01-03" and fx["newest_sale_date"] == newest
    assert fx["lag_days"] == (date.fromisoformat(newest) - date(2000, 1, 3)).days
    # Every sale after 2000 converts at the rates of 3 January 2000: all of them stale.
    priced = sum(n for c, n in by_currency.items() if c in ("USD", "EUR", "CAD", "GBP", "JPY"))
    assert fx["converted_sales"] == fx["stale_sales"] == priced
    assert {(m["currency"], m["reason"]): m["sales"] for m in fx["missing"]} == {
        (c, "no_ecb_rate"): n
        for c, n in by_currency.items()
        if c not in ("USD", "EUR", "CAD", "GBP", "JPY")
    }
