"""Named leases with fencing tokens: exactly one holder of a role (the scheduler leader) at a time.

A lease is a row of ``leases``: holder, expiry and a **fencing token**. Acquiring a free or expired
lease increments the token; renewing a live lease keeps it. A holder does its work in one
transaction that begins with :func:`holds` — the token still matches and the lease has not expired —
so a holder that stalled past its expiry and was replaced commits nothing (invariant 7 of
docs/architecture.md).

:func:`holds` closes the race between the check and the commit on each dialect:

* PostgreSQL: ``SELECT … FOR UPDATE`` on the lease row. A takeover is an ``UPDATE`` of that row, so
  it waits until the holder's transaction ends; the holder either commits while it still held the
  lease, or sees the new token and writes nothing.
* SQLite: the check is itself an ``UPDATE`` (of nothing), which takes the database's write lock
  for the rest of the transaction; a takeover is another write and waits behind it. Call
  :func:`holds` first in the transaction, before any read.

Example:
    >>> with engine.begin() as conn:                                             # doctest: +SKIP
    ...     lease = acquire(conn, "scheduler", "host:42:ab12", now=now, ttl=timedelta(minutes=3))
    >>> with engine.begin() as conn:                                             # doctest: +SKIP
    ...     if not holds(conn, "scheduler", lease.token, now=now):
    ...         raise LeaseLost("another scheduler took over")
    ...     ...  # writes, committed only by the holder
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, case, literal, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.sql.elements import BindParameter

from .schema import leases
from .types import UTCDateTime

__all__ = ["Lease", "acquire", "current_lease", "holds", "release", "renew"]


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease as its holder last saw it."""

    name: str
    holder: str
    token: int
    acquired_at: datetime
    expires_at: datetime


def _at(value: datetime) -> BindParameter[datetime]:
    """A bound timestamp typed as stored (UTC, naive on SQLite) for use inside expressions."""
    return literal(value, UTCDateTime())


def acquire(
    conn: Connection, name: str, holder: str, *, now: datetime, ttl: timedelta
) -> Lease | None:
    """Take the lease ``name`` for ``holder`` until ``now + ttl``; None when someone else holds it.

    A new or expired lease is taken with the next token (also by its previous holder: a lapse is a
    change of hands). A lease ``holder`` still holds is renewed and keeps its token.
    """
    expires = now + ttl
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    created = conn.execute(
        dialect.insert(leases)
        .values(
            name=name, holder=holder, token=1, acquired_at=now, renewed_at=now, expires_at=expires
        )
        .on_conflict_do_nothing(index_elements=["name"])
        .returning(leases.c.token, leases.c.acquired_at)
    ).first()
    if created is not None:
        return Lease(name, holder, created.token, created.acquired_at, expires)
    still_ours = and_(leases.c.holder == holder, leases.c.expires_at > now)
    taken = conn.execute(
        update(leases)
        .where(leases.c.name == name, or_(leases.c.expires_at <= now, still_ours))
        .values(
            holder=holder,
            # SET expressions see the row as it was: keep the token only for a live renewal.
            token=case((still_ours, leases.c.token), else_=leases.c.token + 1),
            acquired_at=case((still_ours, leases.c.acquired_at), else_=_at(now)),
            renewed_at=now,
            expires_at=expires,
        )
        .returning(leases.c.token, leases.c.acquired_at)
    ).first()
    if taken is None:
        return None
    return Lease(name, holder, taken.token, taken.acquired_at, expires)


def renew(conn: Connection, lease: Lease, *, now: datetime, ttl: timedelta) -> Lease | None:
    """Extend a live lease, keeping its token; None when it expired or changed hands."""
    expires = now + ttl
    row = conn.execute(
        update(leases)
        .where(
            leases.c.name == lease.name,
            leases.c.holder == lease.holder,
            leases.c.token == lease.token,
            leases.c.expires_at > now,
        )
        .values(renewed_at=now, expires_at=expires)
        .returning(leases.c.token)
    ).first()
    if row is None:
        return None
    return Lease(lease.name, lease.holder, lease.token, lease.acquired_at, expires)


def release(conn: Connection, lease: Lease, *, now: datetime) -> bool:
    """Give the lease up now (it expires, so the next holder need not wait); False if not ours."""
    row = conn.execute(
        update(leases)
        .where(
            leases.c.name == lease.name,
            leases.c.holder == lease.holder,
            leases.c.token == lease.token,
        )
        .values(expires_at=now)
        .returning(leases.c.token)
    ).first()
    return row is not None


def holds(conn: Connection, name: str, token: int, *, now: datetime) -> bool:
    """True when ``token`` is still the live token of ``name`` — and, until this transaction ends,
    no one can take the lease over (see the module docstring for how, per dialect)."""
    if conn.dialect.name == "postgresql":
        row = conn.execute(
            select(leases.c.token, leases.c.expires_at)
            .where(leases.c.name == name)
            .with_for_update()
        ).first()
        return row is not None and row.token == token and row.expires_at > now
    held = conn.execute(
        update(leases)
        .where(leases.c.name == name, leases.c.token == token, leases.c.expires_at > now)
        .values(token=leases.c.token)
        .returning(leases.c.token)
    ).first()
    return held is not None


def current_lease(conn: Connection, name: str) -> Lease | None:
    """The stored lease ``name`` (live or expired), or None when it was never taken."""
    row = conn.execute(select(leases).where(leases.c.name == name)).first()
    if row is None:
        return None
    return Lease(row.name, row.holder, row.token, row.acquired_at, row.expires_at)
