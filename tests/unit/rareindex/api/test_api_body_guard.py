"""Bodies are read only for a live token, and only so far: a request with a body to ``/api/``
is refused 401 before its body is read when the token is missing or wrong, 413 past
``RI_API_MAX_BODY_BYTES`` (declared or streamed), and a 422 stays short however bad the body."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.unit.rareindex.api.api_helpers import bearer, make_app, seed

BIG = json.dumps({"target": "x" * 200_000})


def test_no_token_is_401_before_the_body_is_read(sqlite_engine: Engine, tmp_path: Path) -> None:
    seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    streamed: list[int] = []

    def body() -> Iterator[bytes]:
        for _ in range(50):
            streamed.append(1)
            yield b"x" * 65_536

    answer = client.post("/api/lookup", content=body())
    assert answer.status_code == 401 and answer.json()["error"] == "missing_token"
    assert streamed in ([], [1])  # refused at the first chunk at most, never read through
    bad = client.post("/api/lookup", content="{not json", headers=bearer("rit_nope"))
    assert bad.status_code == 401 and bad.json()["error"] == "invalid_token"  # not a 400


def test_a_body_over_the_limit_is_413_declared_or_streamed(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path, api_max_body_bytes=4096))
    headers = {**bearer(data.read_token), "content-type": "application/json"}
    declared = client.post("/api/lookup", content=BIG, headers=headers)
    assert declared.status_code == 413 and declared.json()["error"] == "body_too_large"
    assert "4096 bytes" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
        yield from (BIG[i : i + 1000].encode() for i in range(0, len(BIG), 1000))

    streamed = client.post("/api/lookup", content=chunks(), headers=headers)
    assert streamed.status_code == 413


def test_a_body_under_the_limit_reaches_the_route(sqlite_engine: Engine, tmp_path: Path) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    answer = client.post("/api/lookup", json={"target": "hello"}, headers=bearer(data.read_token))
    assert answer.status_code == 422 and answer.json()["error"] == "bad_input"  # the route's own


def test_a_422_names_ten_problems_and_counts_the_rest(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    body = {"target": "PSA 1234567", **{f"k{i}": i for i in range(500)}}  # 500 unknown keys
    answer = client.post("/api/lookup", json=body, headers=bearer(data.read_token))
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert detail.count("Extra inputs are not permitted") == 10
    assert detail.endswith("and 490 more") and len(answer.content) < 1000


def test_the_openapi_document_lists_what_the_guard_and_handlers_answer(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    spec = make_app(sqlite_engine, tmp_path).openapi()
    lookup = spec["paths"]["/api/lookup"]["post"]["responses"]
    for status in ("401", "413", "422", "503"):
        assert lookup[status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorBody"
        }, status
    coverage = spec["paths"]["/api/admin/coverage"]["get"]["responses"]
    assert "503" in coverage and "413" not in coverage  # no body, no body limit
    assert "503" not in spec["paths"]["/health"]["get"]["responses"]  # liveness never says it
