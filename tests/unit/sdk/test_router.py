"""The router's choices, with scripted engines: escalation, skipping, accounting."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from rareindex_connectors import FetchResult, FieldScorer
from rareindex_connectors.errors import (
    Blocked,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    UnsafeURL,
)
from rareindex_connectors.runtime import CostEntry, PolicySet, Router
from rareindex_connectors.testing.fake_engine import FakeEngine

URL = "https://shop.example/products/1.json"


def ok(
    engine: str,
    body: bytes = b'{"title": "Charizard", "price": "10"}',
    credits: float = 0,
    status: int = 200,
) -> FetchResult:
    return FetchResult(
        url=URL,
        status=status,
        content=body,
        engine=engine,  # type: ignore[arg-type]
        credits=credits,
    )


def blocked(engine: str, credits: float = 0) -> Blocked:
    exc = Blocked("cloudflare challenge", url=URL, engine=engine, vendor="cloudflare")
    exc.credits = credits
    return exc


def run(router: Router, **kwargs: object) -> FetchResult:
    return asyncio.run(router.fetch(URL, **kwargs))  # type: ignore[arg-type]


ALL = ("api", "firecrawl", "scrapfly")


def test_a_challenge_escalates_through_the_engines_and_everything_is_accounted() -> None:
    api = FakeEngine("api", [blocked("api")])
    firecrawl = FakeEngine("firecrawl", [blocked("firecrawl", credits=1)], paid=True)
    scrapfly = FakeEngine("scrapfly", [ok("scrapfly", credits=6)], paid=True)
    ledger: list[CostEntry] = []
    router = Router(
        {"api": api, "firecrawl": firecrawl, "scrapfly": scrapfly},
        PolicySet.from_mapping({}),
        on_cost=ledger.append,
    )
    result = run(router, engines=ALL, expect="json")
    assert result.engine == "scrapfly"
    stats = {name: s.as_dict() for name, s in router.stats.items()}
    assert stats["api"]["blocked"] == 1 and stats["api"]["success"] == 0
    assert stats["firecrawl"]["blocked"] == 1 and stats["firecrawl"]["credits"] == 1
    assert stats["scrapfly"]["success"] == 1 and stats["scrapfly"]["statuses"] == {"200": 1}
    assert [(e.engine, e.credits) for e in ledger] == [("firecrawl", 1), ("scrapfly", 6)]


def test_a_missing_key_skips_the_engine_with_a_logged_reason() -> None:
    api = FakeEngine("api", [blocked("api")])
    scrapfly = FakeEngine(
        "scrapfly", [ok("scrapfly")], paid=True, unavailable="RI_SCRAPFLY_API_KEY is not set"
    )
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl", credits=1)], paid=True)
    router = Router(
        {"api": api, "scrapfly": scrapfly, "firecrawl": firecrawl}, PolicySet.from_mapping({})
    )
    with structlog.testing.capture_logs() as logs:
        result = run(router, engines=("api", "scrapfly", "firecrawl"))
    assert result.engine == "firecrawl" and scrapfly.calls == []
    skipped = [e for e in logs if e["event"] == "router.engine_skipped"]
    assert skipped == [
        {
            "event": "router.engine_skipped",
            "engine": "scrapfly",
            "host": "shop.example",
            "reason": "RI_SCRAPFLY_API_KEY is not set",
            "log_level": "info",
        }
    ]


def test_a_spent_credit_budget_skips_the_paid_engine() -> None:
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl", credits=5)], paid=True)
    router = Router(
        {"api": FakeEngine("api", [blocked("api")]), "firecrawl": firecrawl},
        PolicySet.from_mapping({}),
        credit_budget={"firecrawl": 5},
    )
    run(router, engines=("api", "firecrawl"))
    assert router.credits_left["firecrawl"] == 0
    with pytest.raises(Blocked):
        run(router, engines=("api", "firecrawl"))
    assert len(firecrawl.calls) == 1 and router.stats["firecrawl"].skipped == 1


@pytest.mark.parametrize("status", [404, 410])
def test_gone_pages_never_escalate(status: int) -> None:
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl")], paid=True)
    api = FakeEngine("api", [PermanentFetchError("gone", url=URL, status=status)])
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    with pytest.raises(PermanentFetchError):
        run(router, engines=("api", "firecrawl"))
    assert firecrawl.calls == []
    assert router.stats["api"].statuses == {str(status): 1}


@pytest.mark.parametrize(
    "error",
    [
        UnsafeURL("10.0.0.1 is private", url=URL),
        RateLimited("429", url=URL, retry_after=600),
    ],
)
def test_answers_that_are_not_engine_failures_do_not_escalate(error: Exception) -> None:
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl")], paid=True)
    router = Router(
        {"api": FakeEngine("api", [error]), "firecrawl": firecrawl},  # type: ignore[list-item]
        PolicySet.from_mapping({}),
    )
    with pytest.raises(type(error)):
        run(router, engines=("api", "firecrawl"))
    assert firecrawl.calls == []


def test_a_403_without_a_known_challenge_escalates() -> None:
    api = FakeEngine("api", [PermanentFetchError("403", url=URL, status=403)])
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl")], paid=True)
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    assert run(router, engines=("api", "firecrawl")).engine == "firecrawl"


def test_low_scores_escalate_and_the_best_wins_when_all_are_low() -> None:
    scorer = FieldScorer({"title": 1, "price": 1, "sku": 2}, extract=lambda r: r.json())
    api = FakeEngine("api", [ok("api", b'{"title": "x"}')])  # 0.25
    firecrawl = FakeEngine(
        "firecrawl",
        [ok("firecrawl", b'{"title": "x", "sku": "1"}')],  # 0.75
        paid=True,
    )
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    assert run(router, engines=("api", "firecrawl"), scorer=scorer).engine == "firecrawl"

    firecrawl = FakeEngine("firecrawl", [ok("firecrawl", b'{"price": "1"}')], paid=True)  # 0.25
    api = FakeEngine("api", [ok("api", b'{"title": "x", "price": "2"}')])  # 0.5
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    assert run(router, engines=("api", "firecrawl"), scorer=scorer).engine == "api"
    assert len(firecrawl.calls) == 1


def test_a_304_is_final_and_the_policy_narrows_engines() -> None:
    api = FakeEngine(
        "api", [FetchResult(url=URL, status=304, content=b"", engine="api", not_modified=True)]
    )
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl")], paid=True)
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    assert run(router, engines=("api", "firecrawl")).not_modified
    assert firecrawl.calls == []

    only_api = PolicySet.from_mapping({"domains": {"shop.example": {"engines": ["api"]}}})
    router = Router({"api": FakeEngine("api", [blocked("api")]), "firecrawl": firecrawl}, only_api)
    with pytest.raises(Blocked):
        run(router, engines=("api", "firecrawl"))
    assert firecrawl.calls == []
    with pytest.raises(PolicyError, match="no engine allowed"):
        run(router, engines=("scrapfly",))


def test_a_connector_fetcher_is_bound_to_its_engine_order() -> None:
    api = FakeEngine("api", [blocked("api")])
    firecrawl = FakeEngine("firecrawl", [ok("firecrawl")], paid=True)
    router = Router({"api": api, "firecrawl": firecrawl}, PolicySet.from_mapping({}))
    only_api = router.fetcher(("api",))
    with pytest.raises(Blocked):
        asyncio.run(only_api(URL, expect="json"))
    both = router.fetcher(("api", "firecrawl"))
    assert asyncio.run(both(URL, expect="json")).engine == "firecrawl"
    assert firecrawl.calls == [URL]
