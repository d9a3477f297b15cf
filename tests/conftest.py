"""Shared fixtures. Integration fixtures give each test session its own PostgreSQL database and
Redis namespace on 127.0.0.1. A service that is down skips its tests with the reason — unless
CI=true, where a missing service fails the run (``make test`` starts services first)."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from rareindex.storage import make_engine

PG_ADMIN_URL = os.environ.get("RI_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("RI_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _require(service: str, host: str, port: int) -> None:
    try:
        with socket.create_connection((host, port), timeout=2):
            return
    except OSError as exc:
        reason = f"{service} is not reachable on {host}:{port} ({exc}); run `make services`"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test session, dropped afterwards."""
    _require("PostgreSQL", "127.0.0.1", 5432)
    name = f"ri_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin = make_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture
def pg_engine(pg_url: str) -> Iterator[Engine]:
    """An engine on the session's PostgreSQL database, its schema reset to empty afterwards.

    The reset drops and recreates the ``public`` schema (every migration's tables, partitions,
    views, functions and types live there) instead of running every downgrade: 0.2-0.6 s against
    0.5-0.8 s a test, and no client CPU. The downgrades themselves are tested in test_schema and
    faults/test_migration_roundtrip."""
    engine = make_engine(pg_url)
    try:
        yield engine
    finally:
        engine.dispose()  # the test's pooled connections would hold locks the drop waits for
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP SCHEMA public CASCADE")
            conn.exec_driver_sql("CREATE SCHEMA public")
        engine.dispose()


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The local Redis (tests use their own key namespaces)."""
    _require("Redis", "127.0.0.1", 6379)
    return REDIS_URL


@pytest.fixture
def sqlite_engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a fresh SQLite file."""
    engine = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    yield engine
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def any_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """The same test on embedded SQLite and on real PostgreSQL."""
    if request.param == "sqlite":
        return request.getfixturevalue("sqlite_engine")  # type: ignore[no-any-return]
    return request.getfixturevalue("pg_engine")  # type: ignore[no-any-return]


@pytest.fixture(autouse=True)
def _own_data_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test its own ``RI_DATA_DIR`` unless it sets one: embedded processes share host gates
    through files there (a budget spent or a breaker opened by one test must not reach the next),
    and blobs and the demo database land there instead of the checkout."""
    if "RI_DATA_DIR" not in os.environ:
        monkeypatch.setenv("RI_DATA_DIR", str(tmp_path_factory.mktemp("ri-data")))


SLOW_FILES_FIRST = (
    "docs/test_docs_commands.py",
    "integration/test_backfills.py",
    "integration/test_fleet_crawl.py",
    "integration/test_catalog_import_cli.py",
    "integration/test_cert_verify.py",
    "integration/test_events_outbox.py",
    "faults/test_events_failover.py",
    "integration/test_cli_postgres.py",
    "integration/test_crawl_runs.py",
    "integration/test_fx_views.py",
    "faults/test_redis_restart.py",
    "integration/test_pipeline.py",
    "unit/rareindex/test_cli.py",
    "unit/rareindex/api/test_api_auth.py",
    "unit/fakeweb/test_fake_sites.py",
    "integration/test_health_worker.py",
    "integration/test_report_browser.py",
    "integration/test_schema.py",
    "integration/test_catalog_resolve_cli.py",
    "integration/test_events_api.py",
    "faults/test_postgres_restart.py",
    "docs/test_newcomer_errors.py",
    "integration/test_pipeline_statements.py",
    "unit/bench/test_scale_catalog.py",
    "unit/rareindex/test_fx.py",
    "faults/test_normalizer_killed.py",
)
"""The test files that took longest (``make test`` of 2026-12-03, 3 workers on 2 vCPUs: 220 s
down to 38 s each, most of 1,000 worker-seconds), longest first. They are collected first, and
``make test`` hands files to its workers in collection order (``--no-loadscope-reorder``; xdist's
own order, most tests first, left one-test files of a minute or two to the end, where one worker
ran them alone while the others sat idle). A file missing here only starts later."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/integration/ carries the ``integration`` marker; the slowest files
    come first (:data:`SLOW_FILES_FIRST`), the rest keep their order."""
    tests = Path(__file__).parent
    rank = {name: number for number, name in enumerate(SLOW_FILES_FIRST)}
    for item in items:
        if "tests/integration/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.integration)
    items.sort(
        key=lambda item: rank.get(
            item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else "",
            len(rank),
        )
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``pytest -m serial`` (make test's second pass) imports only the test files that name the
    marker: collecting all of them again (the schemathesis file builds its cases at collection)
    cost ~15 CPU-seconds before the serial tests could start. A test is marked ``serial`` in its
    own file (``pytestmark = pytest.mark.serial`` or the decorator), never from a hook."""
    if config.getoption("markexpr", "") != "serial":
        return None
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return "serial" not in collection_path.read_text(encoding="utf-8") or None
    return None
