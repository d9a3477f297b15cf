"""The dead-letter list in the database: durable whichever broker carried the message.

Example:
    >>> record_dead_letter(engine, message_id="m1", queue="crawl",  # doctest: +SKIP
    ...                    actor="crawl_run", args=["run_01…"], kwargs={}, retries=5,
    ...                    error="DatabaseError: …")
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.dialects import postgresql, sqlite

from .schema import dead_letters

__all__ = ["DeadLetter", "list_dead_letters", "mark_requeued", "record_dead_letter"]


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One message that failed every retry."""

    id: str
    queue: str
    actor: str
    args: list[Any]
    kwargs: dict[str, Any]
    retries: int
    error: str
    failed_at: datetime
    requeued_at: datetime | None


def record_dead_letter(
    engine: Engine,
    *,
    message_id: str,
    queue: str,
    actor: str,
    args: list[Any],
    kwargs: dict[str, Any],
    retries: int,
    error: str,
) -> None:
    """Keep a failed message (a second failure of the same message updates it)."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    values = {
        "id": message_id,
        "queue": queue,
        "actor": actor,
        "args": args,
        "kwargs": kwargs,
        "retries": retries,
        "error": error[:4000],
        "failed_at": datetime.now(UTC),
        "requeued_at": None,
    }
    statement = dialect.insert(dead_letters).values(values)
    with engine.begin() as conn:
        conn.execute(
            statement.on_conflict_do_update(
                index_elements=["id"],
                set_={
                    k: statement.excluded[k]
                    for k in ("retries", "error", "failed_at", "requeued_at")
                },
            )
        )


def list_dead_letters(engine: Engine, *, include_requeued: bool = False) -> list[DeadLetter]:
    """Dead letters, oldest failure first."""
    query = select(dead_letters).order_by(dead_letters.c.failed_at)
    if not include_requeued:
        query = query.where(dead_letters.c.requeued_at.is_(None))
    with engine.connect() as conn:
        return [
            DeadLetter(
                r.id,
                r.queue,
                r.actor,
                list(r.args),
                dict(r.kwargs),
                r.retries,
                r.error,
                r.failed_at,
                r.requeued_at,
            )
            for r in conn.execute(query)
        ]


def mark_requeued(engine: Engine, message_id: str) -> bool:
    """Mark a dead letter as sent again; False when it is unknown or already requeued."""
    with engine.begin() as conn:
        return (
            conn.execute(
                update(dead_letters)
                .where(dead_letters.c.id == message_id, dead_letters.c.requeued_at.is_(None))
                .values(requeued_at=datetime.now(UTC))
                .returning(dead_letters.c.id)
            ).first()
            is not None
        )
