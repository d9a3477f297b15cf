"""The operator's commands on SQLite and PostgreSQL: ``rareindex connectors pause|resume|disable|
enable|maintenance ID --reason`` and their admin API twins store the status with who and why and
log it; health shows DISABLED and MAINTENANCE; the scheduler skips such a connector with the
reason logged, and ``rareindex crawl`` refuses it; ``rareindex deadletters list --json``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import structlog
from fastapi.testclient import TestClient
from sqlalchemy import Engine, delete, select
from structlog.testing import capture_logs
from typer.testing import CliRunner, Result

from rareindex.api import create_app
from rareindex.cli import _common, app
from rareindex.registry import load_registry
from rareindex.scheduler import Scheduler
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import downgrade, make_engine, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.dead_letters import mark_requeued, record_dead_letter
from rareindex.storage.schema import (
    api_tokens,
    connector_health,
    connector_runs,
    connectors,
    dead_letters,
    leases,
    sources,
)
from rareindex.storage.tokens import create_token

STORES = ("shopify/cards-shop.toml", "woocommerce/comics-woo.toml")
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def connectors_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("connectors")
    for relative in STORES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / "connectors" / relative, root / relative)
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", root / "domains.json")
    return root


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
    """(url, engine) of a migrated, empty database of each kind."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'ops.db'}"
        engine = make_engine(url)
        upgrade(engine)
        yield url, engine
        engine.dispose()
        return
    engine = request.getfixturevalue("migrated_pg")
    yield engine.url.render_as_string(hide_password=False), engine
    with engine.begin() as conn:
        for table in (
            dead_letters,
            connector_health,
            connector_runs,
            leases,
            api_tokens,
            connectors,
            sources,
        ):
            conn.execute(delete(table))


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """The CLI configures structlog to the runner's (then closed) stderr: undo it after."""
    yield
    structlog.reset_defaults()


def cli(url: str, connectors_dir: Path, tmp_path: Path, *args: str) -> Result:
    env = {
        "RI_DATABASE_URL": url,
        "RI_CONNECTORS_DIR": str(connectors_dir),
        "RI_DATA_DIR": str(tmp_path),
        "RI_LOG_FORMAT": "json",
        "RI_LOG_LEVEL": "info",
        "LOGNAME": "alice",  # what getpass.getuser() reads first
    }
    created: list[Engine] = []

    def tracked(url: str, **kwargs: Any) -> Engine:
        engine = make_engine(url, **kwargs)
        created.append(engine)
        return engine

    with mock.patch.object(_common, "make_engine", tracked):  # closed after, as a process would
        result = CliRunner().invoke(app, list(args), env=env)
    for engine in created:
        engine.dispose()
    return result


def events(result: Result, name: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == name]


def note(engine: Engine, connector_id: str) -> tuple[Any, ...]:
    with engine.connect() as conn:
        row = conn.execute(
            select(
                connectors.c.status,
                connectors.c.status_changed_by,
                connectors.c.status_reason,
                connectors.c.status_changed_at,
            ).where(connectors.c.id == connector_id)
        ).one()
    assert row.status_changed_at is not None or row.status_changed_by is None
    return row.status, row.status_changed_by, row.status_reason


