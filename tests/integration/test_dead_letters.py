"""Fleet plumbing over real Redis and PostgreSQL: a message failing every retry lands in the
dead-letter list, and the CLI requeues it."""

from __future__ import annotations

import secrets
import threading

import dramatiq
from sqlalchemy import Engine

from rareindex.settings import Settings
from rareindex.storage import upgrade
from rareindex.storage.dead_letters import list_dead_letters
from tests.cli_helpers import run_cli
from workers.actors import declare_actors
from workers.broker import configure_broker


def test_a_message_failing_every_retry_is_dead_lettered_and_requeued(
    redis_url: str, pg_url: str, pg_engine: Engine
) -> None:
    upgrade(pg_engine)
    namespace_db = f"{redis_url.rsplit('/', 1)[0]}/{secrets.randbelow(8) + 8}"
    settings = Settings(_env_file=None, broker_url=namespace_db, database_url=pg_url)  # type: ignore[call-arg]
    broker = configure_broker(settings)
    broker.flush_all()
    declare_actors(broker, settings, db=pg_engine)
    attempts: list[str] = []
    healed = threading.Event()
    done = threading.Event()

    @dramatiq.actor(
        broker=broker,
        actor_name="flaky",
        queue_name="crawl",
        max_retries=2,
        min_backoff=10,
        max_backoff=50,
    )
    def flaky(item: str) -> None:
        attempts.append(item)
        if not healed.is_set():
            if len(attempts) == 3:
                done.set()
            raise RuntimeError("the database is down")
        done.set()

    worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
    worker.start()
    try:
        flaky.send("raw_01A")
        assert done.wait(15), f"expected 3 attempts, saw {attempts}"
        for _ in range(100):  # the middleware records right after the last attempt
            letters = list_dead_letters(pg_engine)
            if letters:
                break
            threading.Event().wait(0.05)
        assert [(d.actor, d.args, d.retries) for d in letters] == [("flaky", ["raw_01A"], 2)]
        assert "RuntimeError: the database is down" in letters[0].error

        listed = run_cli(
            "deadletters", env={"RI_DATABASE_URL": pg_url, "RI_BROKER_URL": namespace_db}
        )
        assert listed.returncode == 0 and "flaky(raw_01A)" in listed.stdout

        healed.set()
        done.clear()
        requeued = run_cli(
            "deadletters", "requeue", env={"RI_DATABASE_URL": pg_url, "RI_BROKER_URL": namespace_db}
        )
        assert requeued.returncode == 0, requeued.stderr
        assert "requeued 1 dead letters" in requeued.stdout
        assert done.wait(15), "the requeued message was not processed"
        assert attempts == ["raw_01A"] * 4
        assert list_dead_letters(pg_engine) == []
    finally:
        worker.stop()
        broker.flush_all()
        broker.close()
