"""What each write tells the outbox: the change events of a batch of observation rows, a health
snapshot or a certificate check, built a batch at a time (one read of the stored state where an
event needs it, never one per row) and handed to :func:`~.outbox.emit` by the writer.

=========================  =================================================================
``sale.recorded``          a sale row not stored before (a replay records nothing)
``auction_lot.result``     a lot whose result (sold, passed, withdrawn; its prices) is new
``listing.appeared``       a listing first seen, or relisted (``"relisted": true``)
``listing.price_changed``  the newest sighting's price differs: ``old``, ``new``, ``ratio``
``listing.ended``          the newest sighting is no longer available
``cert.mismatch``          a sighting's title newly disagrees with its verified certificate
``connector.health_changed``  a connector's health status differs from its previous snapshot
``estimate.moved``         a variant's USD estimate moved by more than :data:`ESTIMATE_MOVE`
=========================  =================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, select

from .membership import one_of
from .outbox import event, money
from .schema import auction_lots, price_estimates, sales

__all__ = [
    "ESTIMATE_MOVE",
    "LOT_RESULTS",
    "cert_mismatch_events",
    "estimate_moved_events",
    "health_event",
    "listing_events",
    "lot_result_events",
    "new_sale_events",
    "stored_estimates",
    "stored_lot_results",
]

CHUNK = 500
_RATIO = Decimal("0.000001")
LOT_RESULTS = frozenset({"sold", "passed", "withdrawn"})
"""The lot statuses that are a result (``upcoming`` and ``open`` are not)."""
ESTIMATE_MOVE = Decimal("0.10")
"""An estimate moving by more than this fraction (up or down) is an ``estimate.moved``: every
batch re-prices the whole category along its index, so smaller moves are not news."""
_LOT_RESULT_COLUMNS = ("status", "hammer_price", "price_realised", "buyer_premium", "currency")


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def new_sale_events(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``sale.recorded`` for the sale rows (with their ids) not stored yet; call it before the
    rows are written. A sale seen twice in the batch is recorded once, with its last values."""
    latest = {row["id"]: row for row in rows}
    ids = sorted(latest)
    stored: set[str] = set()
    for start in range(0, len(ids), CHUNK):
        stored.update(
            conn.execute(
                select(sales.c.id).where(
                    one_of(sales.c.id, ids[start : start + CHUNK], conn.dialect.name)
                )
            )
            .scalars()
            .all()
        )
    return [
        event(
            "sale.recorded",
            asset_id=row["asset_id"],
            variant_id=row["variant_id"],
            connector_id=row["connector_id"],
            payload={
                "sale_id": sale_id,
                "source_id": row["source_id"],
                "external_id": row["external_id"],
                "sale_date": _iso(row["sale_date"]),
                "sale_type": row.get("sale_type"),
                "price": money(row["price"]),
                "currency": row["currency"],
                "title": row.get("title"),
                "url": row.get("url"),
            },
        )
        for sale_id, row in latest.items()
        if sale_id not in stored
    ]


