"""Watchlists on SQLite and PostgreSQL, through the admin API and the CLI: created, listed and
deleted by their principal (the token's name), never seen, matched or deleted by another; the
CLI's ``--principal alice`` and the token ``alice`` are one owner."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
import structlog
from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete, func, select
from typer.testing import CliRunner, Result

from rareindex.api import create_app
from rareindex.cli import _common, app
from rareindex.settings import Settings
from rareindex.storage import downgrade, make_engine, upgrade
from rareindex.storage.outbox import emit, event
from rareindex.storage.schema import api_tokens, events, watchlists
from rareindex.storage.tokens import create_token
from rareindex.storage.watchlist_store import watchlists_of
from rareindex.watchlists import matching_watchlists
from rareindex_connectors.testing import serve_asgi
from tests.sse_client import Subscriber
from tests.unit.rareindex.api.api_helpers import make_app


@pytest.fixture(scope="module")
def migrated_pg(pg_url: str) -> Iterator[Engine]:
    engine = make_engine(pg_url)
    upgrade(engine)
    try:
        yield engine
    finally:
        downgrade(engine, "base")
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'wl.db'}"
        engine = make_engine(url)
        upgrade(engine)
        yield url, engine
        engine.dispose()
        return
    engine = request.getfixturevalue("migrated_pg")
    yield engine.url.render_as_string(hide_password=False), engine
    with engine.begin() as conn:
        conn.execute(delete(watchlists))
        conn.execute(delete(api_tokens))


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def client_for(engine: Engine, tmp_path: Path) -> TestClient:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=tmp_path,
        database_url=None,
        broker_url=None,
        gates_url=None,
    )
    return TestClient(create_app(settings, engine=engine))


def cli(url: str, tmp_path: Path, *args: str) -> Result:
    env = {"RI_DATABASE_URL": url, "RI_DATA_DIR": str(tmp_path), "RI_LOG_LEVEL": "warning"}
    created: list[Engine] = []

    def tracked(url: str, **kwargs: Any) -> Engine:
        engine = make_engine(url, **kwargs)
        created.append(engine)
        return engine

    with mock.patch.object(_common, "make_engine", tracked):
        result = CliRunner().invoke(app, list(args), env=env)
    for engine in created:
        engine.dispose()
    return result


def test_api_create_list_delete_and_one_principal_never_touches_another_s(
    db: tuple[str, Engine], tmp_path: Path
) -> None:
    _, engine = db
    alice = {"Authorization": f"Bearer {create_token(engine, 'alice', role='read').token}"}
    bob = {"Authorization": f"Bearer {create_token(engine, 'bob').token}"}
    client = client_for(engine, tmp_path)

    made = client.post(
        "/api/watchlists",
        headers=alice,
        json={"name": "zards", "categories": ["tcg_card"], "below": 100.5, "move_pct": 20},
    )
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["principal"] == "token:alice"
    assert (body["below"], body["currency"], body["move_pct"]) == ("100.5", "USD", "20")
    wid = body["id"]
    client.post("/api/watchlists", headers=bob, json={"name": "zards", "asset_ids": ["ast_1"]})

    listed = client.get("/api/watchlists", headers=alice).json()["watchlists"]
    assert [(w["id"], w["name"]) for w in listed] == [(wid, "zards")]
    bobs = client.get("/api/watchlists", headers=bob).json()["watchlists"]
    assert [w["principal"] for w in bobs] == ["token:bob"] and bobs[0]["id"] != wid

    # bob cannot delete alice's, by id or by name: told it does not exist
    refused = client.delete(f"/api/watchlists/{wid}", headers=bob)
    assert (refused.status_code, refused.json()["error"]) == (404, "unknown_watchlist")
    assert client.delete("/api/watchlists/nope", headers=alice).status_code == 404
    assert len(watchlists_of(engine, "token:alice")) == 1

    # a name twice is a conflict; a body naming nothing or impossible conditions is refused
    again = client.post(
        "/api/watchlists", headers=alice, json={"name": "zards", "categories": ["coin"]}
    )
    assert (again.status_code, again.json()["error"]) == (409, "invalid_watchlist")
    empty = client.post("/api/watchlists", headers=alice, json={"name": "nothing"})
    assert (empty.status_code, empty.json()["error"]) == (422, "bad_request")
    band = client.post(
        "/api/watchlists",
        headers=alice,
        json={"name": "band", "categories": ["coin"], "above": 10, "below": 5},
    )
    assert band.status_code == 409
    assert client.post("/api/watchlists", json={"name": "x"}).status_code == 401

    # matching only ever runs over the principal's own watchlists
    sale = {"type": "sale.recorded", "category": "tcg_card", "asset_id": "ast_1",
            "payload": {"price": "50", "currency": "USD"}}  # fmt: skip
    assert matching_watchlists(sale, watchlists_of(engine, "token:alice")) == []  # no move
    moved = {**sale, "payload": {"old": "100", "new": "50", "currency": "USD"}}
    assert matching_watchlists(moved, watchlists_of(engine, "token:alice")) == [wid]
    assert wid not in matching_watchlists(moved, watchlists_of(engine, "token:bob"))

    gone = client.delete(f"/api/watchlists/{wid}", headers=alice)
    assert (gone.status_code, gone.json()["id"]) == (200, wid)
    assert client.get("/api/watchlists", headers=alice).json() == {"watchlists": []}
    assert len(client.get("/api/watchlists", headers=bob).json()["watchlists"]) == 1


def test_cli_add_list_delete_share_the_owner_with_the_api(
    db: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = db
    added = cli(
        url, tmp_path, "watchlists", "add", "cheap", "--principal", "alice",
        "--asset", "ast_1", "--query", "charizard", "--below", "80", "--currency", "eur",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    assert "below 80 EUR" in added.stdout
    listed = cli(url, tmp_path, "watchlists", "list", "--principal", "token:alice", "--json")
    [only] = json.loads(listed.stdout)
    assert (only["name"], only["asset_ids"], only["title_query"], only["currency"]) == (
        "cheap", ["ast_1"], "charizard", "EUR",
    )  # fmt: skip
    assert json.loads(cli(url, tmp_path, "watchlists", "list", "--principal", "bob", "--json")
                      .stdout) == []  # fmt: skip

    alice = {"Authorization": f"Bearer {create_token(engine, 'alice').token}"}
    seen = client_for(engine, tmp_path).get("/api/watchlists", headers=alice).json()
    assert [w["id"] for w in seen["watchlists"]] == [only["id"]]

    nothing = cli(url, tmp_path, "watchlists", "add", "x", "--principal", "alice")
    assert nothing.exit_code == 2 and "at least one" in nothing.stderr
    foreign = cli(url, tmp_path, "watchlists", "delete", "cheap", "--principal", "bob")
    assert foreign.exit_code == 2 and "no watchlist 'cheap' of token:bob" in foreign.stderr
    deleted = cli(url, tmp_path, "watchlists", "delete", only["id"], "--principal", "alice")
    assert deleted.exit_code == 0 and only["id"] in deleted.stdout
    assert watchlists_of(engine, "token:alice") == []


def test_the_events_page_filters_by_and_tags_with_the_caller_s_watchlists(
    db: tuple[str, Engine], tmp_path: Path
) -> None:
    _, engine = db
    with engine.begin() as conn:  # the test's events, in one commit
        before = conn.execute(select(func.max(events.c.cursor))).scalar() or 0
        emit(
            conn,
            [
                event("sale.recorded", category="tcg_card", asset_id=None, variant_id="var_z",
                      payload={"price": "50.00", "currency": "USD", "title": "Charizard PSA 9"}),
                event("listing.price_changed", category="tcg_card", variant_id="var_z",
                      payload={"old": "100.00", "new": "70.00", "ratio": "0.7",
                               "currency": "USD"}),
                event("sale.recorded", category="coin", variant_id="var_c",
                      payload={"price": "900.00", "currency": "USD", "title": "1909-S VDB"}),
            ],
        )  # fmt: skip
    alice = {"Authorization": f"Bearer {create_token(engine, 'alice', role='read').token}"}
    bob = {"Authorization": f"Bearer {create_token(engine, 'bob', role='read').token}"}
    client = client_for(engine, tmp_path)

    def make(headers: dict[str, str], **body: Any) -> str:
        made = client.post("/api/watchlists", headers=headers, json=body)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    cheap = make(alice, name="cheap zards", title_query="charizard", below=60)
    drops = make(alice, name="drops", categories=["tcg_card"], move_pct=25)
    coins = make(bob, name="coins", categories=["coin"])

    def page(headers: dict[str, str], **params: Any) -> list[tuple[str, list[str]]]:
        got = client.get("/api/events/page", headers=headers, params={"after": before, **params})
        assert got.status_code == 200, got.text
        return [(e["type"], e["watchlists"]) for e in got.json()["events"]]

    assert page(alice) == [
        ("sale.recorded", [cheap]),
        ("listing.price_changed", [drops]),
        ("sale.recorded", []),  # bob's coins never tag alice's events
    ]
    assert page(alice, watchlist="drops") == [("listing.price_changed", [drops])]
    assert page(alice, watchlist=cheap) == [("sale.recorded", [cheap])]
    assert page(bob) == [("sale.recorded", []), ("listing.price_changed", []),
                         ("sale.recorded", [coins])]  # fmt: skip
    refused = client.get("/api/events/page", headers=bob, params={"watchlist": cheap})
    assert (refused.status_code, refused.json()["error"]) == (404, "unknown_watchlist")


def test_the_event_stream_keeps_what_a_watchlist_matches(
    db: tuple[str, Engine], tmp_path: Path
) -> None:
    _, engine = db
    token = create_token(engine, "carol", role="read").token
    headers = {"Authorization": f"Bearer {token}"}
    app = make_app(engine, tmp_path, events_poll_seconds=0.05, events_heartbeat_seconds=0.3)
    with engine.begin() as conn:
        before = conn.execute(select(func.max(events.c.cursor))).scalar() or 0
    with serve_asgi(app) as base:
        made = httpx.post(
            f"{base}/api/watchlists",
            headers=headers,
            json={"name": "big drops", "categories": ["tcg_card"], "move_pct": 25},
        )
        assert made.status_code == 201, made.text
        wid = made.json()["id"]
        sub = Subscriber([base], token, params={"cursor": before, "watchlist": wid}).start()
        try:
            with engine.begin() as conn:
                emit(
                    conn,
                    [
                        event("listing.price_changed", category="tcg_card", variant_id="var_z",
                              payload={"old": "100.00", "new": "90.00", "currency": "USD"}),
                        event("listing.price_changed", category="tcg_card", variant_id="var_z",
                              payload={"old": "90.00", "new": "60.00", "currency": "USD"}),
                        event("listing.price_changed", category="coin", variant_id="var_c",
                              payload={"old": "100.00", "new": "10.00", "currency": "USD"}),
                    ],
                )  # fmt: skip
            sub.wait_for(before + 2, timeout=10)
            time.sleep(0.3)  # the coin's cursor passes by, unsent
        finally:
            sub.stop()
    assert sub.cursors() == [before + 2]
    assert sub.events[0].data["watchlists"] == [wid]
    assert sub.events[0].data["payload"]["new"] == "60.00"


def test_an_unfiltered_stream_tags_each_event_with_the_callers_watchlists(
    db: tuple[str, Engine], tmp_path: Path
) -> None:
    """Without ?watchlist= every event comes, each carrying the ids of the caller's watchlists it
    matches (none of another principal's)."""
    _, engine = db
    dave = create_token(engine, "dave", role="read").token
    erin = create_token(engine, "erin", role="read").token
    app = make_app(engine, tmp_path, events_poll_seconds=0.05, events_heartbeat_seconds=0.3)
    with engine.begin() as conn:
        before = conn.execute(select(func.max(events.c.cursor))).scalar() or 0
    with serve_asgi(app) as base:
        mine = httpx.post(
            f"{base}/api/watchlists",
            headers={"Authorization": f"Bearer {dave}"},
            json={"name": "coins", "categories": ["coin"]},
        )
        theirs = httpx.post(
            f"{base}/api/watchlists",
            headers={"Authorization": f"Bearer {erin}"},
            json={"name": "all coins", "categories": ["coin"]},
        )
        assert mine.status_code == theirs.status_code == 201, (mine.text, theirs.text)
        sub = Subscriber([base], dave, params={"cursor": before}).start()
        try:
            with engine.begin() as conn:
                emit(
                    conn,
                    [
                        event("listing.price_changed", category="tcg_card", variant_id="var_t",
                              payload={"old": "100.00", "new": "90.00", "currency": "USD"}),
                        event("listing.price_changed", category="coin", variant_id="var_c",
                              payload={"old": "100.00", "new": "95.00", "currency": "USD"}),
                    ],
                )  # fmt: skip
            sub.wait_for(before + 2, timeout=10)
        finally:
            sub.stop()
    assert sub.cursors() == [before + 1, before + 2]
    assert [e.data["watchlists"] for e in sub.events] == [[], [mine.json()["id"]]]
