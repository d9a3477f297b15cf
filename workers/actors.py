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
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dramatiq
import structlog
from dramatiq.middleware import Retries

from rareindex.crawl import run_queued
from rareindex.errors import ConfigError, LookupRefused
from rareindex.heap import frozen_heap
from rareindex.registry import Registry, load_registry
from rareindex.settings import Settings
from rareindex.storage import BlobStore, Engine, make_engine
from rareindex.storage.normalized_store import pending_count, unnormalized_raw_ids

from .dead_letters import DeadLetters

__all__ = [
    "CERTS_QUEUE",
    "CRAWL_QUEUE",
    "HEALTH_QUEUE",
    "NORMALIZE_QUEUE",
    "RAW_BATCH",
    "RESOLVE_QUEUE",
    "Actors",
    "PipelineSweep",
    "declare_actors",
    "held_messages",
    "sweep_pipeline",
]

log = structlog.get_logger(__name__)

CRAWL_QUEUE = "crawl"
NORMALIZE_QUEUE = "normalize"
RESOLVE_QUEUE = "resolve"
HEALTH_QUEUE = "health"
CERTS_QUEUE = "certs"
CERT_BATCH = 200
RAW_BATCH = 500
"""Raw ids per normalize message: batches, not single records (a worker handles ~2,000
messages/s, a batch of 500 keeps the broker far from the bottleneck)."""


@dataclass(frozen=True, slots=True)
class Actors:
    """The actors of one process."""

    crawl: dramatiq.Actor[[str], None]
    normalize: dramatiq.Actor[[list[str]], None]
    resolve: dramatiq.Actor[[], None]
    health: dramatiq.Actor[[], None]
    certs: dramatiq.Actor[[], None]


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

    registry: list[Registry] = []

    def the_registry() -> Registry:
        if not registry:
            registry.append(load_registry(settings.connectors_dir))
        return registry[0]

    def crawl_run(run_id: str) -> None:
        """Run (or take over) one queued crawl run, then hand its raw records to the
        normalizer in batches. A run that failed is recorded as failed by the crawler and is
        not retried here; infrastructure errors are (with backoff)."""
        summary = asyncio.run(run_queued(run_id, db=db, settings=settings))
        for start in range(0, len(summary.raw_ids) if summary else 0, RAW_BATCH):
            normalize.send(summary.raw_ids[start : start + RAW_BATCH])  # type: ignore[union-attr]

    def normalize_raw_ids(raw_ids: list[str]) -> None:
        """Normalize a batch of raw records (idempotent), then ask for resolution."""
        from rareindex.normalizer import normalize_raw

        with frozen_heap():
            normalize_raw(db, the_registry(), raw_ids, blobs=BlobStore(settings.blob_dir))
        resolve.send()

    def snapshot_health() -> None:
        """Assess every connector and store a ``connector_health`` snapshot (idempotent)."""
        from rareindex.health_check import health_snapshot

        health_snapshot(db, settings, the_registry())

    def resolve_all() -> None:
        """Resolve every pending normalized record (idempotent upserts: a duplicate is harmless),
        then ask for the certificates the new listings show to be verified."""
        from rareindex.indexer import resolve_pending

        with frozen_heap():
            resolve_pending(db)
        certs.send()

    def verify_certs() -> None:
        """Record cert sightings of stored listings and verify pending certificates through the
        ``cert_lookup`` connectors, a batch at a time (a full batch asks for another)."""
        from rareindex.certs import record_sightings_from_listings, verify_pending

        record_sightings_from_listings(db)
        summary = asyncio.run(verify_pending(db, settings, the_registry(), limit=CERT_BATCH))
        if summary.checked >= CERT_BATCH:
            certs.send()

    def declare(fn: Any, name: str, queue: str, **options: Any) -> Any:
        """One actor on ``broker`` with the fleet's retry policy (``options`` override it)."""
        policy: dict[str, Any] = {
            "max_retries": max_retries,
            "min_backoff": min_backoff_ms,
            "max_backoff": 600_000,
            "throws": (ConfigError,),
        }
        return dramatiq.actor(broker=broker, actor_name=name, queue_name=queue, **policy | options)(
            fn
        )

    run_minutes = settings.max_run_minutes + 5
    crawl = declare(crawl_run, "crawl_run", CRAWL_QUEUE, time_limit=int(run_minutes * 60_000))
    normalize = declare(normalize_raw_ids, "normalize_raw", NORMALIZE_QUEUE)
    resolve = declare(resolve_all, "resolve_pending", RESOLVE_QUEUE)
    health = declare(
        snapshot_health, "health_snapshot", HEALTH_QUEUE, max_retries=3, time_limit=15 * 60_000
    )
    certs = declare(
        verify_certs,
        "verify_certs",
        CERTS_QUEUE,
        throws=(ConfigError, LookupRefused),
        time_limit=30 * 60_000,
    )
    return Actors(crawl=crawl, normalize=normalize, resolve=resolve, health=health, certs=certs)


