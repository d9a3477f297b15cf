"""A dramatiq middleware that keeps messages which failed every retry in the database.

dramatiq's ``Retries`` middleware marks a message failed once its retries are spent. This
middleware's hook runs after that one (see :func:`workers.actors.declare_actors`) and records
the message in ``dead_letters``, so the operator sees it (``rareindex deadletters``) and can
requeue it, whatever the broker.
"""

from __future__ import annotations

from typing import Any

import dramatiq
import structlog

from rareindex.storage import Engine
from rareindex.storage.dead_letters import record_dead_letter

__all__ = ["DeadLetters"]

log = structlog.get_logger(__name__)


class DeadLetters(dramatiq.Middleware):
    """Record failed messages in ``dead_letters``."""

    def __init__(self, db: Engine):
        self.db = db

    def after_process_message(
        self, broker: Any, message: Any, *, result: Any = None, exception: Any = None
    ) -> None:
        if exception is None or not message.failed:
            return
        record_dead_letter(
            self.db,
            message_id=message.message_id,
            queue=message.queue_name,
            actor=message.actor_name,
            args=list(message.args),
            kwargs=dict(message.kwargs),
            retries=max(0, int(message.options.get("retries", 1)) - 1),  # attempts - 1
            error=f"{type(exception).__name__}: {exception}",
        )
        log.warning(
            "message.dead_lettered",
            actor=message.actor_name,
            message=message.message_id,
            error=type(exception).__name__,
        )
