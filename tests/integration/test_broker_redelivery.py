"""A worker that dies holding prefetched messages does not strand them: on the real Redis, once
its heartbeat is ``RI_BROKER_HEARTBEAT_SECONDS`` old, another worker's consumer gets them back
(dramatiq's maintenance, which ``configure_broker`` runs on every command).

Maintenance hands back only the messages of the queue the command is on, so it must run on the
survivor's very next poll of that queue: at the earlier 10% of commands, this test's 5 polls a
second would miss the bound below about one run in three (0.9 ** 10)."""

from __future__ import annotations

import secrets
import time

import dramatiq

from rareindex.settings import Settings
from workers.broker import configure_broker

HEARTBEAT_S = 2
POLL_MS = 200  # the survivor's consumer asks the queue about 5 times a second


def _settings(redis_url: str) -> Settings:
    return Settings(
        _env_file=None,
        broker_url=redis_url,
        database_url="postgresql+psycopg://postgres@127.0.0.1/unused",
        broker_heartbeat_seconds=HEARTBEAT_S,
    )


def test_a_dead_workers_prefetched_messages_go_to_another_within_a_heartbeat(
    redis_url: str,
) -> None:
    queue = f"ri-test-{secrets.token_hex(4)}"
    dying = configure_broker(_settings(redis_url))
    survivor = configure_broker(_settings(redis_url))
    try:
        dying.declare_queue(queue)
        survivor.declare_queue(queue)
        sent = [
            dying.enqueue(dramatiq.Message(queue, "crawl_run", (f"run_{i}",), {}, {}))
            for i in range(3)
        ]
        taken = dying.consume(queue, prefetch=3, timeout=200)
        held = [m for m in (next(taken) for _ in range(6)) if m is not None]
        assert {m.message_id for m in held} == {m.message_id for m in sent}  # all in its hands
        # SIGKILL, as far as Redis can tell: no ack, no nack, no more heartbeats
        began = time.monotonic()
        other = survivor.consume(queue, prefetch=3, timeout=POLL_MS)
        got: set[str] = set()
        while len(got) < len(sent) and time.monotonic() - began < 30:
            message = next(other)
            if message is not None:
                got.add(message.message_id)
                other.ack(message)
        waited = time.monotonic() - began
        assert got == {m.message_id for m in sent}, f"after {waited:.1f} s only {len(got)}"
        assert waited >= HEARTBEAT_S - 0.5  # not before the dead worker's heartbeat ran out
        assert waited < HEARTBEAT_S + 2, f"stranded {waited - HEARTBEAT_S:.1f} s past the heartbeat"
        other.close()
    finally:
        for broker in (dying, survivor):
            broker.flush_all()
            broker.close()
