"""The operator's status commands: pause, resume, disable, enable, maintenance — who, when and why.

``connectors.status`` is the operator's (syncing the registry never touches it). The scheduler
enqueues runs only for ``active`` connectors; health reports ``disabled`` as DISABLED and
``paused`` / ``maintenance`` as MAINTENANCE. Each change stores who made it (the OS user through
the CLI, ``token:<name>`` through the API), when, and the reason given.

=============  ======================================  ==============
action         from                                    to
=============  ======================================  ==============
pause          active, paused                          paused
resume         paused, active                          active
maintenance    active, paused, maintenance             maintenance
disable        any                                     disabled
enable         any                                     active
=============  ======================================  ==============

A connector in ``maintenance`` or ``disabled`` was put there on purpose: ``resume`` (the light
toggle) and ``pause`` refuse it with :class:`StatusConflict`; ``enable`` brings any connector back
to ``active``. An action that leaves
the status as it was changes nothing and keeps the earlier note.

Example:
    >>> change = change_status(engine, "cards-shop", "maintenance",             # doctest: +SKIP
    ...                        by="user:alice", reason="vendor moves its API")
    >>> change.previous_status, change.status                                  # doctest: +SKIP
    ('active', 'maintenance')
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, get_args

from sqlalchemy import Connection, Engine, func, select, update

from .admin_queries import ConnectorNotFound, StatusConflict
from .schema import connectors

__all__ = [
    "ACTIONS",
    "Action",
    "ConnectorNotFound",
    "StatusChange",
    "StatusConflict",
    "StatusNote",
    "change_status",
    "status_notes",
]

Action = Literal["pause", "resume", "maintenance", "disable", "enable"]
ACTIONS: tuple[Action, ...] = get_args(Action)

_RULES: dict[Action, tuple[str, frozenset[str]]] = {
    "pause": ("paused", frozenset({"active", "paused"})),
    "resume": ("active", frozenset({"paused", "active"})),
    "maintenance": ("maintenance", frozenset({"active", "paused", "maintenance"})),
    "disable": ("disabled", frozenset({"active", "paused", "maintenance", "disabled"})),
    "enable": ("active", frozenset({"disabled", "maintenance", "paused", "active"})),
}

_HINTS = {
    "maintenance": "`enable` ends maintenance",
    "disabled": "`enable` it first",
    "paused": "`resume` it first",
    "active": "",
}


@dataclass(frozen=True, slots=True)
class StatusNote:
    """The last status change stored for a connector."""

    status: str
    reason: str | None
    changed_by: str | None
    changed_at: datetime | None


@dataclass(frozen=True, slots=True)
class StatusChange:
    """What one action did: the status before and after, and the note it stored."""

    connector_id: str
    action: Action
    previous_status: str
    status: str
    changed_by: str
    reason: str | None

    @property
    def changed(self) -> bool:
        return self.previous_status != self.status


def change_status(
    engine: Engine,
    connector_id: str,
    action: Action,
    *,
    by: str,
    reason: str | None = None,
    now: datetime | None = None,
) -> StatusChange:
    """Apply ``action`` to a stored connector in one transaction (the row is locked on
    PostgreSQL, so two operators cannot interleave).

    Raises:
        ValueError: ``action`` is not one of :data:`ACTIONS`.
        ConnectorNotFound: no connector ``connector_id`` is stored.
        StatusConflict: the connector's status does not allow ``action``.
    """
    if action not in _RULES:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    target, allowed = _RULES[action]
    reason = (reason or "").strip() or None
    with engine.begin() as conn:
        before = conn.execute(
            select(connectors.c.status).where(connectors.c.id == connector_id).with_for_update()
        ).scalar_one_or_none()
        if before is None:
            raise ConnectorNotFound(
                f"no connector {connector_id!r} is stored (see `rareindex connectors list`)"
            )
        if before not in allowed:
            hint = _HINTS.get(before, "")
            raise StatusConflict(
                f"connector {connector_id!r} is {before}; {action} needs it "
                f"{' or '.join(sorted(allowed))}" + (f" ({hint})" if hint else "")
            )
        if before != target:
            conn.execute(
                update(connectors)
                .where(connectors.c.id == connector_id)
                .values(
                    status=target,
                    status_reason=reason,
                    status_changed_by=by,
                    status_changed_at=now or datetime.now(UTC),
                    updated_at=func.now(),
                )
            )
    return StatusChange(connector_id, action, before, target, by, reason)


def status_notes(conn: Connection) -> dict[str, StatusNote]:
    """Every stored connector's status and the note of its last change, by id."""
    rows = conn.execute(
        select(
            connectors.c.id,
            connectors.c.status,
            connectors.c.status_reason,
            connectors.c.status_changed_by,
            connectors.c.status_changed_at,
        )
    )
    return {
        row.id: StatusNote(
            row.status, row.status_reason, row.status_changed_by, row.status_changed_at
        )
        for row in rows
    }
