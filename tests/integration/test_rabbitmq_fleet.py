"""Fleet mode on RabbitMQ: a scheduler and two workers (PostgreSQL, RabbitMQ for the messages,
Redis for the shared gates) crawl a store, normalize and resolve it through the broker's queues,
keep the host's limits and stop on SIGTERM; and a fleet whose gates would be one per process
(RabbitMQ without ``RI_GATES_URL``) refuses to start, naming ``RI_GATES_URL``.

RabbitMQ is started here when it is down and installed (as ``scripts/services.py`` does)."""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock
from urllib.parse import urlsplit

import pika
import pytest
import redis
import structlog
from sqlalchemy import Engine, func, select
from typer.testing import CliRunner

from rareindex.settings import REPO_ROOT
from rareindex.storage import upgrade
from rareindex.storage.catalog_store import import_catalog
from rareindex.storage.normalized_store import pending_count
from rareindex.storage.schema import connector_runs, normalized_records, raw_records
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FakeWeb
from rareindex_fakeweb.sites.catalog import world_catalog
from tests.integration.test_fetch_politeness import GAP_TOLERANCE_S
from tests.subprocess_env import start_module, subprocess_env

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files

RABBITMQ_URL = os.environ.get("RI_TEST_RABBITMQ_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
QUEUES = ("crawl", "normalize", "resolve", "health", "certs")
HOST = "cards-shop.fake.test"


def _services() -> object:
    spec = importlib.util.spec_from_file_location("services", REPO_ROOT / "scripts/services.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _purge(url: str) -> None:
    """Empty our queues (and dramatiq's delay and dead-letter queues) on the broker."""
    connection = pika.BlockingConnection(pika.URLParameters(url))
    try:
        for name in QUEUES:
            for queue in (name, f"{name}.DQ", f"{name}.XQ"):
                channel = connection.channel()
                try:
                    channel.queue_purge(queue)
                except pika.exceptions.ChannelClosedByBroker:  # never declared: nothing in it
                    continue
                channel.close()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def rabbitmq_url() -> Iterator[str]:
    """The local RabbitMQ, started when it is down (skip, or fail under CI=true, without it)."""
    parts = urlsplit(RABBITMQ_URL)
    services = _services()
    if not services.ensure("rabbitmq", parts.port or 5672):  # type: ignore[attr-defined]
        reason = "RabbitMQ is not reachable on 127.0.0.1:5672 and could not be started"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    _purge(RABBITMQ_URL)
    yield RABBITMQ_URL
    _purge(RABBITMQ_URL)


def _connectors(root: Path) -> Path:
    (root / "shopify").mkdir(parents=True)
    store = REPO_ROOT / "connectors" / "shopify" / "cards-shop.toml"
    (root / "shopify" / "cards-shop.toml").write_text(store.read_text())
    (root / "domains.json").write_text((REPO_ROOT / "connectors" / "domains.json").read_text())
    return root


def _settled(db: Engine) -> bool:
    with db.connect() as conn:
        raw = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
        normalized = conn.execute(
            select(func.count(func.distinct(normalized_records.c.raw_id)))
        ).scalar_one()
        return raw > 0 and raw == normalized and pending_count(conn) == 0


def _succeeded(db: Engine) -> set[str]:
    with db.connect() as conn:
        return set(
            conn.execute(
                select(connector_runs.c.connector_id).where(connector_runs.c.status == "succeeded")
            ).scalars()
        )


def test_a_fleet_on_rabbitmq_crawls_indexes_and_keeps_the_host_limits(
    rabbitmq_url: str, redis_url: str, pg_url: str, pg_engine: Engine, tmp_path: Path
) -> None:
    upgrade(pg_engine)
    import_catalog(pg_engine, world_catalog(7))
    gates_url = f"{redis_url.rsplit('/', 1)[0]}/{secrets.randbelow(8) + 8}"
    redis.Redis.from_url(gates_url).flushdb()
    web = FakeWeb()
    with serve_asgi(web.app) as base:
        env = subprocess_env(
            {
                "RI_DATABASE_URL": pg_url,
                "RI_BROKER_URL": rabbitmq_url,
                "RI_GATES_URL": gates_url,
                "RI_CONNECTORS_DIR": str(_connectors(tmp_path / "connectors")),
                "RI_DATA_DIR": str(tmp_path),
                "RI_CONNECT_TO": json.dumps({HOST: f"127.0.0.1:{urlsplit(base).port}"}),
                "RI_LOG_LEVEL": "warning",
            }
        )

        def start(*args: str) -> subprocess.Popen[str]:
            return start_module("workers", *args, env=env)

        processes = [
            start("worker", "--threads", "2"),
            start("worker", "--threads", "2"),
            start("scheduler", "--interval", "1"),
        ]
        try:
            deadline = time.monotonic() + 60
            while not (_succeeded(pg_engine) == {"cards-shop"} and _settled(pg_engine)):
                assert time.monotonic() < deadline, "the RabbitMQ fleet did not finish in 60 s"
                assert all(p.poll() is None for p in processes), "a fleet process died"
                time.sleep(0.3)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            outputs = [p.communicate(timeout=60) for p in processes]
    assert [p.returncode for p in processes] == [0, 0, 0], outputs
    assert all("stopped" in out for out, _ in outputs)

    with pg_engine.connect() as conn:
        raws = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
        matched = conn.execute(
            select(func.count())
            .select_from(normalized_records)
            .where(normalized_records.c.asset_id.is_not(None))
        ).scalar_one()
    assert raws == 656 and matched > 0  # the store's 656 variants, resolved by the workers
    log = web.log(HOST)
    assert log.requests > 0 and log.max_in_flight <= 4  # the *.fake.test policy
    gap = log.min_gap()
    assert gap is None or gap >= 0.020 - GAP_TOLERANCE_S


@pytest.mark.parametrize("command", [["worker"], ["scheduler", "--interval", "1"]])
def test_a_fleet_whose_gates_would_be_per_process_refuses_to_start(
    rabbitmq_url: str, pg_url: str, pg_engine: Engine, tmp_path: Path, command: list[str]
) -> None:
    from workers.cli import app  # the full CLI: the fleet's commands are registered on import

    upgrade(pg_engine)
    env: dict[str, str | None] = {
        "RI_DATABASE_URL": pg_url,
        "RI_BROKER_URL": rabbitmq_url,
        "RI_GATES_URL": None,  # unset: RabbitMQ cannot hold the gates
        "RI_CONNECTORS_DIR": str(_connectors(tmp_path / "connectors")),
        "RI_DATA_DIR": str(tmp_path),
    }
    stopped = threading.Event()
    stopped.set()  # were it to start anyway, it would stop at once and exit 0 (and fail here)
    with mock.patch("workers.fleet_cmd._stop_on_signals", return_value=stopped):
        result = CliRunner().invoke(app, command, env=env)
    structlog.reset_defaults()  # the CLI logged to the runner's stderr, closed now
    assert isinstance(result.exception, Exception) and result.exit_code != 0
    message = str(result.exception)
    assert "RI_GATES_URL is not set" in message and "RI_GATES_URL=redis://" in message
    with pg_engine.connect() as conn:  # refused before anything was enqueued
        assert conn.execute(select(func.count()).select_from(connector_runs)).scalar_one() == 0
