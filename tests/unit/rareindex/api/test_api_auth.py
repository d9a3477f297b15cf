"""Bearer tokens: every /api route refuses missing, wrong and revoked tokens; tokens are stored
hashed; the ``rareindex tokens`` commands create (printing once), list and revoke them."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select
from typer.testing import CliRunner

from rareindex.cli import tokens_cmd
from rareindex.storage.schema import api_tokens, connectors, dead_letters
from rareindex.storage.tokens import (
    TokenError,
    authenticate,
    create_token,
    hash_token,
    list_tokens,
    revoke_token,
)
from tests.unit.rareindex.api.api_helpers import bearer, make_app, seed, settings_for

API_ROUTES = [
    ("GET", "/api/admin/connectors"),
    ("GET", "/api/admin/coverage"),
    ("GET", "/api/admin/deadletters"),
    ("POST", "/api/admin/connectors/cards-shop/pause"),
    ("POST", "/api/admin/connectors/cards-shop/resume"),
    ("POST", "/api/admin/connectors/cards-shop/maintenance"),
    ("POST", "/api/admin/connectors/cards-shop/disable"),
    ("POST", "/api/admin/connectors/cards-shop/enable"),
    ("POST", "/api/admin/deadletters/msg-1/requeue"),
    ("GET", "/api/certificates/PSA/12345678"),
    ("POST", "/api/lookup"),
    ("GET", "/api/variants/{variant_id}/estimate"),
    ("GET", "/api/assets/{asset_id}/grade-ladder"),
    ("GET", "/api/indices"),
    ("GET", "/api/indices/{index_id}"),
    ("GET", "/api/baskets/index"),
    ("GET", "/api/watchlists"),
    ("POST", "/api/watchlists"),
    ("DELETE", "/api/watchlists/{watchlist_id}"),
    ("GET", "/api/events"),
    ("GET", "/api/events/page"),
    ("GET", "/api/review"),
    ("POST", "/api/review/{item_id}/accept"),
    ("POST", "/api/review/{item_id}/reject"),
]


def test_every_api_route_is_listed_here(sqlite_engine: Engine, tmp_path: Path) -> None:
    seed(sqlite_engine)
    app = make_app(sqlite_engine, tmp_path)
    routes = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        if path.startswith("/api/")
        for method in operations
    }
    listed = {(m, p.replace("cards-shop", "{connector_id}")) for m, p in API_ROUTES}
    listed = {
        (m, p.replace("msg-1", "{message_id}").replace("PSA/12345678", "{grader}/{number}"))
        for m, p in listed
    }
    assert routes == listed


@pytest.mark.parametrize(("method", "path"), API_ROUTES)
def test_missing_and_wrong_tokens_are_refused_everywhere(
    sqlite_engine: Engine, tmp_path: Path, method: str, path: str
) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    body = {"json": {"url": "http://10.0.0.1/"}} if path == "/api/lookup" else {}
    missing = client.request(method, path, **body)  # type: ignore[arg-type]
    assert missing.status_code == 401
    assert missing.json()["error"] == "missing_token"
    assert missing.headers["WWW-Authenticate"].startswith("Bearer")
    token_id = data.admin_token[4:20]
    for wrong in (
        "nope",
        data.admin_token[:-1] + ("A" if data.admin_token[-1] != "A" else "B"),  # right id
        f"rit_{token_id}_{'x' * 43}",
        hash_token(data.admin_token),  # the stored hash is not a token
    ):
        refused = client.request(method, path, headers=bearer(wrong), **body)  # type: ignore[arg-type]
        assert refused.status_code == 401, wrong
        assert refused.json()["error"] == "invalid_token"
        assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    basic = client.request(method, path, headers={"Authorization": "Basic b3BzOm9wcw=="}, **body)  # type: ignore[arg-type]
    assert basic.status_code == 401


def test_a_revoked_token_is_refused_on_the_next_request(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    data = seed(sqlite_engine)
    with TestClient(make_app(sqlite_engine, tmp_path)) as client:
        assert (
            client.get("/api/admin/coverage", headers=bearer(data.admin_token)).status_code == 200
        )
        revoke_token(sqlite_engine, "ops")  # what `rareindex tokens revoke ops` calls
        refused = client.get("/api/admin/coverage", headers=bearer(data.admin_token))
        assert refused.status_code == 401
        assert refused.json() == {
            "error": "invalid_token",
            "detail": "the token is unknown, wrong or revoked",
        }
        # the other token is untouched
        assert client.get("/api/admin/coverage", headers=bearer(data.read_token)).status_code == 200


def test_a_read_token_cannot_use_control_endpoints(sqlite_engine: Engine, tmp_path: Path) -> None:
    data = seed(sqlite_engine)
    client = TestClient(make_app(sqlite_engine, tmp_path))
    headers = bearer(data.read_token)
    assert client.get("/api/admin/connectors", headers=headers).status_code == 200
    for path in (
        "/api/admin/connectors/cards-shop/pause",
        "/api/admin/connectors/cards-shop/resume",
        "/api/admin/connectors/cards-shop/maintenance",
        "/api/admin/connectors/cards-shop/disable",
        "/api/admin/connectors/cards-shop/enable",
        "/api/admin/deadletters/msg-1/requeue",
    ):
        refused = client.post(path, headers=headers)
        assert refused.status_code == 403
        assert refused.json()["error"] == "insufficient_scope"
    with sqlite_engine.connect() as conn:  # nothing was changed by the refused calls
        assert (
            conn.execute(
                select(connectors.c.status).where(connectors.c.id == "cards-shop")
            ).scalar_one()
            == "active"
        )
        assert conn.execute(select(dead_letters.c.requeued_at)).scalar_one() is None


def test_tokens_are_stored_hashed_and_names_unique_while_live(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    seed(sqlite_engine)
    issued = create_token(sqlite_engine, "scanner")
    with sqlite_engine.connect() as conn:
        rows = conn.execute(select(api_tokens)).mappings().all()
    stored = [str(v) for row in rows for v in row.values()]
    assert issued.token not in stored
    assert hash_token(issued.token) in stored
    assert issued.token not in (tmp_path / "rareindex.db").read_bytes().decode("latin-1")
    with pytest.raises(TokenError, match="already named 'scanner'"):
        create_token(sqlite_engine, "scanner")
    revoke_token(sqlite_engine, issued.info.id)
    with pytest.raises(TokenError, match="already revoked"):
        revoke_token(sqlite_engine, "scanner")
    again = create_token(sqlite_engine, "scanner")  # a revoked name may be reused
    assert authenticate(sqlite_engine, issued.token) is None
    assert authenticate(sqlite_engine, again.token) is not None
    with pytest.raises(TokenError, match="no token 'ghost'"):
        revoke_token(sqlite_engine, "ghost")
    with pytest.raises(TokenError, match="unknown role"):
        create_token(sqlite_engine, "x", role="root")


def test_authenticate_records_last_use(sqlite_engine: Engine) -> None:
    seed(sqlite_engine)
    issued = create_token(sqlite_engine, "probe")
    assert issued.info.last_used_at is None
    info = authenticate(sqlite_engine, issued.token)
    assert info is not None and info.name == "probe"
    [stored] = [t for t in list_tokens(sqlite_engine) if t.id == issued.info.id]
    assert stored.last_used_at is not None


def _cli(tmp_path: Path) -> typer.Typer:
    """``rareindex tokens`` as the root app registers it, with settings in ``ctx.obj``."""
    root = typer.Typer()

    @root.callback()
    def _root(ctx: typer.Context) -> None:
        ctx.obj = settings_for(tmp_path)

    root.add_typer(tokens_cmd.app, name="tokens")
    return root


def test_tokens_commands_create_list_revoke(sqlite_engine: Engine, tmp_path: Path) -> None:
    seed(sqlite_engine)  # the settings' default database is this same file
    runner = CliRunner()
    cli = _cli(tmp_path)
    created = runner.invoke(cli, ["tokens", "create", "dashboard", "--role", "read"])
    assert created.exit_code == 0, created.output
    token = next(line for line in created.output.splitlines() if line.startswith("rit_"))
    assert "shown once" in created.output
    listed = runner.invoke(cli, ["tokens", "list"])
    assert listed.exit_code == 0
    assert "dashboard" in listed.output and "read" in listed.output
    assert token not in listed.output
    assert "3 tokens, 3 live" in listed.output

    with TestClient(make_app(sqlite_engine, tmp_path)) as client:
        assert client.get("/api/admin/connectors", headers=bearer(token)).status_code == 200
        revoked = runner.invoke(cli, ["tokens", "revoke", "dashboard"])
        assert revoked.exit_code == 0 and "revoked tok_" in revoked.output
        assert client.get("/api/admin/connectors", headers=bearer(token)).status_code == 401
    assert "3 tokens, 2 live" in runner.invoke(cli, ["tokens", "list"]).output
    again = runner.invoke(cli, ["tokens", "revoke", "dashboard"])
    assert again.exit_code != 0
    assert isinstance(again.exception, TokenError)
