"""Choose and install the dramatiq broker from :class:`rareindex.settings.Settings`.

Embedded mode uses dramatiq's ``StubBroker`` (in-process, nothing to run); fleet mode uses Redis
(``redis://``) or RabbitMQ (``amqp://``) from ``RI_BROKER_URL``. Call once per process, before
importing actor modules. A RabbitMQ fleet shares its host gates through ``RI_GATES_URL`` (a
Redis); without it :func:`require_shared_gates` refuses to start the fleet. On Redis, a worker
that has not been heard from for ``RI_BROKER_HEARTBEAT_SECONDS`` (30 s) is dead, and the messages
it had prefetched are handed back to the queue by the next worker's maintenance (run on every
command: :data:`MAINTENANCE_CHANCE`).

Example (not run as a doctest: it installs the process's global broker):
    >>> broker = configure_broker(Settings(_env_file=None))   # doctest: +SKIP
    >>> type(broker).__name__                                 # doctest: +SKIP
    'StubBroker'
"""

from __future__ import annotations

import dramatiq
from dramatiq.brokers.stub import StubBroker

from rareindex.errors import ConfigError
from rareindex.settings import Settings

__all__ = ["MAINTENANCE_CHANCE", "configure_broker", "require_shared_gates", "verify_broker"]

MAINTENANCE_CHANCE = 1_000_000
"""Commands in a million that also run the Redis broker's maintenance: all of them. Maintenance
hands the unacked (prefetched) messages of a worker whose heartbeat stopped back to their queue,
but only for the queue the command is on, and an idle worker asks each queue about once a second
(``worker_timeout``). At dramatiq's 1,000 in a million they stay stranded for many minutes; at
100,000 the wait after the heartbeat ran out was geometric with a 10 s mean (13.9 s measured, and
``test_worker_killed_prefetch`` failed 6 of 32 recorded runs). On every command it is one more
``ZRANGEBYSCORE`` of the heartbeats and of the queue's dead letters, about 18 µs a command on this
machine's Redis (162 → 180 µs an empty fetch), and a dead worker's messages come back at the
first poll of their queue after its heartbeat ran out."""


def require_shared_gates(settings: Settings) -> str:
    """Refuse a fleet whose host gates would be one per process; returns where they are shared.

    Workers on several machines are as polite as one only when they share the gates. With a
    Redis broker the gates default to it; with RabbitMQ (or to keep them apart) ``RI_GATES_URL``
    must name a Redis. Without it each worker would keep its own gates, and N workers would
    send N times a host's limits: a fleet does not start that way.

    Raises:
        ConfigError: ``RI_BROKER_URL`` is set and no Redis for the gates is configured.
    """
    url = settings.gates_url_or_default()
    if settings.broker_url is not None and url is None:
        scheme = settings.broker_url.split("://", 1)[0]
        raise ConfigError(
            f"RI_GATES_URL is not set and the {scheme} broker cannot share host gates: every "
            "worker would keep its own, and together they would exceed each host's limits; set "
            "RI_GATES_URL=redis://host:6379/0 (a Redis every worker reaches)"
        )
    return url or "process"


def configure_broker(settings: Settings) -> dramatiq.Broker:
    """Build the broker for this mode, make it dramatiq's global broker, and return it."""
    broker: dramatiq.Broker
    url = settings.broker_url
    if url is None:
        broker = StubBroker()
        broker.emit_after("process_boot")
    elif url.startswith(("redis://", "rediss://")):
        from dramatiq.brokers.redis import RedisBroker

        broker = RedisBroker(  # type: ignore[no-untyped-call]
            url=url,
            heartbeat_timeout=int(settings.broker_heartbeat_seconds * 1000),
            maintenance_chance=MAINTENANCE_CHANCE,
        )
    else:
        from dramatiq.brokers.rabbitmq import RabbitmqBroker

        broker = RabbitmqBroker(url=url)
    dramatiq.set_broker(broker)
    return broker


def verify_broker(broker: dramatiq.Broker) -> None:
    """Refuse to start on credentials the broker rejects: a wrong password is permanent, and
    dramatiq's consumers would otherwise log it as CRITICAL forever instead of the process
    exiting. An unreachable broker is left to dramatiq's reconnects (it may be restarting).

    Raises:
        ConfigError: the broker refused the credentials of ``RI_BROKER_URL``.
    """
    from redis.exceptions import AuthenticationError
    from redis.exceptions import ConnectionError as RedisDown

    client = getattr(broker, "client", None)
    if client is None:  # the stub broker, RabbitMQ: nothing of ours to ask
        return
    try:
        client.ping()
    except AuthenticationError as exc:
        raise ConfigError(
            f"the broker refused the credentials in RI_BROKER_URL ({exc}); fix the user or "
            "password there"
        ) from None
    except RedisDown:
        return
