"""Which watchlists an event matches: :func:`matching_watchlists`, pure.

An event (the dict of :mod:`rareindex.events`: ``type``, ``category``, ``asset_id``,
``variant_id``, ``connector_id``, ``payload`` …) matches a watchlist when

1. it is about something the watchlist names — one of its assets, one of its variants, one of its
   categories, or a title holding every word of its title query (folded: case, accents and
   punctuation aside; the title is the payload's ``title``) — any one of them is enough; and
2. every price condition the watchlist sets holds:

   * ``below`` / ``above`` — the event's price (payload ``price``, else ``new``: a listing's new
     price, else an auction result's ``price_realised`` or ``hammer_price``) is below / above the
     value, in the watchlist's currency (payload ``currency``); an event without a price, or
     in another currency, does not match;
   * ``move_pct`` — the price moved by more than that many percent, up or down: payload
     ``ratio`` (new / old), else ``new`` / ``old``; an event that is not a move does not match.

Numbers in a payload may be decimal strings (``"12.50"``) or numbers.

Example:
    >>> w = Watchlist("wch_1", "token:a", "zards", categories=("tcg_card",), move_pct=Decimal(20))
    >>> event = {"type": "listing.price_changed", "category": "tcg_card",
    ...          "payload": {"old": "100", "new": "70", "currency": "USD"}}
    >>> matching_watchlists(event, [w])
    ['wch_1']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ..resolution.text import fold
from .model import Watchlist

__all__ = ["event_move_pct", "event_price", "matches", "matching_watchlists"]


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    return number if number.is_finite() else None


def _payload(event: Mapping[str, Any]) -> Mapping[str, Any]:
    payload = event.get("payload")
    return payload if isinstance(payload, Mapping) else {}


_PRICE_KEYS = ("price", "new", "price_realised", "hammer_price")
"""Where an event's payload holds its price: a sale's or a listing's ``price``, a price change's
``new``, an auction result's price realised, else its hammer price."""


def event_price(event: Mapping[str, Any]) -> tuple[Decimal, str] | None:
    """The event's price and currency (payload ``price``, else ``new``, else an auction result's
    ``price_realised``, else its ``hammer_price``), if it has one."""
    payload = _payload(event)
    price = None
    for key in _PRICE_KEYS:
        price = _decimal(payload.get(key))
        if price is not None:
            break
    currency = payload.get("currency")
    if price is None or not isinstance(currency, str):
        return None
    return price, currency.upper()


def event_move_pct(event: Mapping[str, Any]) -> Decimal | None:
    """How far the event's price moved, in percent of the old one (unsigned), if it is a move."""
    payload = _payload(event)
    ratio = _decimal(payload.get("ratio"))
    if ratio is None:
        old, new = _decimal(payload.get("old")), _decimal(payload.get("new"))
        if old is None or new is None or old <= 0:
            return None
        ratio = new / old
    return abs(ratio - 1) * 100


def _words(text: str) -> list[str]:
    return fold(text).split()


def _about(event: Mapping[str, Any], watchlist: Watchlist) -> bool:
    if watchlist.asset_ids and event.get("asset_id") in watchlist.asset_ids:
        return True
    if watchlist.variant_ids and event.get("variant_id") in watchlist.variant_ids:
        return True
    if watchlist.categories and event.get("category") in watchlist.categories:
        return True
    if watchlist.title_query:
        title = _payload(event).get("title")
        if isinstance(title, str):
            have = set(_words(title))
            wanted = _words(watchlist.title_query)
            return bool(wanted) and all(word in have for word in wanted)
    return False


def _conditions_hold(event: Mapping[str, Any], watchlist: Watchlist) -> bool:
    if watchlist.below is not None or watchlist.above is not None:
        priced = event_price(event)
        if priced is None or priced[1] != watchlist.currency:
            return False
        price = priced[0]
        if watchlist.below is not None and not price < watchlist.below:
            return False
        if watchlist.above is not None and not price > watchlist.above:
            return False
    if watchlist.move_pct is not None:
        moved = event_move_pct(event)
        if moved is None or not moved > watchlist.move_pct:
            return False
    return True


def matches(event: Mapping[str, Any], watchlist: Watchlist) -> bool:
    """Whether ``event`` matches ``watchlist`` (the module docstring's two conditions)."""
    return _about(event, watchlist) and _conditions_hold(event, watchlist)


def matching_watchlists(event: Mapping[str, Any], watchlists: Iterable[Watchlist]) -> list[str]:
    """The ids of the ``watchlists`` that ``event`` matches, in their order. The caller passes
    one principal's watchlists only (:func:`rareindex.storage.watchlist_store.watchlists_of`)."""
    return [w.id for w in watchlists if matches(event, w)]