def sweep_pipeline(actors: Actors, db: Engine, *, limit: int = 50_000) -> int:
    """Re-send work whose message was lost: raw records never normalized, and a resolve when
    records are pending. Returns how many raw records were re-sent. Durable state is in the
    database, so this is safe to run at any time (workers run it when they start, the scheduler
    leader every few minutes: :class:`PipelineSweep`)."""
    with db.connect() as conn:
        raw_ids = unnormalized_raw_ids(conn, limit=limit)
        pending = pending_count(conn)
    for start in range(0, len(raw_ids), RAW_BATCH):
        actors.normalize.send(raw_ids[start : start + RAW_BATCH])
    if pending or raw_ids:
        actors.resolve.send()
    return len(raw_ids)


def held_messages(broker: dramatiq.Broker, queue_name: str) -> int | None:
    """How many messages ``broker`` holds for ``queue_name`` — waiting, delayed for a retry and
    (Redis) in a worker's hands — or None when this broker cannot tell."""
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.brokers.stub import StubBroker

    if isinstance(broker, RedisBroker):
        # A message stays in "<queue>.msgs" until it is acked; retries wait in "<queue>.DQ.msgs".
        prefix = f"{broker.namespace}:{queue_name}"
        return int(broker.client.hlen(f"{prefix}.msgs")) + int(
            broker.client.hlen(f"{prefix}.DQ.msgs")
        )
    if isinstance(broker, StubBroker):
        return sum(
            int(broker.queues[name].qsize())
            for name in (queue_name, f"{queue_name}.DQ")
            if name in broker.queues
        )
    if type(broker).__name__ == "RabbitmqBroker":  # without importing pika where it is not used
        waiting, delayed, _dead = broker.get_queue_message_counts(queue_name)  # type: ignore[attr-defined]
        return int(waiting) + int(delayed)
    return None


class PipelineSweep:
    """:func:`sweep_pipeline` from a long-running process (the scheduler leader's ``after_tick``),
    so normalize and resolve work whose message was lost — a Redis restart, a worker killed
    between its commit and its send — is found without restarting a worker.

    Call it every tick; it sweeps at most once per ``every_s`` (the first call sweeps), and at
    most ``limit`` raw records each time. A lost message cannot be told from one still waiting,
    so a due sweep waits for a tick when the broker holds no normalize message (each sweep would
    otherwise re-send the whole backlog) — but no longer than ``max_wait_s``: in a fleet whose
    queue never drains it sweeps anyway (normalizing twice is a no-op, and ``limit`` bounds it).

    Args:
        actors: where the re-sent messages go (their broker is the one asked for its queue).
        db: where the unnormalized raw records are found.
        every_s: seconds between sweeps.
        limit: raw records re-sent per sweep at most.
        max_wait_s: how long a due sweep waits for an idle normalize queue (default 6 periods).
        clock: monotonic seconds (a test seam).
    """

    def __init__(
        self,
        actors: Actors,
        db: Engine,
        *,
        every_s: float = 300.0,
        limit: int = 10_000,
        max_wait_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.actors = actors
        self.db = db
        self.every_s = every_s
        self.limit = limit
        self.max_wait_s = 6 * every_s if max_wait_s is None else max_wait_s
        self.clock = clock
        self._due_at: float | None = None  # None: due at the first call

    def __call__(self) -> int | None:
        """Sweep if one is due: how many raw records were re-sent, or None when none was made."""
        now = self.clock()
        if self._due_at is None:
            self._due_at = now
        due_at = self._due_at
        if now < due_at:
            return None
        held = held_messages(self.actors.normalize.broker, NORMALIZE_QUEUE)
        if held and now - due_at < self.max_wait_s:
            log.debug("pipeline.sweep_deferred", queue=NORMALIZE_QUEUE, held=held)
            return None
        resent = sweep_pipeline(self.actors, self.db, limit=self.limit)
        self._due_at = now + self.every_s  # only once done: a failed sweep is tried next tick
        log.info("pipeline.swept", raw_resent=resent, limit=self.limit, held=held)
        return resent
