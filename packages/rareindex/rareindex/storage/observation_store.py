"""Writes of the canonical graph and its observations, idempotent by natural key, a batch at a
time.

Every row gets a :func:`~.ids.stable_id` from its natural key and is upserted, so re-resolving the
same normalized record (a replay, a retried message) rewrites the same values into the same row:
sales by ``(source, external id, sale date)``, listings by ``(source, external id)``, auction lots
by ``(auction, lot number)``, price observations by ``(source, item, kind, date)``. Listing events
are appended only when something changed (listed, price changed, ended).

Each writer takes the rows of a whole resolve batch, in the order the records came, and sends a
fixed handful of multi-row statements (:mod:`.upsert`): the tables end up exactly as if the
records had been written one by one, in that order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, Final, TypedDict

from sqlalchemy import Connection, case, func, select

from .change_events import listing_events as listing_change_events
from .change_events import lot_result_events, new_sale_events, stored_lot_results
from .ids import stable_id
from .membership import one_of
from .outbox import emit
from .schema import (
    asset_variants,
    auction_lots,
    auctions,
    connectors,
    images,
    listing_events,
    listings,
    news,
    population_reports,
    price_observations,
    sales,
)
from .upsert import fold, insert_rows, merge, update_rows, upsert

__all__ = [
    "AuctionRow",
    "ListingRow",
    "LotRow",
    "NewObservation",
    "NewSale",
    "NewsRow",
    "ObservationRow",
    "PopulationRow",
    "SaleRow",
    "Subject",
    "connector_sources",
    "listing_id",
    "observation_row",
    "sale_row",
    "set_anomalies",
    "upsert_variants",
    "variant_prices",
    "variant_row",
    "write_auction_lots",
    "write_images",
    "write_listings",
    "write_news",
    "write_population",
    "write_price_observations",
    "write_sales",
]

CHUNK = 500
"""Ids per ``IN (…)`` list of a read."""


class Subject(TypedDict):
    """What an observation row points at: its source, connector and normalized record, and the
    asset and variant it resolved to (None when it did not)."""

    source_id: str
    connector_id: str
    normalized_id: str
    asset_id: str | None
    variant_id: str | None


class NewSale(Subject):
    """A ``sales`` row as planned, before :func:`sale_row` gives it its id."""

    sale_date: datetime
    external_id: str
    title: str
    url: str | None
    sale_type: str
    price_basis: str
    price_visibility: str
    price: Decimal
    currency: str
    shipping: Decimal | None
    buyer_premium: Decimal | None
    is_lot: bool
    flags: list[str] | None


class SaleRow(NewSale):
    """A ``sales`` row with its stable id (:func:`sale_row`), as :func:`write_sales` takes it."""

    id: str


class ListingRow(Subject):
    """A ``listings`` row as planned, before :func:`write_listings` sets its id and span."""

    external_id: str
    title: str
    url: str | None
    price: Decimal
    currency: str
    available: bool
    quantity: int | None


class NewObservation(Subject):
    """A ``price_observations`` row as planned, before :func:`observation_row` gives it its id."""

    observation_date: datetime
    source_item_id: str
    kind: str
    price: Decimal
    currency: str
    sale_id: str | None
    flags: list[str] | None


class ObservationRow(NewObservation):
    """A ``price_observations`` row with its stable id, as :func:`write_price_observations` takes
    it."""

    id: str


class PopulationRow(TypedDict):
    """A ``population_reports`` row as planned (its id is set on write)."""

    grader: str
    spec_id: str
    source_id: str
    asset_id: str | None
    title: str
    counts: dict[str, int]
    total: int
    as_of: datetime


class NewsRow(TypedDict):
    """A ``news`` row as planned (its id is set on write)."""

    source_id: str
    external_id: str
    title: str
    url: str
    published_at: datetime
    summary: str | None
    author: str | None


class AuctionRow(TypedDict):
    """An ``auctions`` row as planned (its id is set on write)."""

    source_id: str
    external_id: str
    title: str | None
    ends_at: datetime | None
    currency: str | None


class LotRow(Subject):
    """An ``auction_lots`` row as planned (its id and auction id are set on write)."""

    lot_number: str
    external_id: str
    title: str
    status: str
    currency: str | None
    hammer_price: Decimal | None
    buyer_premium_rate: Decimal | None
    buyer_premium: Decimal | None
    price_realised: Decimal | None
    estimate_low: Decimal | None
    estimate_high: Decimal | None
    closes_at: datetime | None


_SALE_KEY: Final = ("source_id", "external_id", "sale_date")
_SALE_UPDATE = (
    "asset_id", "variant_id", "normalized_id", "title", "url", "sale_type", "price_basis",
    "price_visibility", "price", "currency", "shipping", "buyer_premium", "is_lot", "flags",
)  # fmt: skip


def connector_sources(conn: Connection) -> dict[str, str]:
    """Connector id -> source id."""
    return {c: s for c, s in conn.execute(select(connectors.c.id, connectors.c.source_id))}


def variant_row(
    asset_id: str,
    variant_key: str,
    grading: Mapping[str, Any] | None,
    print_mark: str | None = None,
) -> dict[str, Any]:
    """The ``asset_variants`` row of one variant (its id is ``row["id"]``)."""
    grading = grading or {}
    return {
        "id": stable_id("var", variant_key),
        "asset_id": asset_id,
        "variant_key": variant_key,
        "grader": grading.get("grader"),
        "grade": grading.get("grade"),
        "qualifier": grading.get("qualifier"),
        "label_type": grading.get("label_type"),
        "autograph_grade": grading.get("autograph_grade"),
        "print_mark": print_mark,
    }


def upsert_variants(conn: Connection, rows: Sequence[dict[str, Any]]) -> None:
    """Insert variants not there yet (a variant, once created, never changes)."""
    upsert(conn, asset_variants, rows, conflict=["variant_key"])


def sale_row(row: NewSale) -> SaleRow:
    """``row`` with its stable ``id`` (from source, external id and sale date)."""
    return {**row, "id": stable_id("sal", row["source_id"], row["external_id"], row["sale_date"])}


def write_sales(conn: Connection, writes: Sequence[tuple[SaleRow, bool]]) -> None:
    """Upsert sales (rows from :func:`sale_row`), each with its ``merge`` flag, in order.

    ``merge``: a NULL never overwrites a stored value (an auction lot's page and its PDF line
    each know part of it); otherwise the row's values replace the stored ones.
    """
    emit(conn, new_sale_events(conn, [row for row, _ in writes]))  # before the rows are written
    by_key: dict[tuple[Any, ...], list[tuple[Mapping[str, Any], bool]]] = defaultdict(list)
    for row, merged in writes:
        by_key[tuple(row[c] for c in _SALE_KEY)].append((row, merged))
    replaced: list[dict[str, Any]] = []
    coalesced: list[Mapping[str, Any]] = []
    for group in by_key.values():
        last = max((i for i, (_, merged) in enumerate(group) if not merged), default=None)
        if last is None:  # merges only: folded by merge(), coalescing with what is stored
            coalesced.extend(row for row, _ in group)
            continue
        # A replace makes the stored values irrelevant: from it on, fold the rest in Python.
        [tail] = fold([row for row, _ in group[last:]], _SALE_KEY, merged=_SALE_UPDATE)
        replaced.append({**group[0][0], **{c: tail[c] for c in _SALE_UPDATE}})
    upsert(conn, sales, replaced, conflict=_SALE_KEY, update=_SALE_UPDATE)
    merge(conn, sales, coalesced, conflict=_SALE_KEY, merged=_SALE_UPDATE)


def observation_row(row: NewObservation) -> ObservationRow:
    """``row`` with its stable ``id`` (from source, item, kind and date)."""
    key = (row["source_id"], row["source_item_id"], row["kind"], row["observation_date"])
    return {**row, "id": stable_id("obs", *key)}


def write_price_observations(conn: Connection, rows: Sequence[ObservationRow]) -> None:
    """Upsert price observations (rows from :func:`observation_row`)."""
    upsert(
        conn,
        price_observations,
        rows,
        conflict=["source_id", "source_item_id", "kind", "observation_date"],
        update=("asset_id", "variant_id", "normalized_id", "price", "currency", "sale_id", "flags"),
    )


_LISTING_NEWEST = (
    "asset_id", "variant_id", "normalized_id", "title", "url", "price", "currency", "available",
    "quantity", "status",
)  # fmt: skip
_LISTING_KEY = ("source_id", "external_id")


def listing_id(source_id: str, external_id: str) -> str:
    """The stable id of a listing (from source and external id)."""
    return stable_id("lst", source_id, external_id)


def write_listings(conn: Connection, seen: Sequence[tuple[ListingRow, datetime]]) -> None:
    """Upsert listings, each seen at a time, and append the events their changes imply.

    Only a sighting at least as new as the listing's last one moves its price and availability
    (and may add ``price_changed``, ``ended`` or ``relisted``); every sighting widens
    ``first_seen_at``/``last_seen_at``. The stored listings are read once and the sightings
    applied to them in order, in memory, for the events; the upsert itself decides "newest"
    against the row it finds (one statement, whatever a concurrent worker stored meanwhile).
    """
    if not seen:
        return
    ids = [listing_id(row["source_id"], row["external_id"]) for row, _ in seen]
    state = _stored_listings(conn, ids)  # id -> price, available, first_seen_at, last_seen_at
    final: dict[str, dict[str, Any]] = {}
    events: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []  # their change events, for the outbox
    for (row, seen_at), lid in zip(seen, ids, strict=True):
        existing = state.get(lid)
        changes: list[tuple[str, Decimal | None]] = []
        newest = existing is None or seen_at >= existing["last_seen_at"]
        if existing is None:
            changes.append(("listed", row["price"]))
        elif newest:
            if Decimal(existing["price"]) != Decimal(row["price"]):
                changes.append(("price_changed", row["price"]))
            if existing["available"] and not row["available"]:
                changes.append(("ended", row["price"]))
            elif not existing["available"] and row["available"]:
                changes.append(("relisted", row["price"]))
        if changes:  # most sightings of a replay change nothing: no event to build
            changed.extend(listing_change_events(lid, row, seen_at, changes, existing))
        values = {
            **row,
            "id": lid,
            "first_seen_at": seen_at,
            "last_seen_at": seen_at,
            "status": "active" if row["available"] else "ended",
        }
        # The row sent: what the first sighting inserts, the newest sighting's values, and the
        # span of the sightings (the statement widens the stored span with it).
        folded = final.setdefault(lid, values)
        folded["first_seen_at"] = min(folded["first_seen_at"], seen_at)
        folded["last_seen_at"] = max(folded["last_seen_at"], seen_at)
        if newest:
            folded.update({c: values[c] for c in _LISTING_NEWEST})
            state[lid] = {
                "price": row["price"],
                "available": row["available"],
                "first_seen_at": seen_at if existing is None else existing["first_seen_at"],
                "last_seen_at": seen_at,
            }
        else:
            assert existing is not None  # a listing not stored yet: its sighting is the newest
            existing["first_seen_at"] = min(existing["first_seen_at"], seen_at)
        events.extend(
            {
                "id": stable_id("lev", lid, event, seen_at.isoformat()),
                "listing_id": lid,
                "event": event,
                "price": price,
                "currency": row["currency"],
                "at": seen_at,
            }
            for event, price in changes
        )
    rows = fold(list(final.values()), _LISTING_KEY)  # one per key already: sorts them
    insert_rows(conn, listings, rows, _listing_conflict)
    upsert(conn, listing_events, events, conflict=["id"])
    emit(conn, changed)


def _listing_conflict(statement: Any, dialect_name: str) -> Any:
    """The listings upsert: a sighting span as new as the stored one replaces the listing's
    values; the span always widens the stored one."""
    new, old = statement.excluded, listings.c
    least, greatest = (
        (func.least, func.greatest) if dialect_name == "postgresql" else (func.min, func.max)
    )
    newer = new.last_seen_at >= old.last_seen_at
    changes: dict[str, Any] = {
        "first_seen_at": least(old.first_seen_at, new.first_seen_at),
        "last_seen_at": greatest(old.last_seen_at, new.last_seen_at),
        "updated_at": func.now(),
    }
    changes.update({c: case((newer, new[c]), else_=old[c]) for c in _LISTING_NEWEST})
    return statement.on_conflict_do_update(index_elements=list(_LISTING_KEY), set_=changes)


def _stored_listings(conn: Connection, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    unique = sorted(set(ids))
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(unique), CHUNK):
        rows = conn.execute(
            select(
                listings.c.id,
                listings.c.price,
                listings.c.available,
                listings.c.first_seen_at,
                listings.c.last_seen_at,
            ).where(one_of(listings.c.id, unique[start : start + CHUNK], conn.dialect.name))
        )
        for row in rows.mappings():
            found[row["id"]] = dict(row)
    return found


_AUCTION_MERGED = ("title", "ends_at", "currency")
_LOT_MERGED = (
    "asset_id", "variant_id", "normalized_id", "currency", "hammer_price", "buyer_premium_rate",
    "buyer_premium", "price_realised", "estimate_low", "estimate_high", "closes_at",
)  # fmt: skip


def write_auction_lots(
    conn: Connection, lots: Sequence[tuple[AuctionRow, LotRow]]
) -> list[dict[str, Any]]:
    """Upsert ``(auction, lot)`` pairs in order; returns each lot as stored right after its own
    write (merged), in the same order.

    One lot is often seen twice — its page, and a line of the "prices realised" PDF — each with
    part of the facts. They merge: a value one source lacks (NULL) never erases what the other
    gave, the first title stays, and the status follows the newest record. The lots go out in
    rounds holding each lot once (one statement a round, usually one or two rounds a batch), so
    each record sees the lot exactly as its own write left it, as the database returns it.
    """
    if not lots:
        return []
    auction_rows: list[dict[str, Any]] = []
    lot_rows: list[dict[str, Any]] = []
    for auction, lot in lots:
        auction_id = stable_id("auc", auction["source_id"], auction["external_id"])
        auction_rows.append({**auction, "id": auction_id})
        lot_id = stable_id("lot", auction_id, lot["lot_number"])
        lot_rows.append({**lot, "id": lot_id, "auction_id": auction_id})
    results_before = stored_lot_results(conn, [row["id"] for row in lot_rows])
    merge(
        conn, auctions, auction_rows, conflict=["source_id", "external_id"], merged=_AUCTION_MERGED
    )
    rounds: dict[int, list[int]] = defaultdict(list)
    times_seen: dict[str, int] = defaultdict(int)
    for index, row in enumerate(lot_rows):
        rounds[times_seen[row["id"]]].append(index)
        times_seen[row["id"]] += 1
    stored: list[dict[str, Any]] = [{} for _ in lot_rows]
    columns = [c.name for c in auction_lots.c]
    for indexes in rounds.values():
        back = merge(
            conn,
            auction_lots,
            [lot_rows[i] for i in indexes],
            conflict=["auction_id", "lot_number"],
            merged=_LOT_MERGED,
            replace=("status",),
            returning=columns,
        )
        _derive_premiums(conn, back)
        by_id = {row["id"]: row for row in back}
        for i in indexes:
            stored[i] = by_id[lot_rows[i]["id"]]
    emit(conn, lot_result_events(results_before, stored))
    return stored


def _derive_premiums(conn: Connection, lots: list[dict[str, Any]]) -> None:
    """A lot's buyer's premium is the price realised less the hammer, known only once both are:
    on one record, or after its page and its PDF line (each with one half) merged. Stored, and
    set on the returned rows; a premium a row states is kept."""
    derived = [
        lot
        for lot in lots
        if lot["buyer_premium"] is None
        and lot["price_realised"] is not None
        and lot["hammer_price"] is not None
        and lot["price_realised"] >= lot["hammer_price"]
    ]
    for lot in derived:
        lot["buyer_premium"] = lot["price_realised"] - lot["hammer_price"]
    update_rows(  # one statement (an executemany on psycopg is one UPDATE per row)
        conn,
        auction_lots,
        [{"id": lot["id"], "buyer_premium": lot["buyer_premium"]} for lot in derived],
        key="id",
    )


def write_images(conn: Connection, owned: Iterable[tuple[str, str, Sequence[str]]]) -> None:
    """Record the image URLs of observations: ``(owner type, owner id, urls)`` with owner type
    ``listing``, ``sale`` or ``auction_lot``."""
    upsert(
        conn,
        images,
        [
            {
                "id": stable_id("img", owner_type, owner_id, url),
                "owner_type": owner_type,
                "owner_id": owner_id,
                "url": url,
            }
            for owner_type, owner_id, urls in owned
            for url in dict.fromkeys(urls)
        ],
        conflict=["owner_type", "owner_id", "url"],
    )


def write_news(conn: Connection, rows: Sequence[NewsRow]) -> None:
    upsert(
        conn,
        news,
        [{**row, "id": stable_id("nws", row["source_id"], row["external_id"])} for row in rows],
        conflict=["source_id", "external_id"],
        update=("title", "url", "published_at", "summary", "author"),
    )


def write_population(conn: Connection, rows: Sequence[PopulationRow]) -> None:
    upsert(
        conn,
        population_reports,
        [
            {**row, "id": stable_id("pop", row["grader"], row["spec_id"], row["as_of"])}
            for row in rows
        ],
        conflict=["grader", "spec_id", "as_of"],
        update=("asset_id", "title", "counts", "total"),
    )


def variant_prices(
    conn: Connection, variant_ids: Iterable[str], kinds: Sequence[str] = ("sale", "realised")
) -> list[tuple[str, str, str, Decimal, str | None]]:
    """``(observation id, variant id, currency, price, anomaly reason)`` of the index series of
    ``variant_ids``."""
    ids = sorted(set(variant_ids))
    out: list[tuple[str, str, str, Decimal, str | None]] = []
    for start in range(0, len(ids), CHUNK):
        rows = conn.execute(
            select(
                price_observations.c.id,
                price_observations.c.variant_id,
                price_observations.c.currency,
                price_observations.c.price,
                price_observations.c.anomaly_reason,
            )
            .where(
                one_of(
                    price_observations.c.variant_id, ids[start : start + CHUNK], conn.dialect.name
                )
            )
            .where(price_observations.c.kind.in_(list(kinds)))
        )
        out.extend((r[0], r[1], r[2], Decimal(r[3]), r[4]) for r in rows)
    return out


def set_anomalies(conn: Connection, reasons: Mapping[str, str | None]) -> None:
    """Set (or clear, with ``None``) ``anomaly_reason`` of price observations by id, in one
    statement."""
    update_rows(
        conn,
        price_observations,
        [{"id": obs_id, "anomaly_reason": reason} for obs_id, reason in reasons.items()],
        key="id",
    )
