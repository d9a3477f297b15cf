"""A small, realistic index for the admin API's tests: three sources, four connectors, assets in
three categories, sales inside and outside the 30-day window (one unresolved), listings, price
observations, raw captures, runs with engine stats, costs, normalized rows, health snapshots and a
dead letter. Plain inserts through the schema, so the tests do not depend on the pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from sqlalchemy import Engine, insert

from rareindex.api import Requeue, create_app
from rareindex.settings import Settings
from rareindex.storage import upgrade
from rareindex.storage.schema import (
    asset_variants,
    assets,
    connector_health,
    connector_runs,
    connectors,
    costs,
    dead_letters,
    listings,
    normalized_records,
    price_observations,
    raw_records,
    sales,
    sources,
)
from rareindex.storage.tokens import create_token
from rareindex_connectors.runtime import HostGates, MemoryGateBackend

MARKET_PATTERN = r"^https?://market\.fake\.test(?::\d+)?/itm/(\d{6,20})/?(?:[?#].*)?$"
SHOP_PATTERN = r"^http://cards\-shop\.fake\.test/products/"


def settings_for(tmp_path: Path, **overrides: Any) -> Settings:
    """Settings that ignore the environment's RI_* variables."""
    values: dict[str, Any] = {
        "data_dir": tmp_path,
        "database_url": None,
        "broker_url": None,
        "gates_url": None,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)


def make_app(
    engine: Engine,
    tmp_path: Path,
    *,
    requeue: Requeue | None = None,
    gates: HostGates | None = None,
    **settings: Any,
) -> FastAPI:
    return create_app(
        settings_for(tmp_path, **settings),
        engine=engine,
        requeue=requeue,
        gates=gates or HostGates(MemoryGateBackend()),
    )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass(frozen=True, slots=True)
class Dataset:
    now: datetime
    admin_token: str
    read_token: str


def _meta(
    slug: str, source: str, categories: list[str], patterns: list[str], engines: list[str]
) -> dict[str, Any]:
    return {
        "id": slug,
        "source": source,
        "engines": engines,
        "categories": categories,
        "geography": ["global"],
        "capabilities": ["sale"],
        "refresh_class": "ACTIVE",
        "requires": [],
        "url_patterns": patterns,
    }


def _sale(
    sale_id: str,
    source: str,
    connector: str,
    when: datetime,
    asset: str | None,
    variant: str | None,
) -> dict[str, Any]:
    return {
        "id": sale_id,
        "sale_date": when,
        "source_id": source,
        "connector_id": connector,
        "asset_id": asset,
        "variant_id": variant,
        "external_id": sale_id,
        "title": f"title of {sale_id}",
        "sale_type": "fixed_price",
        "price_basis": "sold_price",
        "price": Decimal("10.00"),
        "currency": "USD",
    }


def _raw(raw_id: str, connector: str, url: str, when: datetime) -> dict[str, Any]:
    return {
        "id": raw_id,
        "fetched_at": when,
        "connector_id": connector,
        "external_id": raw_id,
        "url": url,
        "payload": {"title": "x"},
        "engine": "api",
        "content_hash": raw_id.ljust(64, "0"),
        "connector_version": "1",
        "parser_version": "1",
    }


def _normalized(
    nrm_id: str, connector: str, status: str, created: datetime, resolved: datetime | None
) -> dict[str, Any]:
    return {
        "id": nrm_id,
        "raw_id": f"raw_for_{nrm_id}",
        "connector_id": connector,
        "parser_version": "1",
        "ordinal": 0,
        "kind": "sale",
        "record": {"kind": "sale"},
        "status": status,
        "created_at": created,
        "resolved_at": resolved,
    }


CARD_MARKET_STATS = [
    {  # a good run: 6 attempts with api (3x200, 1x404, 1 blocked, 1 transport error), 2 scrapfly
        "api": {
            "attempts": 6,
            "success": 3,
            "credits": 0.0,
            "ms": 900,
            "statuses": {"200": 3, "404": 1},
            "blocked": 1,
            "circuit_open": 0,
            "skipped": 0,
        },
        "scrapfly": {
            "attempts": 2,
            "success": 2,
            "credits": 3.5,
            "ms": 4000,
            "statuses": {"200": 2},
            "blocked": 0,
            "circuit_open": 0,
            "skipped": 0,
        },
    },
    {  # a blocked run: 4 api attempts (1x200, 2 blocked, 1 refused by the open breaker)
        "api": {
            "attempts": 4,
            "success": 1,
            "credits": 0.0,
            "ms": 300,
            "statuses": {"200": 1},
            "blocked": 2,
            "circuit_open": 1,
            "skipped": 0,
        }
    },
]