def test_cli_commands_store_and_log_who_and_why_and_health_shows_them(
    db: tuple[str, Engine], connectors_dir: Path, tmp_path: Path
) -> None:
    url, engine = db

    def run(*args: str) -> Result:
        return cli(url, connectors_dir, tmp_path, *args)

    paused = run("connectors", "pause", "cards-shop", "--reason", "supplier asked us to slow down")
    assert paused.exit_code == 0, paused.output
    assert "cards-shop: active -> paused (by user:alice: supplier asked" in paused.stdout
    assert note(engine, "cards-shop") == ("paused", "user:alice", "supplier asked us to slow down")
    [logged] = events(paused, "connector.status_changed")
    assert logged["connector"] == "cards-shop" and logged["action"] == "pause"
    assert logged["before"] == "active" and logged["status"] == "paused"
    assert logged["by"] == "user:alice" and logged["reason"] == "supplier asked us to slow down"

    assert run("connectors", "resume", "cards-shop").exit_code == 0
    assert note(engine, "cards-shop") == ("active", "user:alice", None)

    assert run("connectors", "maintenance", "cards-shop", "--reason", "API v2").exit_code == 0
    refused = run("connectors", "resume", "cards-shop")  # maintenance was set on purpose
    assert refused.exit_code == 1 and "`enable` ends maintenance" in refused.stderr
    assert note(engine, "cards-shop") == ("maintenance", "user:alice", "API v2")

    assert run("connectors", "disable", "comics-woo", "--reason", "shop closed").exit_code == 0
    assert run("connectors", "pause", "comics-woo").exit_code == 1  # disabled: enable first
    health = run("health", "--json", "--no-probe")
    assert health.exit_code == 0, health.output
    statuses = {s["connector_id"]: s["status"] for s in json.loads(health.stdout)}
    assert statuses == {"cards-shop": "MAINTENANCE", "comics-woo": "DISABLED"}

    crawl = run("crawl", "comics-woo")  # nothing is fetched for a disabled connector
    assert crawl.exit_code != 0
    assert "'comics-woo' is disabled by user:alice: shop closed" in str(crawl.exception)
    assert "rareindex connectors enable comics-woo" in str(crawl.exception)

    again = run("connectors", "disable", "comics-woo", "--reason", "a second time")
    assert again.exit_code == 0 and "already disabled" in again.stdout
    assert events(again, "connector.status_unchanged")
    assert note(engine, "comics-woo") == ("disabled", "user:alice", "shop closed")  # kept

    for connector_id in ("cards-shop", "comics-woo"):
        enabled = run("connectors", "enable", connector_id, "--reason", "fixed")
        assert enabled.exit_code == 0, enabled.output
        assert note(engine, connector_id) == ("active", "user:alice", "fixed")
    unknown = run("connectors", "pause", "ghost")
    assert unknown.exit_code == 2 and "no connector 'ghost' is stored" in unknown.stderr


def test_scheduler_skips_paused_disabled_and_maintenance_with_the_reason_logged(
    db: tuple[str, Engine], connectors_dir: Path, tmp_path: Path
) -> None:
    url, engine = db
    registry = load_registry(connectors_dir)
    with engine.begin() as conn:
        sync_connectors(conn, registry)
    scheduler = Scheduler(engine, registry, env={})

    def run(*args: str) -> Result:
        return cli(url, connectors_dir, tmp_path, *args)

    for action, reason in (("pause", "too fast"), ("maintenance", "API v2"), ("disable", "gone")):
        assert run("connectors", action, "cards-shop", "--reason", reason).exit_code == 0
        status = {"pause": "paused", "maintenance": "maintenance", "disable": "disabled"}[action]
        structlog.reset_defaults()
        with capture_logs() as logs:
            result = scheduler.tick(T0)
        assert result.leader
        with engine.connect() as conn:
            queued = set(conn.execute(select(connector_runs.c.connector_id)).scalars())
        assert "cards-shop" not in queued and "comics-woo" in queued
        [skipped] = [
            e for e in logs if e["event"] == "scheduler.skipped" and e["connector"] == "cards-shop"
        ]
        assert skipped["reason"] == "not_active" and skipped["status"] == status
        assert skipped["status_reason"] == reason and skipped["status_changed_by"] == "user:alice"
        with engine.begin() as conn:
            conn.execute(delete(connector_runs))
            conn.execute(delete(leases))
        scheduler.lease = None
        if action == "disable":
            break
        assert run("connectors", "enable", "cards-shop").exit_code == 0
    assert run("connectors", "enable", "cards-shop").exit_code == 0
    with capture_logs() as logs:
        assert scheduler.tick(T0).enqueued  # active again: both are due
    with engine.connect() as conn:
        queued = set(conn.execute(select(connector_runs.c.connector_id)).scalars())
    assert queued == {"cards-shop", "comics-woo"}
    assert not [e for e in logs if e["event"] == "scheduler.skipped"]


