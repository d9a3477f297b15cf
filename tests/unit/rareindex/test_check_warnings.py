"""``check_connector`` reports what a connector logs as a warning while it fetches: a WooCommerce
store whose config currency disagrees with its feed is one warning, and the feed's currency wins."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rareindex import check
from rareindex.settings import Settings
from rareindex_adapters.stores import WooCommerceStoreConnector
from rareindex_connectors._context import FetchResult
from rareindex_connectors.records import Money
from rareindex_connectors.runtime import RobotsRules

FIXTURE = (
    Path(__file__).resolve().parents[3]
    / "fixtures"
    / "adapters"
    / "woocommerce"
    / "store_currency_eur.json"
)


class _Stack:
    """The fetch stack of a check, answering from the fixture instead of the network."""

    def __init__(self) -> None:
        async def fetch(url: str, **kwargs: Any) -> FetchResult:
            body = FIXTURE.read_bytes() if kwargs["params"]["page"] == 1 else b"[]"
            return FetchResult(url, 200, body, "api")

        async def robots_rules(url: str, **kwargs: Any) -> RobotsRules:
            return RobotsRules.allow_all()

        self.router = SimpleNamespace(
            fetcher=lambda engines, **kwargs: fetch, robots_rules=robots_rules, stats={}
        )

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(("configured", "warned"), [("USD", 1), ("EUR", 0)])
def test_check_reports_a_store_currency_disagreement(
    monkeypatch: pytest.MonkeyPatch, configured: str, warned: int
) -> None:
    monkeypatch.setattr(check, "build_fetch_stack", lambda settings: _Stack())
    connector = WooCommerceStoreConnector.from_config(
        {
            "source": "Münzhaus",
            "base_url": "https://muenzhaus.example",
            "currency": configured,
            "categories": ["coin"],
        },
        slug="muenzhaus",
    )

    report = asyncio.run(check.check_connector(connector, Settings()))

    assert report.ok and not report.failures
    assert [r.price for r in report.normalized] == [  # type: ignore[attr-defined]
        Money(amount="529.00", currency="EUR"),
        Money(amount="1250.50", currency="EUR"),
    ]
    assert len(report.warnings) == warned
    if warned:
        assert report.warnings[0].startswith("store.currency_disagreed ")
        assert "configured=USD feed=EUR kept=EUR" in report.warnings[0]