def _insert(conn: Any, table: Any, rows: Any) -> None:
    """Row by row: the rows leave different columns to their defaults."""
    for row in rows if isinstance(rows, list) else [rows]:
        conn.execute(insert(table).values(row))


def seed(engine: Engine, *, now: datetime | None = None) -> Dataset:
    """Migrate ``engine`` and fill it with the dataset; returns the tokens made for it."""
    upgrade(engine)
    now = now or datetime.now(UTC)

    def days(n: int) -> datetime:
        return now - timedelta(days=n)

    month_start = date(now.year, now.month, 1)
    with engine.begin() as conn:
        _insert(
            conn,
            sources,
            [
                {"id": "cards-shop", "name": "Cards Shop"},
                {"id": "market", "name": "Market"},
                {"id": "auction-house", "name": "Fake Auctions"},
            ],
        )
        base = {"version": "1", "parser_version": "1", "refresh_class": "ACTIVE"}
        _insert(
            conn,
            connectors,
            [
                {
                    **base,
                    "id": "cards-shop",
                    "source_id": "cards-shop",
                    "meta": _meta(
                        "cards-shop",
                        "Cards Shop",
                        ["tcg_card", "sports_card"],
                        [SHOP_PATTERN],
                        ["api"],
                    ),
                },
                {
                    **base,
                    "id": "card-market",
                    "source_id": "market",
                    "meta": _meta(
                        "card-market", "Market", ["tcg_card"], [MARKET_PATTERN], ["api", "scrapfly"]
                    ),
                },
                {
                    **base,
                    "id": "market-news",
                    "source_id": "market",
                    "meta": _meta("market-news", "Market", ["tcg_card"], [], ["api"]),
                },
                {
                    **base,
                    "id": "auction-house",
                    "source_id": "auction-house",
                    "status": "paused",
                    "meta": _meta("auction-house", "Fake Auctions", ["coin"], [], ["api"]),
                },
            ],
        )
        _insert(
            conn,
            connector_health,
            [
                {
                    "connector_id": "cards-shop",
                    "status": "UP",
                    "checked_at": now - timedelta(minutes=10),
                    "success_rate": 1.0,
                    "details": {"reasons": []},
                },
                {
                    "connector_id": "card-market",
                    "status": "BROKEN",
                    "checked_at": now - timedelta(minutes=10),
                    "success_rate": 0.5,
                    "blocked_rate": 0.3,
                    "breaker_state": "open",
                    "details": {"reasons": ["blocked_rate 0.30 > 0.20"]},
                },
                {
                    "connector_id": "market-news",
                    "status": "DEGRADED",
                    "checked_at": now - timedelta(minutes=10),
                    "details": {"reasons": ["records_per_run low"]},
                },
            ],
        )
        _insert(
            conn,
            assets,
            [
                {"id": "ast_a1", "asset_key": "k1", "category": "tcg_card", "title": "Charizard"},
                {"id": "ast_a2", "asset_key": "k2", "category": "tcg_card", "title": "Pikachu"},
                {"id": "ast_a3", "asset_key": "k3", "category": "sports_card", "title": "Jordan"},
                {"id": "ast_a4", "asset_key": "k4", "category": "coin", "title": "Morgan $1"},
            ],
        )
        _insert(
            conn,
            asset_variants,
            [
                {"id": "var_v1", "asset_id": "ast_a1", "variant_key": "k1|PSA|10"},
                {"id": "var_v2", "asset_id": "ast_a1", "variant_key": "k1|raw"},
                {"id": "var_v3", "asset_id": "ast_a2", "variant_key": "k2|BGS|9.5"},
                {"id": "var_v4", "asset_id": "ast_a3", "variant_key": "k3|PSA|9"},
                {"id": "var_v5", "asset_id": "ast_a4", "variant_key": "k4|NGC|MS65"},
            ],
        )
        _insert(
            conn,
            sales,
            [
                _sale("sal_s1", "cards-shop", "cards-shop", days(5), "ast_a1", "var_v1"),
                _sale("sal_s2", "cards-shop", "cards-shop", days(40), "ast_a1", "var_v2"),
                _sale("sal_s3", "cards-shop", "cards-shop", days(2), "ast_a3", "var_v4"),
                _sale("sal_s4", "cards-shop", "cards-shop", days(1), None, None),
                _sale("sal_s5", "market", "card-market", days(10), "ast_a1", "var_v1"),
                _sale("sal_s6", "market", "card-market", days(31), "ast_a2", "var_v3"),
                _sale("sal_s7", "market", "card-market", days(29), "ast_a2", "var_v3"),
                _sale("sal_s8", "auction-house", "auction-house", days(60), "ast_a4", "var_v5"),
            ],
        )
        _insert(
            conn,
            listings,
            dict(
                id="lst_l1",
                source_id="cards-shop",
                connector_id="cards-shop",
                asset_id="ast_a2",
                variant_id="var_v3",
                external_id="l1",
                title="Pikachu BGS 9.5",
                price=Decimal("99.00"),
                currency="USD",
                first_seen_at=days(3),
                last_seen_at=days(1),
            ),
        )
        observation = {"kind": "ask", "price": Decimal("5"), "currency": "USD"}
        _insert(
            conn,
            price_observations,
            [
                {
                    **observation,
                    "id": "obs_o1",
                    "observation_date": days(3),
                    "source_id": "market",
                    "connector_id": "card-market",
                    "asset_id": "ast_a1",
                    "variant_id": "var_v1",
                    "source_item_id": "o1",
                },
                {
                    **observation,
                    "id": "obs_o2",
                    "observation_date": days(4),
                    "source_id": "cards-shop",
                    "connector_id": "cards-shop",
                    "source_item_id": "o2",
                },
            ],
        )
        _insert(
            conn,
            raw_records,
            [
                _raw("raw_r1", "cards-shop", "http://cards-shop.fake.test/products/a", days(1)),
                _raw("raw_r2", "cards-shop", "http://cards-shop.fake.test/products/b", days(2)),
                _raw("raw_r3", "card-market", "https://market.fake.test/itm/123456", days(6)),
                _raw("raw_r4", "market-news", "https://news.market.fake.test/feed.xml", days(3)),
            ],
        )
        run = {"mode": "incremental", "lease_token": 1}
        _insert(
            conn,
            connector_runs,
            [
                {
                    **run,
                    "id": "run_1",
                    "connector_id": "card-market",
                    "status": "succeeded",
                    "outcome": "complete",
                    "started_at": days(2),
                    "finished_at": days(2) + timedelta(minutes=3),
                    "created_at": days(2),
                    "pages": 3,
                    "records": 10,
                    "dupes": 2,
                    "engine_stats": CARD_MARKET_STATS[0],
                },
                {
                    **run,
                    "id": "run_2",
                    "connector_id": "card-market",
                    "status": "failed",
                    "outcome": "failed",
                    "failure_reason": "blocked",
                    "started_at": days(1),
                    "finished_at": days(1) + timedelta(minutes=1),
                    "created_at": days(1),
                    "pages": 1,
                    "records": 0,
                    "dupes": 1,
                    "engine_stats": CARD_MARKET_STATS[1],
                },
                {
                    **run,
                    "id": "run_3",
                    "connector_id": "cards-shop",
                    "status": "queued",
                    "queued_at": now - timedelta(minutes=10),
                    "created_at": now - timedelta(minutes=10),
                },
            ],
        )
        _insert(
            conn,
            costs,
            [
                {
                    "connector_id": "card-market",
                    "day": month_start,
                    "engine": "scrapfly",
                    "credits": Decimal("3.5"),
                    "requests": 2,
                },
                {
                    "connector_id": "card-market",
                    "day": month_start - timedelta(days=1),  # last month: not this month's cost
                    "engine": "scrapfly",
                    "credits": Decimal("10"),
                    "requests": 5,
                },
            ],
        )
        _insert(
            conn,
            normalized_records,
            [
                _normalized("nrm_1", "cards-shop", "pending", now - timedelta(minutes=1), None),
                _normalized("nrm_2", "cards-shop", "pending", now - timedelta(minutes=2), None),
                _normalized(
                    "nrm_3",
                    "card-market",
                    "matched",
                    now - timedelta(minutes=2),
                    now - timedelta(minutes=1),
                ),
                _normalized(
                    "nrm_4",
                    "card-market",
                    "matched",
                    now - timedelta(hours=1),
                    now - timedelta(hours=1),
                ),
            ],
        )
        _insert(
            conn,
            dead_letters,
            dict(
                id="msg-1",
                queue="crawl",
                actor="crawl_run",
                args=["run_2"],
                kwargs={},
                retries=5,
                error="DatabaseError: gone",
                failed_at=days(1),
            ),
        )
    admin = create_token(engine, "ops").token
    read = create_token(engine, "grafana", role="read").token
    return Dataset(now=now, admin_token=admin, read_token=read)
