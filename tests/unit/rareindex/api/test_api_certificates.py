"""``/api/certificates/{grader}/{number}`` and ``/api/lookup`` over :mod:`rareindex.certs`: the
stored certificate with its sightings, and lookups refused with a clear error — an SSRF attempt
is refused before anything is fetched (IP literals: no DNS, no socket)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, insert, select

from rareindex.api.routes import certificates as cert_routes
from rareindex.storage.schema import certificate_sightings, certificates, raw_records
from rareindex_connectors.errors import TransientFetchError
from tests.unit.rareindex.api.api_helpers import Dataset, bearer, make_app, seed


def _with_certificate(engine: Engine) -> Dataset:
    data = seed(engine)
    with engine.begin() as conn:
        conn.execute(
            insert(certificates).values(
                id="crt_1",
                grader="PSA",
                cert_number="12345678",
                status="verified",
                grade="10",
                subject="Charizard",
                year=1999,
                set_name="Base Set",
                verified_at=datetime.now(UTC),
            )
        )
        conn.execute(
            insert(certificate_sightings).values(
                id="sig_1",
                certificate_id="crt_1",
                cert_number="12345678",
                grader="PSA",
                attribution="attributed",
                source_id="market",
                listing_external_id="123456789",
                url="https://market.fake.test/itm/123456789",
                seen_at=datetime.now(UTC),
                title_hash="0" * 64,
                price=Decimal("420.00"),
                currency="USD",
            )
        )
    return data


def test_a_stored_certificate_with_its_sightings(sqlite_engine: Engine, tmp_path: Path) -> None:
    data = _with_certificate(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    answer = client.get("/api/certificates/psa/12345678", headers=bearer(data.read_token))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["grader"], body["cert_number"], body["status"]) == ("PSA", "12345678", "verified")
    assert (body["grade"], body["subject"], body["year"]) == ("10", "Charizard", 1999)
    [sighting] = body["sightings"]
    assert sighting["source_id"] == "market" and sighting["listing_external_id"] == "123456789"


def test_unknown_and_malformed_certificates(sqlite_engine: Engine, tmp_path: Path) -> None:
    data = _with_certificate(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    headers = bearer(data.read_token)
    unknown = client.get("/api/certificates/PSA/87654321", headers=headers)
    assert unknown.status_code == 404 and unknown.json()["error"] == "not_found"
    malformed = client.get("/api/certificates/NOBODY/12", headers=headers)
    assert malformed.status_code == 422 and malformed.json()["error"] == "bad_input"


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5/itm/123456",  # private
        "http://127.0.0.1:9/itm/123456",  # loopback
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://[::1]/itm/1",  # IPv6 loopback
        "file:///etc/passwd",  # not http(s)
    ],
)
def test_a_private_address_lookup_is_refused_before_any_fetch(
    sqlite_engine: Engine, tmp_path: Path, url: str
) -> None:
    data = seed(sqlite_engine)
    with TestClient(make_app(sqlite_engine, tmp_path)) as client:  # lifespan: shared stack
        answer = client.post("/api/lookup", json={"url": url}, headers=bearer(data.read_token))
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"] == "unsafe_url", body
    assert body["detail"]
    with sqlite_engine.connect() as conn:  # nothing fetched, nothing stored
        assert conn.execute(select(func.count()).select_from(raw_records)).scalar_one() == 4
        assert conn.execute(select(func.count()).select_from(certificates)).scalar_one() == 0


def test_lookup_bodies_are_validated(sqlite_engine: Engine, tmp_path: Path) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    headers = bearer(data.read_token)
    for body in ({}, {"url": "http://a.example/", "target": "PSA 1234567"}, {"link": "x"}):
        answer = client.post("/api/lookup", json=body, headers=headers)
        assert answer.status_code == 422
        assert answer.json()["error"] == "bad_request", body
    nonsense = client.post("/api/lookup", json={"target": "hello"}, headers=headers)
    assert nonsense.status_code == 422 and nonsense.json()["error"] == "bad_input"


def test_a_failing_source_is_a_502_not_a_crash(
    sqlite_engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = seed(sqlite_engine)

    async def failing(*args: object, **kwargs: object) -> object:
        raise TransientFetchError("grader.fake.test answered 503", url="", host="grader.fake.test")

    monkeypatch.setattr(cert_routes, "lookup", failing)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    answer = client.post(
        "/api/lookup", json={"target": "PSA 12345678"}, headers=bearer(data.read_token)
    )
    assert answer.status_code == 502
    assert answer.json() == {"error": "fetch_failed", "detail": "grader.fake.test answered 503"}
