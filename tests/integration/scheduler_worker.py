"""A scheduler process for the two-process leader test: once imported and connected it prints
``ready`` and reads the start time from stdin (so both processes tick over the same window however
long their imports take on a loaded machine), then ticks against one database in a tight loop for
SECONDS, "crawling" every run it sends at once (so a second, unfenced leader would find the
connector free again), and prints a JSON summary.

``python -m tests.integration.scheduler_worker URL HOLDER SECONDS``
"""

from __future__ import annotations

import json
import logging
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog
from sqlalchemy import select, update

from rareindex.scheduler import Scheduler
from rareindex.storage import make_engine
from rareindex.storage.schema import connector_runs, connectors
from rareindex_connectors import ConnectorMeta


@dataclass
class StoredConnector:
    meta: ConnectorMeta
    version: str = "1"
    parser_version: str = "1"


def main(url: str, holder: str, seconds: float) -> None:
    db = make_engine(url)
    # Logs go to stderr (warnings and up): stdout carries only the JSON summary.
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    with db.connect() as conn:
        registry: list[Any] = [
            StoredConnector(ConnectorMeta.model_validate(meta))
            for meta in conn.execute(select(connectors.c.meta)).scalars()
        ]
    sent: list[str] = []

    def crawl_at_once(run_id: str) -> None:
        sent.append(run_id)
        now = datetime.now(UTC)
        with db.begin() as conn:
            conn.execute(
                update(connector_runs)
                .where(connector_runs.c.id == run_id)
                .values(status="succeeded", started_at=now, finished_at=now, lease_token=1)
            )

    scheduler = Scheduler(
        db, registry, holder_id=holder, lease_seconds=30, send=crawl_at_once, env={}
    )
    print("ready", flush=True)
    start_at = float(sys.stdin.readline())
    time.sleep(max(0.0, start_at - time.time()))
    leading = following = lost = 0
    while time.time() < start_at + seconds:
        result = scheduler.tick()
        leading += result.leader
        following += not result.leader
        lost += result.lease_lost
        time.sleep(0.01)
    db.dispose()
    print(
        json.dumps(
            {
                "holder": holder,
                "leading": leading,
                "following": following,
                "lost": lost,
                "sent": sent,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