def listing_events(
    listing_id: str,
    row: Mapping[str, Any],
    seen_at: datetime,
    changes: Iterable[tuple[str, Decimal | None]],
    before: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    """The events of one sighting's listing changes (``listed``, ``relisted``,
    ``price_changed``, ``ended``); ``before`` is the listing as stored before it."""
    out = []
    base = {
        "listing_id": listing_id,
        "source_id": row["source_id"],
        "external_id": row["external_id"],
        "seen_at": seen_at.isoformat(),
        "currency": row["currency"],
        "title": row.get("title"),
        "url": row.get("url"),
    }
    for change, price in changes:
        payload: dict[str, Any] = {**base, "price": money(price)}
        if change in ("listed", "relisted"):
            kind = "listing.appeared"
            payload["relisted"] = change == "relisted"
        elif change == "price_changed":
            kind = "listing.price_changed"
            old = Decimal(before["price"]) if before is not None else None
            new = Decimal(price) if price is not None else None
            payload.update(
                old=money(old),
                new=money(new),
                ratio=(
                    format((new / old).quantize(_RATIO).normalize(), "f")
                    if old is not None and new is not None and old != 0
                    else None
                ),
            )
        elif change == "ended":
            kind = "listing.ended"
        else:
            continue
        out.append(
            event(
                kind,
                asset_id=row["asset_id"],
                variant_id=row["variant_id"],
                connector_id=row["connector_id"],
                payload=payload,
            )
        )
    return out


def stored_lot_results(conn: Connection, lot_ids: Iterable[str]) -> dict[str, tuple[Any, ...]]:
    """Lot id -> its stored result columns, before a batch writes the lots."""
    ids = sorted(set(lot_ids))
    found: dict[str, tuple[Any, ...]] = {}
    columns = [auction_lots.c[name] for name in _LOT_RESULT_COLUMNS]
    for start in range(0, len(ids), CHUNK):
        rows = conn.execute(
            select(auction_lots.c.id, *columns).where(
                one_of(auction_lots.c.id, ids[start : start + CHUNK], conn.dialect.name)
            )
        )
        found.update({row[0]: tuple(row[1:]) for row in rows})
    return found


def _result(lot: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(
        Decimal(lot[c]) if c != "status" and c != "currency" and lot[c] is not None else lot[c]
        for c in _LOT_RESULT_COLUMNS
    )


def lot_result_events(
    before: Mapping[str, tuple[Any, ...]], stored: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """``auction_lot.result`` for each lot whose result, as the batch left it, is new: a result
    status (:data:`LOT_RESULTS`) with a status or price not stored before."""
    final = {lot["id"]: lot for lot in stored}
    out = []
    for lot_id, lot in final.items():
        if lot["status"] not in LOT_RESULTS:
            continue
        previous = before.get(lot_id)
        normal = _result(lot)
        if (
            previous is not None
            and _result(dict(zip(_LOT_RESULT_COLUMNS, previous, strict=True))) == normal
        ):
            continue
        out.append(
            event(
                "auction_lot.result",
                asset_id=lot["asset_id"],
                variant_id=lot["variant_id"],
                connector_id=lot["connector_id"],
                payload={
                    "lot_id": lot_id,
                    "auction_id": lot["auction_id"],
                    "lot_number": lot["lot_number"],
                    "source_id": lot.get("source_id"),
                    "status": lot["status"],
                    "previous_status": previous[0] if previous is not None else None,
                    "currency": lot["currency"],
                    "hammer_price": money(lot["hammer_price"]),
                    "buyer_premium": money(lot["buyer_premium"]),
                    "price_realised": money(lot["price_realised"]),
                    "closes_at": _iso(lot["closes_at"]),
                    "title": lot.get("title"),
                },
            )
        )
    return out


def cert_mismatch_events(
    changes: Mapping[str, str | None],
    sightings: Iterable[Mapping[str, Any]],
    certs: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """``cert.mismatch`` for each sighting whose mismatch signal is newly set (a cleared one is
    no event)."""
    out = []
    for sighting in sightings:
        value = changes.get(sighting["id"])
        if value is None:
            continue
        cert = certs[sighting["certificate_id"]]
        out.append(
            event(
                "cert.mismatch",
                asset_id=cert.get("asset_id"),
                variant_id=cert.get("variant_id"),
                stream=None if cert.get("asset_id") else f"certificate:{cert['id']}",
                payload={
                    "sighting_id": sighting["id"],
                    "certificate_id": cert["id"],
                    "grader": cert["grader"],
                    "cert_number": cert["cert_number"],
                    "mismatch": value,
                    "subject": cert.get("subject"),
                    "year": cert.get("year"),
                    "source_id": sighting["source_id"],
                    "listing_external_id": sighting["listing_external_id"],
                    "url": sighting.get("url"),
                },
            )
        )
    return out


def health_event(previous: str | None, snapshot: Any) -> list[dict[str, Any]]:
    """``connector.health_changed`` when the snapshot's status differs from the stored one
    (``previous`` None: the connector's first snapshot)."""
    if previous == snapshot.status:
        return []
    return [
        event(
            "connector.health_changed",
            connector_id=snapshot.connector_id,
            payload={
                "connector_id": snapshot.connector_id,
                "previous_status": previous,
                "status": snapshot.status,
                "checked_at": _iso(snapshot.checked_at),
                "reasons": list(snapshot.reasons),
            },
        )
    ]


def stored_estimates(conn: Connection) -> dict[str, Decimal]:
    """Variant id -> its published USD estimate, before the pricing replaces them."""
    rows = conn.execute(select(price_estimates.c.variant_id, price_estimates.c.value_usd))
    return {variant_id: Decimal(value) for variant_id, value in rows}


def estimate_moved_events(
    before: Mapping[str, Decimal], rows: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """``estimate.moved`` for each new estimate row (of ``price_estimates``) whose USD value
    differs from its published one by more than :data:`ESTIMATE_MOVE` (a first estimate is no
    move)."""
    out = []
    for row in rows:
        old = before.get(row["variant_id"])
        new = Decimal(row["value_usd"])
        if old is None or old <= 0 or abs(new / old - 1) <= ESTIMATE_MOVE:
            continue
        out.append(
            event(
                "estimate.moved",
                asset_id=row["asset_id"],
                variant_id=row["variant_id"],
                payload={
                    "variant_id": row["variant_id"],
                    "old": money(old),
                    "new": money(new),
                    "ratio": format((new / old).quantize(_RATIO).normalize(), "f"),
                    "currency": "USD",
                    "as_of": row["as_of"].isoformat(),
                    "basis": row["basis"],
                    "n_sales": row["n_sales"],
                    "confidence": row["confidence"],
                },
            )
        )
    return out
