"""A crawl's hold on its run's lease: renewed while it waits, checked before each fetch.

:func:`keep_lease` renews the lease every third of its length between commits, so a live run is
never taken over for being slow; :class:`LeaseWatch` stops a run whose lease was lost before it
sends anything more, also when its pages yield nothing to commit.

Example:
    >>> watch = LeaseWatch(db, run)                               # doctest: +SKIP
    >>> task = asyncio.create_task(keep_lease(db, run, watch))    # doctest: +SKIP
    >>> watch.check()   # before each fetch: LeaseLost once taken over     # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import time

import structlog

from .storage import Engine
from .storage.runs import LeaseLost, RunHandle, renew_lease

__all__ = ["LeaseWatch", "keep_lease"]

log = structlog.get_logger(__name__)


class LeaseWatch:
    """What the run knows about its lease: lost (``lost``), or when it last knew it held it.

    Before each fetch, :meth:`check` stops a run whose lease was lost, and asks the database
    first after a silence of half a lease (a process frozen or starved past its lease): so a
    worker whose run was taken over sends nothing more, even while its pages yield no record to
    commit (304s, skipped pages)."""

    def __init__(self, db: Engine, run: RunHandle) -> None:
        self.db, self.run = db, run
        self.lost: list[LeaseLost] = []
        self.confirmed = time.monotonic()

    def held(self) -> None:
        """The lease was just renewed (a renewal or a fenced commit went through)."""
        self.confirmed = time.monotonic()

    def check(self) -> None:
        if self.lost:
            raise self.lost[0]
        if time.monotonic() - self.confirmed <= self.run.lease_seconds / 2:
            return
        try:
            renew_lease(self.db, self.run)
        except LeaseLost as exc:
            self.lost.append(exc)
            raise
        except Exception as exc:  # the database is away: the next commit will say so
            log.warning("crawl.lease_renewal_failed", run=self.run.id, error=str(exc)[:300])
            return
        self.held()


async def keep_lease(db: Engine, run: RunHandle, watch: LeaseWatch) -> None:
    """Renew the run's lease every third of its length while the crawl waits between commits
    (a slow host, a long ``Retry-After``): a live run is never taken over for being slow. A
    renewal that finds the run taken over is put in ``watch.lost`` and the crawl stops at its
    next record or fetch; one that fails otherwise (the database away) is tried again next
    period."""
    while True:
        await asyncio.sleep(run.lease_seconds / 3)
        try:
            renew_lease(db, run)
        except LeaseLost as exc:
            watch.lost.append(exc)
            return
        except Exception as exc:  # the database is away: the next commit will say so
            log.warning("crawl.lease_renewal_failed", run=run.id, error=str(exc)[:300])
        else:
            watch.held()
