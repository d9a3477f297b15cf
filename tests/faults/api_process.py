"""``rareindex api`` as an operator starts it, for the exercises that attack or starve it: a
migrated and seeded database (SQLite of the exercise's own unless given), the process on a free
port of
127.0.0.1 (through :class:`~tests.faults.conftest.Processes`, so it is stopped with the rest), and
wait until ``/health`` answers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx

from rareindex.storage import make_engine
from tests.unit.rareindex.api.api_helpers import seed

from .conftest import Processes, connectors_dir, fleet_env, free_port, wait_until


@dataclass(frozen=True)
class LiveApi:
    base: str
    pid: int
    admin_token: str


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def start_api(
    root: Path, *, database_url: str | None = None, broker_url: str | None = None, **extra: str
) -> tuple[Processes, LiveApi]:
    """The API on a seeded database (``database_url``, else SQLite under ``root``); ``extra`` adds
    ``RI_*`` settings. A broker needs PostgreSQL, as in a fleet."""
    url = database_url or f"sqlite:///{root / 'rareindex.db'}"
    engine = make_engine(url)
    data = seed(engine)
    engine.dispose()
    env = fleet_env(
        database_url=url,
        broker_url=broker_url,
        connectors_dir=connectors_dir(root, {}),
        data_dir=root / "data",
        web_port=free_port(),  # nothing listens there: the API fetches nothing here
        **extra,
    )
    fleet = Processes(root, env)
    port = free_port()
    process = fleet.start("api", "api", "--host", "127.0.0.1", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(f"{base}/health"), timeout=60, what="rareindex api")
    except AssertionError:
        fleet.stop_all()
        raise AssertionError(fleet.log("api")) from None
    return fleet, LiveApi(base, process.pid, data.admin_token)
