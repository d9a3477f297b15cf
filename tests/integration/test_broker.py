"""The broker follows the mode: the stub in embedded mode, real Redis in a fleet — a message sent
through Redis is processed by a dramatiq worker."""

from __future__ import annotations

import secrets
import threading

import dramatiq
import pytest
from dramatiq.brokers.redis import RedisBroker
from dramatiq.brokers.stub import StubBroker

from rareindex.settings import Settings
from workers.broker import configure_broker


def test_embedded_mode_uses_the_in_process_stub_broker() -> None:
    assert isinstance(configure_broker(Settings(_env_file=None)), StubBroker)  # type: ignore[call-arg]


def test_fleet_mode_round_trips_a_message_through_real_redis(
    redis_url: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(_env_file=None, broker_url=redis_url, database_url=pg_url)  # type: ignore[call-arg]
    broker = configure_broker(settings)
    assert isinstance(broker, RedisBroker)
    queue = f"ri-test-{secrets.token_hex(4)}"
    seen: list[str] = []
    done = threading.Event()

    @dramatiq.actor(queue_name=queue, max_retries=0, broker=broker)
    def record(raw_id: str) -> None:
        seen.append(raw_id)
        done.set()

    record.send("raw_01TEST")
    worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
    worker.start()
    try:
        assert done.wait(timeout=10), "the worker never received the message"
    finally:
        worker.stop()
        broker.flush(queue)
        broker.close()
    assert seen == ["raw_01TEST"]
