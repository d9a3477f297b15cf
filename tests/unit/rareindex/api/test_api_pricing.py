"""The price index routes: a variant's estimate with its evidence, an asset's grade ladder and
the index series, with their OpenAPI schemas."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from rareindex.pricing import IndexParams
from rareindex.storage import upgrade
from rareindex.storage.pricing_store import rebuild
from rareindex.storage.tokens import create_token
from tests.pricing_helpers import seed_market
from tests.unit.rareindex.api.api_helpers import bearer, make_app


@pytest.fixture
def client(sqlite_engine: Engine, tmp_path: Path) -> tuple[TestClient, dict[str, str], str]:
    upgrade(sqlite_engine)
    ids = seed_market(sqlite_engine)
    rebuild(sqlite_engine)
    token = create_token(sqlite_engine, "reader", role="read").token
    return TestClient(make_app(sqlite_engine, tmp_path)), ids, token


def test_a_variant_estimate_shows_its_evidence_and_why_sales_were_left_out(
    client: tuple[TestClient, dict[str, str], str],
) -> None:
    api, ids, token = client
    answer = api.get(f"/api/variants/{ids['busy']}/estimate", headers=bearer(token))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["estimate"]["basis"] == "direct" and body["estimate"]["n_sales"] == 9
    assert float(body["estimate"]["low_usd"]) < float(body["estimate"]["value_usd"])
    reasons = {s["sale_id"]: s["excluded_because"] for s in body["sales"]}
    assert reasons["sal_outlier"] == "anomaly" and reasons["sal_lot"] == "lot"
    assert reasons["sal_hammer"] is None
    assert sum(s["included"] for s in body["sales"]) == 9


def test_the_grade_ladder_marks_a_derived_grade(
    client: tuple[TestClient, dict[str, str], str],
) -> None:
    api, ids, token = client
    body = api.get(f"/api/assets/{ids['asset']}/grade-ladder", headers=bearer(token)).json()
    assert [g["grade"] for g in body["grades"]] == ["raw", "PSA 9", "PSA 10"]
    assert body["grades"][-1]["basis"] == "derived" and body["grades"][-1]["derived_from"]


def test_the_index_series_and_the_missing_ones(
    client: tuple[TestClient, dict[str, str], str],
) -> None:
    api, _, token = client
    listed = api.get("/api/indices", headers=bearer(token)).json()
    assert [i["index_id"] for i in listed["indices"]] == ["category:sports"]
    series = api.get("/api/indices/category:sports", headers=bearer(token)).json()
    assert series["points"][0]["method"] == "base" and float(series["points"][0]["level"]) == 100
    assert all(p["pairs"] > 0 for p in series["points"][1:])
    missing = api.get("/api/indices/set:none", headers=bearer(token))
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert api.get("/api/variants/var_nope/estimate", headers=bearer(token)).status_code == 404
    assert api.get("/api/indices").status_code == 401


def test_a_basket_index_over_two_assets(client: tuple[TestClient, dict[str, str], str]) -> None:
    api, _, token = client
    answer = api.get(
        "/api/baskets/index", params={"asset_id": ["ast_1", "ast_2"]}, headers=bearer(token)
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["index_id"] == "basket of 2 assets"
    points = body["points"][1:]
    assert len(points) == 7 and all(p["pairs"] > 0 for p in points)
    # a week with fewer than min_pairs pairs falls back to the median, the others are fitted
    minimum = IndexParams().min_pairs
    assert [p["method"] for p in points] == [
        "median" if p["pairs"] < minimum else "wls" for p in points
    ]
    assert {p["method"] for p in points} == {"median", "wls"}  # both kinds in this basket
    none = api.get("/api/baskets/index", params={"asset_id": ["ast_nope"]}, headers=bearer(token))
    assert none.status_code == 404


def test_the_routes_are_in_the_openapi_document(
    client: tuple[TestClient, dict[str, str], str],
) -> None:
    api, _, _ = client
    spec = api.get("/openapi.json").json()
    for path in (
        "/api/variants/{variant_id}/estimate",
        "/api/assets/{asset_id}/grade-ladder",
        "/api/indices",
        "/api/indices/{index_id}",
        "/api/baskets/index",
    ):
        assert "get" in spec["paths"][path]
    assert {"EstimateView", "IndexSeriesView", "SaleEvidence"} <= set(spec["components"]["schemas"])
