"""The actors: decode a message (ids only), call one pipeline function, return.

Declared on a given broker by :func:`declare_actors`, so tests and processes choose their broker
explicitly instead of through import-time globals.

Example:
    >>> broker = configure_broker(settings)                  # doctest: +SKIP
    >>> actors = declare_actors(broker, settings)            # doctest: +SKIP
    >>> actors.crawl.send("run_01J…")                        # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import dramatiq
from dramatiq.middleware import Retries

from rareindex.crawl import run_queued
from rareindex.errors import ConfigError
from rareindex.settings import Settings
from rareindex.storage import Engine, make_engine

from .dead_letters import DeadLetters

__all__ = ["CRAWL_QUEUE", "Actors", "declare_actors"]

CRAWL_QUEUE = "crawl"


@dataclass(frozen=True, slots=True)
class Actors:
    """The actors of one process."""

    crawl: dramatiq.Actor[[str], None]


def declare_actors(
    broker: dramatiq.Broker,
    settings: Settings,
    *,
    db: Engine | None = None,
    max_retries: int = 5,
    min_backoff_ms: int = 5_000,
) -> Actors:
    """Declare the actors on ``broker`` (and keep their dead letters in the database)."""
    db = db or make_engine(settings.database_url_or_default())
    # Before Retries in the list, because dramatiq runs "after" hooks in reverse: Retries must
    # have marked the message failed by the time DeadLetters looks at it.
    broker.add_middleware(DeadLetters(db), before=Retries)

    def crawl_run(run_id: str) -> None:
        """Run (or take over) one queued crawl run. A run that failed is recorded as failed
        by the crawler and is not retried here; infrastructure errors are (with backoff)."""
        asyncio.run(run_queued(run_id, db=db, settings=settings))

    crawl = dramatiq.actor(
        broker=broker,
        actor_name="crawl_run",
        queue_name=CRAWL_QUEUE,
        max_retries=max_retries,
        min_backoff=min_backoff_ms,
        max_backoff=600_000,
        throws=(ConfigError,),
        time_limit=int((settings.max_run_minutes + 5) * 60_000),
    )(crawl_run)
    return Actors(crawl=crawl)
