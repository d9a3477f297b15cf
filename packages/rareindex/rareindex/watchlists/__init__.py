"""Watchlists: a principal's assets, variants, categories or title query, with optional price
conditions, matched against change events on the server.

* :mod:`.model` — :class:`Watchlist` and the checks a new one passes (:meth:`Watchlist.create`).
* :mod:`.matching` — :func:`matching_watchlists`: the ids of the watchlists an event matches
  (pure; the events stream filters ``?watchlist=ID`` and tags events with it).

Stored by :mod:`rareindex.storage.watchlist_store`, served by ``/api/watchlists`` and
``rareindex watchlists add|list|delete``.
"""

from .matching import event_move_pct, event_price, matches, matching_watchlists
from .model import MAX_ITEMS, Watchlist

__all__ = [
    "MAX_ITEMS",
    "Watchlist",
    "event_move_pct",
    "event_price",
    "matches",
    "matching_watchlists",
]