def test_the_api_mirrors_the_commands_with_the_token_as_who(
    db: tuple[str, Engine], connectors_dir: Path, tmp_path: Path
) -> None:
    _, engine = db
    with engine.begin() as conn:
        sync_connectors(conn, load_registry(connectors_dir))
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=tmp_path,
        connectors_dir=connectors_dir,
        database_url=None,
        broker_url=None,
        gates_url=None,
    )
    admin = {"Authorization": f"Bearer {create_token(engine, 'ops-bot').token}"}
    reader = {"Authorization": f"Bearer {create_token(engine, 'grafana', role='read').token}"}
    client = TestClient(create_app(settings, engine=engine))

    def post(connector_id: str, action: str, **body: Any) -> Any:
        return client.post(
            f"/api/admin/connectors/{connector_id}/{action}",
            headers=admin,
            json=body or None,
        )

    with capture_logs() as logs:
        answer = post("cards-shop", "maintenance", reason="vendor API v2")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "id": "cards-shop",
        "previous_status": "active",
        "status": "maintenance",
    }
    assert note(engine, "cards-shop") == ("maintenance", "token:ops-bot", "vendor API v2")
    [logged] = [e for e in logs if e["event"] == "connector.status_changed"]
    assert logged["by"] == "token:ops-bot"
    assert logged["reason"] == "vendor API v2" and logged["action"] == "maintenance"

    assert post("cards-shop", "resume").status_code == 409  # maintenance: enable ends it
    assert post("cards-shop", "pause").json()["error"] == "status_conflict"
    assert post("cards-shop", "enable").json()["status"] == "active"
    assert post("cards-shop", "pause").json()["status"] == "paused"  # no body: no reason
    assert note(engine, "cards-shop") == ("paused", "token:ops-bot", None)
    assert post("cards-shop", "resume", reason="ok now").json()["status"] == "active"
    assert post("comics-woo", "disable", reason="closed").json()["previous_status"] == "active"
    assert post("comics-woo", "maintenance").status_code == 409
    listed = client.get("/api/admin/connectors", headers=reader).json()["connectors"]
    assert {c["id"]: c["status"] for c in listed} == {
        "cards-shop": "active",
        "comics-woo": "disabled",
    }
    assert post("ghost", "disable").status_code == 404
    assert post("cards-shop", "disable", note="x").status_code == 422  # unknown body keys
    refused = client.post("/api/admin/connectors/cards-shop/disable", headers=reader)
    assert refused.status_code == 403
    assert note(engine, "cards-shop")[0] == "active"


def test_deadletters_list_as_text_and_json(
    db: tuple[str, Engine], connectors_dir: Path, tmp_path: Path
) -> None:
    url, engine = db
    for message_id, raw_id in (("m-1", "raw_01A"), ("m-2", "raw_01B")):
        record_dead_letter(
            engine,
            message_id=message_id,
            queue="normalize",
            actor="normalize_raw",
            args=[[raw_id]],
            kwargs={},
            retries=5,
            error="DatabaseError: gone",
        )
    assert mark_requeued(engine, "m-2")

    listed = cli(url, connectors_dir, tmp_path, "deadletters", "list", "--json")
    assert listed.exit_code == 0, listed.output
    [letter] = json.loads(listed.stdout)
    assert letter["id"] == "m-1" and letter["actor"] == "normalize_raw"
    assert letter["args"] == [["raw_01A"]] and letter["retries"] == 5
    assert letter["error"] == "DatabaseError: gone" and letter["requeued_at"] is None
    assert datetime.fromisoformat(letter["failed_at"]).tzinfo is not None
    every = json.loads(
        cli(url, connectors_dir, tmp_path, "deadletters", "list", "--all", "--json").stdout
    )
    assert [d["id"] for d in every] == ["m-1", "m-2"] and every[1]["requeued_at"] is not None

    text = cli(url, connectors_dir, tmp_path, "deadletters")  # bare: the same list, as text
    assert text.exit_code == 0 and "normalize_raw(['raw_01A'])" in text.stdout
    assert "1 dead letters" in text.stdout
