"""``/health`` and ``/health/ready``, the error shape, and the OpenAPI document."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import Engine
from structlog.testing import capture_logs

from rareindex.api.routes import health
from rareindex.storage import make_engine, upgrade
from rareindex.storage.tokens import create_token
from tests.unit.rareindex.api.api_helpers import bearer, make_app

FLEET: dict[str, Any] = {
    "database_url": "postgresql+psycopg://unused@127.0.0.1/unused",
    "broker_url": "redis://:s3cret-pass@127.0.0.1:6379/0",
}


def test_liveness_and_readiness_on_a_migrated_database(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    upgrade(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    assert client.get("/health").json() == {"status": "ok"}
    ready = client.get("/health/ready")
    assert ready.status_code == 200
    body = ready.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "schema"}  # no broker configured: not checked
    assert all(check["ok"] for check in body["checks"].values())


def test_readiness_names_the_failed_check(tmp_path: Path) -> None:
    empty = make_engine(f"sqlite:///{tmp_path / 'empty.db'}")
    client = TestClient(make_app(empty, tmp_path))
    assert client.get("/health").status_code == 200  # alive all the same
    ready = client.get("/health/ready")
    assert ready.status_code == 503
    checks = ready.json()["checks"]
    assert checks["database"]["ok"] is True
    assert checks["schema"]["ok"] is False
    assert "rareindex db upgrade" in checks["schema"]["detail"]


def test_readiness_checks_the_broker_and_hides_its_password(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    upgrade(sqlite_engine)
    pinged: list[str] = []

    def broker_check(url: str) -> Callable[[], Awaitable[None]]:
        async def check() -> None:
            pinged.append(url)
            raise ConnectionError(f"Error 111 connecting to {url}")

        return check

    monkeypatch.setattr(health, "broker_check", broker_check)
    client = TestClient(make_app(sqlite_engine, tmp_path, **FLEET))
    ready = client.get("/health/ready")
    assert ready.status_code == 503
    broker = ready.json()["checks"]["broker"]
    assert broker["ok"] is False and broker["detail"].startswith("ConnectionError: Error 111")
    assert "s3cret-pass" not in ready.text
    assert pinged == [FLEET["broker_url"]]


def test_errors_have_one_shape(sqlite_engine: Engine, tmp_path: Path) -> None:
    upgrade(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    assert client.get("/nowhere").json() == {"error": "not_found", "detail": "Not Found"}
    assert client.delete("/health").json()["error"] == "method_not_allowed"


def test_an_unexpected_error_is_a_json_500_and_a_log_line(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rareindex.api.routes import admin

    upgrade(sqlite_engine)
    token = create_token(sqlite_engine, "ops").token

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(admin, "coverage", broken)
    client = TestClient(make_app(sqlite_engine, tmp_path), raise_server_exceptions=False)
    with capture_logs() as logs:
        answer = client.get("/api/admin/coverage", headers=bearer(token))
    assert answer.status_code == 500
    assert answer.json()["error"] == "internal_error"
    assert "boom" not in answer.text
    [failed] = [e for e in logs if e["event"] == "api.failed"]
    assert failed["route"] == "/api/admin/coverage" and failed["error"] == "RuntimeError"


def test_openapi_documents_every_json_shape(sqlite_engine: Engine, tmp_path: Path) -> None:
    upgrade(sqlite_engine)
    spec = TestClient(make_app(sqlite_engine, tmp_path)).get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            answers = operation["responses"]
            ok = answers["200" if "200" in answers else "201"]["content"]  # 201: a creation
            if path == "/metrics":
                assert list(ok) == [CONTENT_TYPE_LATEST]
                continue
            if path == "/api/events":  # Server-Sent Events (its frames: EventOut, documented)
                assert list(ok) == ["text/event-stream"]
                assert operation["security"] == [{"bearer": []}]
                continue
            ref = ok["application/json"]["schema"].get("$ref", "")
            assert ref.startswith("#/components/schemas/"), (method, path)
            if path.startswith("/api/"):
                assert operation["security"] == [{"bearer": []}], (method, path)
                error = operation["responses"]["401"]["content"]["application/json"]["schema"]
                assert error["$ref"] == "#/components/schemas/ErrorBody"
    for name in ("ConnectorsResponse", "CoverageResponse", "CertificateView", "CertLookupResult"):
        assert schemas[name]["properties"], name
    assert "hosts" in schemas["ConnectorView"]["properties"]
    assert "sales_30d" in schemas["CoverageRow"]["properties"]
    assert "kwargs" in schemas["DeadLetterView"]["properties"]


def test_a_database_outage_is_a_503_naming_it_not_a_500(tmp_path: Path) -> None:
    from rareindex.storage import make_engine

    gone = make_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'rareindex.db'}")
    client = TestClient(make_app(gone, tmp_path), raise_server_exceptions=False)
    well_formed = "rit_" + "0" * 16 + "_" + "a" * 43  # checked against the database
    answer = client.get("/api/admin/connectors", headers={"Authorization": f"Bearer {well_formed}"})
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"] == "database_unavailable"
    assert answer.headers["retry-after"] == "30"
    headers = {"Authorization": f"Bearer {well_formed}"}
    posted = client.post("/api/lookup", json={"target": "PSA 12345678"}, headers=headers)
    assert posted.status_code == 503  # the body guard's token check says it too
    assert client.get("/health").status_code == 200  # alive all the same
