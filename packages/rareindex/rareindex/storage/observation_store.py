"""Writes of the canonical graph and its observations, idempotent by natural key.

Every row gets a :func:`~.ids.stable_id` from its natural key and is upserted, so re-resolving the
same normalized record (a replay, a retried message) rewrites the same values into the same row:
sales by ``(source, external id, sale date)``, listings by ``(source, external id)``, auction lots
by ``(auction, lot number)``, price observations by ``(source, item, kind, date)``. Listing events
are appended only when something changed (listed, price changed, ended).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, func, select, update
from sqlalchemy.dialects import postgresql, sqlite

from .ids import stable_id
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
from .upsert import upsert

__all__ = [
    "connector_sources",
    "set_anomalies",
    "upsert_variant",
    "variant_prices",
    "write_auction_lot",
    "write_images",
    "write_listing",
    "write_news",
    "write_population",
    "write_price_observation",
    "write_sale",
]

_SALE_UPDATE = (
    "asset_id", "variant_id", "normalized_id", "title", "url", "sale_type", "price_basis",
    "price_visibility", "price", "currency", "shipping", "buyer_premium", "is_lot", "flags",
)  # fmt: skip


def connector_sources(conn: Connection) -> dict[str, str]:
    """Connector id -> source id."""
    return {c: s for c, s in conn.execute(select(connectors.c.id, connectors.c.source_id))}


def upsert_variant(
    conn: Connection, asset_id: str, variant_key: str, grading: Mapping[str, Any] | None
) -> str:
    variant_id = stable_id("var", variant_key)
    grading = grading or {}
    upsert(
        conn,
        asset_variants,
        [
            {
                "id": variant_id,
                "asset_id": asset_id,
                "variant_key": variant_key,
                "grader": grading.get("grader"),
                "grade": grading.get("grade"),
                "qualifier": grading.get("qualifier"),
                "label_type": grading.get("label_type"),
                "autograph_grade": grading.get("autograph_grade"),
            }
        ],
        conflict=["variant_key"],
    )
    return variant_id


def write_sale(conn: Connection, row: dict[str, Any], *, merge: bool = False) -> str:
    """Upsert one sale (``id`` is derived here); returns its id. ``merge``: a NULL never
    overwrites a stored value (an auction lot's page and its PDF line each know part of it)."""
    row = {**row, "id": stable_id("sal", row["source_id"], row["external_id"], row["sale_date"])}
    key = ["source_id", "external_id", "sale_date"]
    if merge:
        _merge(conn, sales, row, key, _SALE_UPDATE)
    else:
        upsert(conn, sales, [row], conflict=key, update=_SALE_UPDATE)
    return str(row["id"])


def write_price_observation(conn: Connection, row: dict[str, Any]) -> str:
    key = (row["source_id"], row["source_item_id"], row["kind"], row["observation_date"])
    row = {**row, "id": stable_id("obs", *key)}
    upsert(
        conn,
        price_observations,
        [row],
        conflict=["source_id", "source_item_id", "kind", "observation_date"],
        update=("asset_id", "variant_id", "normalized_id", "price", "currency", "sale_id", "flags"),
    )
    return str(row["id"])


def write_listing(conn: Connection, row: dict[str, Any], seen_at: datetime) -> str:
    """Upsert a listing seen at ``seen_at`` and append the events its change implies."""
    listing_id = stable_id("lst", row["source_id"], row["external_id"])
    existing = conn.execute(
        select(
            listings.c.price,
            listings.c.available,
            listings.c.first_seen_at,
            listings.c.last_seen_at,
        ).where(listings.c.id == listing_id)
    ).first()
    events: list[tuple[str, Decimal | None]] = []
    first_seen, last_seen = seen_at, seen_at
    if existing is None:
        events.append(("listed", row["price"]))
    else:
        first_seen = min(existing.first_seen_at, seen_at)
        last_seen = max(existing.last_seen_at, seen_at)
        if seen_at >= existing.last_seen_at:
            if Decimal(existing.price) != Decimal(row["price"]):
                events.append(("price_changed", row["price"]))
            if existing.available and not row["available"]:
                events.append(("ended", row["price"]))
            elif not existing.available and row["available"]:
                events.append(("relisted", row["price"]))
    values = {
        **row,
        "id": listing_id,
        "first_seen_at": first_seen,
        "last_seen_at": last_seen,
        "status": "active" if row["available"] else "ended",
    }
    newest = existing is None or seen_at >= existing.last_seen_at
    update_columns = ["first_seen_at", "last_seen_at"]
    if newest:
        update_columns += [
            "asset_id", "variant_id", "normalized_id", "title", "url", "price", "currency",
            "available", "quantity", "status",
        ]  # fmt: skip
    upsert(conn, listings, [values], conflict=["source_id", "external_id"], update=update_columns)
    upsert(
        conn,
        listing_events,
        [
            {
                "id": stable_id("lev", listing_id, event, seen_at.isoformat()),
                "listing_id": listing_id,
                "event": event,
                "price": price,
                "currency": row["currency"],
                "at": seen_at,
            }
            for event, price in events
        ],
        conflict=["id"],
    )
    return listing_id


_LOT_MERGED = (
    "asset_id", "variant_id", "normalized_id", "currency", "hammer_price", "buyer_premium_rate",
    "buyer_premium", "price_realised", "estimate_low", "estimate_high", "closes_at",
)  # fmt: skip


def write_auction_lot(
    conn: Connection, auction: dict[str, Any], lot: dict[str, Any]
) -> dict[str, Any]:
    """Upsert an auction and one of its lots; returns the lot as now stored (merged).

    One lot is often seen twice — its page, and a line of the "prices realised" PDF — each with
    part of the facts. They merge: a value one source lacks (NULL) never erases what the other
    gave, the first title stays, and the status follows the newest record.
    """
    auction_id = stable_id("auc", auction["source_id"], auction["external_id"])
    _merge(conn, auctions, {**auction, "id": auction_id}, ["source_id", "external_id"],
           ("title", "ends_at", "currency"))  # fmt: skip
    lot_id = stable_id("lot", auction_id, lot["lot_number"])
    row = {**lot, "id": lot_id, "auction_id": auction_id}
    _merge(conn, auction_lots, row, ["auction_id", "lot_number"], _LOT_MERGED, replace=("status",))
    return dict(
        conn.execute(select(auction_lots).where(auction_lots.c.id == lot_id)).one()._mapping
    )


def _merge(
    conn: Connection,
    table: Any,
    row: dict[str, Any],
    conflict: Sequence[str],
    merged: Sequence[str],
    *,
    replace: Sequence[str] = (),
) -> None:
    """Upsert where ``merged`` columns keep the stored value when the new one is NULL."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(table).values(row)
    changes: dict[str, Any] = {c: func.coalesce(statement.excluded[c], table.c[c]) for c in merged}
    changes.update({c: statement.excluded[c] for c in replace})
    conn.execute(statement.on_conflict_do_update(index_elements=list(conflict), set_=changes))


def write_images(conn: Connection, owner_type: str, owner_id: str, urls: Sequence[str]) -> None:
    """Record the image URLs of an observation (``listing``, ``sale``, ``auction_lot``)."""
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
            for url in dict.fromkeys(urls)
        ],
        conflict=["owner_type", "owner_id", "url"],
    )


def write_news(conn: Connection, row: dict[str, Any]) -> str:
    row = {**row, "id": stable_id("nws", row["source_id"], row["external_id"])}
    upsert(
        conn,
        news,
        [row],
        conflict=["source_id", "external_id"],
        update=("title", "url", "published_at", "summary", "author"),
    )
    return str(row["id"])


def write_population(conn: Connection, row: dict[str, Any]) -> str:
    row = {**row, "id": stable_id("pop", row["grader"], row["spec_id"], row["as_of"])}
    upsert(
        conn,
        population_reports,
        [row],
        conflict=["grader", "spec_id", "as_of"],
        update=("asset_id", "title", "counts", "total"),
    )
    return str(row["id"])


def variant_prices(
    conn: Connection, variant_ids: Iterable[str], kinds: Sequence[str] = ("sale", "realised")
) -> list[tuple[str, str, str, Decimal]]:
    """``(observation id, variant id, currency, price)`` of the index series of ``variant_ids``."""
    ids = sorted(set(variant_ids))
    out: list[tuple[str, str, str, Decimal]] = []
    for start in range(0, len(ids), 500):
        rows = conn.execute(
            select(
                price_observations.c.id,
                price_observations.c.variant_id,
                price_observations.c.currency,
                price_observations.c.price,
            )
            .where(price_observations.c.variant_id.in_(ids[start : start + 500]))
            .where(price_observations.c.kind.in_(list(kinds)))
        )
        out.extend((r[0], r[1], r[2], Decimal(r[3])) for r in rows)
    return out


def set_anomalies(conn: Connection, reasons: Mapping[str, str | None]) -> None:
    """Set (or clear, with ``None``) ``anomaly_reason`` of price observations by id."""
    for obs_id, reason in reasons.items():
        conn.execute(
            update(price_observations)
            .where(price_observations.c.id == obs_id)
            .values(anomaly_reason=reason)
        )
