"""The fleet's commands: ``rareindex worker``, ``scheduler``, ``deadletters requeue`` and ``api``.

They live here, above the index (workers import rareindex, never the reverse), and
:mod:`workers.cli` registers them by name: this module is imported only when one of them runs.
``deadletters`` is the index's group (:mod:`rareindex.cli.deadletters_cmd`) with ``requeue``
added; ``api`` is the index's server with the broker's requeue.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Annotated

import dramatiq
import typer

from rareindex.cli import api_cmd, console, database, deadletters_cmd, errors, settings_of
from rareindex.cli.connectors_cmd import report_problems
from rareindex.crawl import run_queued
from rareindex.errors import ConfigError, LookupRefused
from rareindex.registry import load_registry
from rareindex.scheduler import Scheduler, TickResult
from rareindex.settings import Settings
from rareindex.storage import BlobStore, Engine, current_revision
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.dead_letters import DeadLetter, list_dead_letters, mark_requeued

from .actors import PipelineSweep, declare_actors, sweep_pipeline
from .broker import configure_broker, require_shared_gates, verify_broker

__all__ = ["api", "deadletters", "scheduler", "worker"]


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    return stop


def _fleet(settings: Settings) -> None:
    if settings.broker_url is None:
        raise ConfigError(
            "RI_BROKER_URL is not set: in embedded mode crawls run in-process "
            "(`rareindex crawl ID`, `rareindex scheduler`); set RI_BROKER_URL=redis://… for workers"
        )


def worker(
    ctx: typer.Context,
    threads: Annotated[int, typer.Option(min=1, max=64, help="Worker threads.")] = 4,
) -> None:
    """Consume crawl messages from the broker until SIGTERM/Ctrl-C, then stop gracefully."""
    settings = settings_of(ctx)
    _fleet(settings)
    require_shared_gates(settings)  # never a fleet of per-process gates
    broker = configure_broker(settings)
    verify_broker(broker)  # a wrong password ends the process here, not in a CRITICAL loop
    db = database(settings)
    if current_revision(db) is None:
        raise ConfigError("the database is empty; run `rareindex db upgrade` first")
    actors = declare_actors(broker, settings, db=db)
    resent = sweep_pipeline(actors, db)
    if resent:
        console.print(f"worker: re-sent {resent} raw records that were never normalized")
    stop = _stop_on_signals()
    process = dramatiq.Worker(broker, worker_threads=threads, worker_timeout=1000)
    process.start()
    console.print(f"worker: {threads} threads on {settings.mode} broker; Ctrl-C to stop")
    stop.wait()
    process.stop(timeout=60_000)  # finish the messages in hand; unacked ones are redelivered
    console.print("worker: stopped")


def scheduler(
    ctx: typer.Context,
    interval: Annotated[float, typer.Option(min=1.0, help="Seconds between ticks.")] = 60.0,
    sweep_every: Annotated[
        float,
        typer.Option(
            min=1.0,
            help="Fleet: seconds between the leader's sweeps for lost normalize messages.",
        ),
    ] = 300.0,
    resend_after: Annotated[
        float,
        typer.Option(
            min=10.0,
            help="Seconds before a queued run nobody picked up is sent again (a lost message).",
        ),
    ] = 1800.0,
) -> None:
    """Lead (one scheduler at a time, fenced) and enqueue due crawls until SIGTERM/Ctrl-C.

    In a fleet the runs go to the broker; embedded, they run here, one after another."""
    settings = settings_of(ctx)
    if settings.broker_url is not None:  # its workers' gates: refuse before enqueueing for them
        require_shared_gates(settings)
    db = database(settings)
    if current_revision(db) is None:
        raise ConfigError("the database is empty; run `rareindex db upgrade` first")
    registry = load_registry(settings.connectors_dir)
    report_problems(registry)
    with db.begin() as conn:  # the scheduler plans from the connectors table: mirror it first
        sync_connectors(conn, registry)
    # The index stages, imported here: every other command starts faster without them.
    from rareindex.certs import record_sightings_from_listings, verify_pending
    from rareindex.health_check import health_due, health_snapshot
    from rareindex.pipeline import process

    pipeline_sweep: PipelineSweep | None = None
    if settings.broker_url is not None:
        actors = declare_actors(configure_broker(settings), settings, db=db)
        pipeline_sweep = PipelineSweep(actors, db, every_s=sweep_every)

        def send(run_id: str) -> object:
            return actors.crawl.send(run_id)

        def check_health() -> None:
            actors.health.send()
    else:
        blobs = BlobStore(settings.blob_dir)

        def send(run_id: str) -> object:
            summary = asyncio.run(run_queued(run_id, db=db, settings=settings))
            if summary is not None and summary.raw_ids:  # embedded: the index stages run here too
                process(db, registry, summary.raw_ids, blobs=blobs)
                record_sightings_from_listings(db)
                with contextlib.suppress(LookupRefused):  # no cert_lookup connector installed
                    asyncio.run(verify_pending(db, settings, registry))
            return summary

        def check_health() -> None:
            health_snapshot(db, settings, registry)

    def after_tick(result: TickResult) -> None:
        if not result.leader:
            return
        if health_due(db):
            check_health()
        if pipeline_sweep is not None:  # embedded: the pipeline runs in-process, nothing is sent
            pipeline_sweep()

    stop = _stop_on_signals()
    console.print(f"scheduler: ticking every {interval:.0f} s; Ctrl-C to stop")
    Scheduler(
        db,
        registry,
        send=send,
        after_tick=after_tick,
        resend_after=timedelta(seconds=resend_after),
    ).run_forever(stop, interval_s=interval)
    console.print("scheduler: stopped")


deadletters = deadletters_cmd.app


@deadletters.command("requeue")
def requeue(
    ctx: typer.Context,
    message_ids: Annotated[list[str] | None, typer.Argument(help="Ids; none: all.")] = None,
) -> None:
    """Send dead letters to their queue again."""
    settings = settings_of(ctx)
    _fleet(settings)
    db = database(settings)
    broker = configure_broker(settings)
    declare_actors(broker, settings, db=db)
    letters = [d for d in list_dead_letters(db) if not message_ids or d.id in message_ids]
    unknown = set(message_ids or ()) - {d.id for d in letters}
    if unknown:
        errors.print(f"error: unknown or already requeued: {', '.join(sorted(unknown))}")
        raise typer.Exit(2)
    for letter in letters:
        _send_again(broker, letter)
        mark_requeued(db, letter.id)
    console.print(f"requeued {len(letters)} dead letters")


def _send_again(broker: dramatiq.Broker, letter: DeadLetter) -> None:
    """A fresh message for a dead letter: its retries start again."""
    broker.declare_queue(letter.queue)
    broker.enqueue(
        dramatiq.Message(
            queue_name=letter.queue,
            actor_name=letter.actor,
            args=tuple(letter.args),
            kwargs=letter.kwargs,
            options={},
        )
    )


def _broker_requeue(settings: Settings, db: Engine) -> Callable[[DeadLetter], None] | None:
    """What ``POST /api/admin/deadletters/{id}/requeue`` sends with (fleet mode only)."""
    if settings.broker_url is None:
        return None
    broker = configure_broker(settings)
    declare_actors(broker, settings, db=db)
    return functools.partial(_send_again, broker)


api = api_cmd.command(requeue_factory=_broker_requeue)
