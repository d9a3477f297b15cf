"""The budget store: revisit unchanged pages less often and changing ones more.

Per URL, :class:`UrlBudget` keeps the validators (ETag, Last-Modified) for conditional requests
and an estimate of how often the page changes. Each visit is an observation: changed (new
content hash) or unchanged (same hash, or a 304). The revisit interval halves on a change and
doubles on a non-change, within ``[min_interval, max_interval]``; the next fetch is due one
interval after the visit. Observations are written with the batch of records they belong to.

Example:
    >>> next_interval(3600, changed=False), next_interval(3600, changed=True)
    (7200.0, 1800.0)
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from rareindex_connectors import FetchResult

from .storage import Engine
from .storage.crawl_state import UrlState, load_state, load_states

__all__ = [
    "MAX_INTERVAL_S",
    "MIN_INTERVAL_S",
    "PRELOAD_LIMIT",
    "RECENT_STATES",
    "UrlBudget",
    "next_interval",
]

PRELOAD_LIMIT = 100_000
"""A connector with at most this many stored URLs has them all read in one query at its first
lookup (a crawl asks for every page it fetches); a larger one is read URL by URL."""
RECENT_STATES = 10_000
"""How many URL states a run keeps besides the preloaded ones: those it read one by one and its
own latest observations (which cover the batches still being committed), so a long crawl's
memory stays flat instead of holding a state for every page it fetched. An older one is read
again from the store; where the run preloaded the store, a URL the preload did not hold (new
in this run) then reads as never fetched, and a revisit of it is not conditional."""
MIN_INTERVAL_S = 300.0
MAX_INTERVAL_S = 30 * 86400.0


def next_interval(
    previous_s: float, *, changed: bool, low: float = MIN_INTERVAL_S, high: float = MAX_INTERVAL_S
) -> float:
    """The revisit interval after an observation: halve on a change, double otherwise."""
    return float(min(high, max(low, previous_s * (0.5 if changed else 2.0))))


class UrlBudget:
    """One run's view of the budget store for one connector."""

    def __init__(self, db: Engine, connector_id: str, *, initial_interval_s: float = 3600.0):
        self.db = db
        self.connector_id = connector_id
        self.initial_interval_s = initial_interval_s
        self._recent: OrderedDict[str, UrlState | None] = OrderedDict()  # at most RECENT_STATES
        self._all: dict[str, UrlState] | None = None  # every stored state, once preloaded
        self._preloaded = False
        self.pending: dict[str, UrlState] = {}

    def state(self, url: str) -> UrlState | None:
        """The latest known state of ``url`` (this run's observation first)."""
        if url in self.pending:
            return self.pending[url]
        if url in self._recent:
            self._recent.move_to_end(url)
            return self._recent[url]
        if not self._preloaded:
            self._preloaded = True
            with self.db.connect() as conn:
                self._all = load_states(conn, self.connector_id, limit=PRELOAD_LIMIT)
        if self._all is not None:
            return self._all.get(url)
        with self.db.connect() as conn:
            state = load_state(conn, self.connector_id, url)
        self._remember(url, state)
        return state

    def _remember(self, url: str, state: UrlState | None) -> None:
        self._recent[url] = state
        self._recent.move_to_end(url)
        while len(self._recent) > RECENT_STATES:
            self._recent.popitem(last=False)

    def should_fetch(self, url: str, now: datetime | None = None) -> bool:
        """True for a URL never fetched, or whose next fetch is due."""
        state = self.state(url)
        if state is None or state.next_fetch_at is None:
            return True
        return state.next_fetch_at <= (now or datetime.now(UTC))

    def validators(self, url: str) -> tuple[str | None, str | None]:
        """``(etag, last_modified)`` for a conditional request."""
        state = self.state(url)
        return (state.etag, state.last_modified) if state else (None, None)

    def observe(self, url: str, result: FetchResult, now: datetime | None = None) -> bool:
        """Learn from a visit; returns whether the page changed since the last one."""
        now = now or datetime.now(UTC)
        previous = self.state(url)
        digest = None if result.not_modified else hashlib.sha256(result.content).hexdigest()
        changed = previous is None or (digest is not None and digest != previous.content_hash)
        base = previous or UrlState(url=url)
        interval = next_interval(
            base.change_interval_seconds or self.initial_interval_s, changed=changed
        )
        headers = {k.lower(): v for k, v in result.headers.items()}
        self.pending[url] = replace(
            base,
            content_hash=digest or base.content_hash,
            etag=headers.get("etag", base.etag),
            last_modified=headers.get("last-modified", base.last_modified),
            change_interval_seconds=interval,
            last_fetched_at=now,
            last_changed_at=now if changed else base.last_changed_at,
            next_fetch_at=now + timedelta(seconds=interval),
            changes=base.changes + (1 if changed else 0),
            unchanged=base.unchanged + (0 if changed else 1),
        )
        return changed

    def take_pending(self) -> list[UrlState]:
        """The observations to write with the next batch (and forget them here)."""
        pending = list(self.pending.values())
        for state in pending:
            if self._all is not None and state.url in self._all:
                self._all[state.url] = state  # replaces its preloaded state: no growth
            else:
                self._remember(state.url, state)
        self.pending.clear()
        return pending
