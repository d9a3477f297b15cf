"""Watchlists in the database, always for one principal.

Every function takes the principal: a watchlist of another principal is never listed, matched or
deleted — :func:`delete_watchlist` of someone else's id says :class:`~rareindex.errors.NotFound`,
exactly as for an id that does not exist, so ids of others' watchlists are never confirmed.

Example:
    >>> w = add_watchlist(engine, Watchlist.create("token:alice", "zards",   # doctest: +SKIP
    ...                                             categories=["tcg_card"]))
    >>> [x.name for x in watchlists_of(engine, "token:alice")]              # doctest: +SKIP
    ['zards']
    >>> watchlists_of(engine, "token:bob")                                   # doctest: +SKIP
    []
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, or_, select
from sqlalchemy.exc import IntegrityError

from ..errors import InvalidWatchlist, NotFound
from ..watchlists import Watchlist
from .schema.watchlists import watchlists

__all__ = ["add_watchlist", "delete_watchlist", "get_watchlist", "watchlists_of"]

MAX_PER_PRINCIPAL = 1000
"""A principal may keep at most this many watchlists (each is matched against every event)."""


def _row(w: Watchlist) -> dict[str, Any]:
    return {
        "id": w.id,
        "principal": w.principal,
        "name": w.name,
        "asset_ids": list(w.asset_ids) or None,
        "variant_ids": list(w.variant_ids) or None,
        "categories": list(w.categories) or None,
        "title_query": w.title_query,
        "below": w.below,
        "above": w.above,
        "currency": w.currency,
        "move_pct": w.move_pct,
        "created_at": w.created_at,
    }


def _dec(value: Any) -> Decimal | None:
    """A stored amount without the column's padding (``20.000000`` -> ``20``)."""
    return None if value is None else Decimal(format(Decimal(value).normalize(), "f"))


def _watchlist(row: Any) -> Watchlist:
    return Watchlist(
        id=row.id,
        principal=row.principal,
        name=row.name,
        asset_ids=tuple(row.asset_ids or ()),
        variant_ids=tuple(row.variant_ids or ()),
        categories=tuple(row.categories or ()),
        title_query=row.title_query,
        below=_dec(row.below),
        above=_dec(row.above),
        currency=row.currency,
        move_pct=_dec(row.move_pct),
        created_at=row.created_at,
    )


def add_watchlist(engine: Engine, watchlist: Watchlist) -> Watchlist:
    """Store a new watchlist (from :meth:`Watchlist.create`). A name the principal already uses,
    or one watchlist too many, is :class:`InvalidWatchlist`."""
    with engine.begin() as conn:
        count = len(
            conn.execute(
                select(watchlists.c.id)
                .where(watchlists.c.principal == watchlist.principal)
                .limit(MAX_PER_PRINCIPAL)
            ).all()
        )
        if count >= MAX_PER_PRINCIPAL:
            raise InvalidWatchlist(f"at most {MAX_PER_PRINCIPAL} watchlists per principal")
        try:
            with conn.begin_nested():
                conn.execute(insert(watchlists).values(_row(watchlist)))
        except IntegrityError:
            raise InvalidWatchlist(
                f"a watchlist named {watchlist.name!r} exists already; delete it or pick another"
            ) from None
    return watchlist


def watchlists_of(bind: Engine | Connection, principal: str) -> list[Watchlist]:
    """The principal's watchlists, oldest first."""
    query = select(watchlists).where(watchlists.c.principal == principal).order_by(watchlists.c.id)
    if isinstance(bind, Engine):
        with bind.connect() as conn:
            return [_watchlist(r) for r in conn.execute(query)]
    return [_watchlist(r) for r in bind.execute(query)]


def get_watchlist(bind: Engine | Connection, principal: str, key: str) -> Watchlist:
    """The principal's watchlist with id or name ``key``; :class:`NotFound` otherwise."""
    for w in watchlists_of(bind, principal):
        if key in (w.id, w.name):
            return w
    raise NotFound(f"no watchlist {key!r} of {principal}")


def delete_watchlist(engine: Engine, principal: str, key: str) -> Watchlist:
    """Delete the principal's watchlist with id or name ``key`` and return it; another
    principal's, or none, is :class:`NotFound`."""
    with engine.begin() as conn:
        row = conn.execute(
            select(watchlists).where(
                watchlists.c.principal == principal,
                or_(watchlists.c.id == key, watchlists.c.name == key),
            )
        ).first()
        if row is None:
            raise NotFound(f"no watchlist {key!r} of {principal}")
        conn.execute(
            delete(watchlists).where(watchlists.c.id == row.id, watchlists.c.principal == principal)
        )
    return _watchlist(row)
