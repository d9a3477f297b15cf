"""The review queue in the database: what the resolve stage quarantines, what the index leaves
out, and the decisions.

Reads for the resolve stage are set-based — a batch costs the same few statements whatever its
size: :func:`batch_references` (the variants' categories and estimates, and each variant's newest
sales per currency, in one query each per 500 variants), :func:`batch_anomalies` (which of the
batch's observations the anomaly rules flagged), :func:`review_limits_of` and one multi-row
:func:`insert_items` (``ON CONFLICT DO NOTHING``: a replay never queues an observation twice, and
never undoes a decision).

The index reads :func:`review_holds`: the sales held out (pending or rejected) and those accepted
(which enter even when an anomaly rule flagged them).

Example:
    >>> held, accepted = review_holds(conn, variant_ids=["var_…"])       # doctest: +SKIP
    >>> items = list_items(engine, status="pending")                    # doctest: +SKIP
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, exists, func, select, update

from ..errors import NotFound, ReviewConflict
from .membership import one_of
from .schema import asset_variants, assets, price_estimates, price_observations
from .schema.review import review_items, review_limits
from .upsert import upsert

__all__ = [
    "HELD",
    "ReviewItem",
    "VariantFacts",
    "batch_anomalies",
    "batch_references",
    "get_item",
    "insert_items",
    "list_items",
    "mark_decided",
    "quarantine_share",
    "review_holds",
    "review_limits_of",
    "set_limit",
]

CHUNK = 500
HELD = ("pending", "rejected")
"""Statuses that keep an observation out of the index."""
_SALE_KINDS = ("sale", "realised")


@dataclass(frozen=True, slots=True)
class VariantFacts:
    """What the quarantine rule needs of a variant: its category and its estimate, if any."""

    category: str | None
    estimate_currency: str | None = None
    estimate_value: Decimal | None = None
    estimate_usd: Decimal | None = None


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One ``review_items`` row."""

    id: str
    observation_id: str
    kind: str
    sale_id: str | None
    listing_id: str | None
    source_id: str
    connector_id: str
    asset_id: str
    variant_id: str
    category: str | None
    observed_at: datetime
    price: Decimal
    currency: str
    reason: str
    anomaly_reason: str | None
    reference_basis: str | None
    reference: Decimal | None
    ratio: Decimal | None
    limit_factor: Decimal | None
    status: str
    decided_by: str | None
    decided_at: datetime | None
    decision_reason: str | None
    created_at: datetime | None


def _item(row: Any) -> ReviewItem:
    return ReviewItem(**{name: row._mapping[name] for name in ReviewItem.__slots__})


def _chunks(values: Iterable[str]) -> Iterable[list[str]]:
    ordered = sorted(set(values))
    for start in range(0, len(ordered), CHUNK):
        yield ordered[start : start + CHUNK]


def batch_references(
    conn: Connection, variant_ids: Iterable[str], exclude: Iterable[str], *, recent: int
) -> tuple[dict[str, VariantFacts], dict[tuple[str, str], list[Decimal]]]:
    """For ``variant_ids``: their :class:`VariantFacts`, and ``(variant, currency)`` -> the
    prices of their newest ``recent`` sales (newest first) — not the observations ``exclude``
    names (the batch's own), none held for review, none flagged as an anomaly."""
    facts: dict[str, VariantFacts] = {}
    prices: dict[tuple[str, str], list[Decimal]] = defaultdict(list)
    skip = sorted(set(exclude))
    po, held = price_observations.c, review_items.c
    for chunk in _chunks(variant_ids):
        rows = conn.execute(
            select(
                asset_variants.c.id,
                assets.c.category,
                price_estimates.c.currency,
                price_estimates.c.value,
                price_estimates.c.value_usd,
            )
            .select_from(asset_variants)
            .join(assets, assets.c.id == asset_variants.c.asset_id)
            .outerjoin(price_estimates, price_estimates.c.variant_id == asset_variants.c.id)
            .where(one_of(asset_variants.c.id, chunk, conn.dialect.name))
        )
        for vid, category, currency, value, usd in rows:
            facts[vid] = VariantFacts(category, currency, value, usd)
        newest = func.row_number().over(
            partition_by=(po.variant_id, po.currency),
            order_by=(po.observation_date.desc(), po.id.desc()),
        )
        conditions = [
            one_of(po.variant_id, chunk, conn.dialect.name),
            po.kind.in_(_SALE_KINDS),
            po.anomaly_reason.is_(None),
            ~exists().where(held.observation_id == po.id, held.status.in_(HELD)),
        ]
        if skip:
            conditions.append(~one_of(po.id, skip, conn.dialect.name))
        ranked = (
            select(po.variant_id, po.currency, po.price, newest.label("n"))
            .where(*conditions)
            .subquery()
        )
        for vid, currency, price, _ in conn.execute(
            select(ranked).where(ranked.c.n <= recent).order_by(ranked.c.variant_id, ranked.c.n)
        ):
            prices[vid, currency].append(price if isinstance(price, Decimal) else Decimal(price))
    return facts, dict(prices)


def batch_anomalies(conn: Connection, observation_ids: Iterable[str]) -> dict[str, str]:
    """Observation id -> its anomaly reason, for the flagged ones among ``observation_ids``."""
    po = price_observations.c
    found: dict[str, str] = {}
    for chunk in _chunks(observation_ids):
        found.update(
            (obs_id, reason)
            for obs_id, reason in conn.execute(
                select(po.id, po.anomaly_reason).where(
                    one_of(po.id, chunk, conn.dialect.name), po.anomaly_reason.is_not(None)
                )
            )
        )
    return found


def review_limits_of(conn: Connection) -> dict[str, Decimal]:
    """Category (or ``*``) -> its change-limit factor."""
    return {
        c: Decimal(f)
        for c, f in conn.execute(select(review_limits.c.category, review_limits.c.factor))
    }


def set_limit(engine: Engine, category: str, factor: Decimal, *, by: str, at: datetime) -> None:
    """Set the change limit of ``category`` (``*``: the default of every other category)."""
    with engine.begin() as conn:
        upsert(
            conn,
            review_limits,
            [{"category": category, "factor": factor, "set_by": by, "set_at": at}],
            conflict=["category"],
            update=("factor", "set_by", "set_at"),
        )


def insert_items(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Queue observations for review; one already queued (whatever its status) is left as is."""
    upsert(conn, review_items, rows, conflict=["observation_id"])


def review_holds(
    conn: Connection,
    variant_id: str | None = None,
    variant_ids: Sequence[str] | None = None,
) -> tuple[set[str], set[str]]:
    """``(held, accepted)``: the sale ids kept out of the index (pending or rejected) and those
    accepted, of ``variant_id`` / ``variant_ids`` (neither: every sale)."""
    ri = review_items.c
    query = select(ri.sale_id, ri.status).where(ri.sale_id.is_not(None))
    if variant_id is not None:
        query = query.where(ri.variant_id == variant_id)
    if variant_ids is not None:
        query = query.where(ri.variant_id.in_(sorted(set(variant_ids))))
    held: set[str] = set()
    accepted: set[str] = set()
    for sale_id, status in conn.execute(query):
        (accepted if status == "accepted" else held).add(sale_id)
    return held, accepted


def list_items(
    bind: Engine | Connection, *, status: str | None = "pending", limit: int = 1000
) -> list[ReviewItem]:
    """Review items, oldest first; ``status`` None: every status."""
    query = select(review_items).order_by(review_items.c.created_at, review_items.c.id)
    if status is not None:
        query = query.where(review_items.c.status == status)
    query = query.limit(limit)
    if isinstance(bind, Engine):
        with bind.connect() as conn:
            return [_item(r) for r in conn.execute(query)]
    return [_item(r) for r in bind.execute(query)]


def get_item(conn: Connection, item_id: str, *, lock: bool = False) -> ReviewItem:
    """One item by id (locked for the decision with ``lock``); :class:`NotFound` otherwise."""
    query = select(review_items).where(review_items.c.id == item_id)
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise NotFound(f"no review item {item_id!r}")
    return _item(row)


def mark_decided(
    conn: Connection, item_id: str, status: str, *, by: str, at: datetime, reason: str
) -> None:
    """Record a decision on a pending item; one already decided is :class:`ReviewConflict`."""
    done = conn.execute(
        update(review_items)
        .where(and_(review_items.c.id == item_id, review_items.c.status == "pending"))
        .values(status=status, decided_by=by, decided_at=at, decision_reason=reason)
    )
    if done.rowcount != 1:
        current = get_item(conn, item_id)
        raise ReviewConflict(
            f"review item {item_id} was {current.status} already "
            f"(by {current.decided_by} at {current.decided_at:%Y-%m-%d %H:%M} UTC)"
        )


def quarantine_share(
    conn: Connection, connector_id: str, *, recent_since: datetime, baseline_since: datetime
) -> tuple[int, int, int, int]:
    """``(recent, recent quarantined, baseline, baseline quarantined)``: the connector's index
    observations (sales, auction results, asks) first written since ``recent_since``, and those
    written from ``baseline_since`` up to it, with how many of each were quarantined."""
    po, ri = price_observations.c, review_items.c
    recent = po.created_at >= recent_since
    quarantined = ri.id.is_not(None)

    def count(*when: Any) -> Any:
        return func.coalesce(func.sum(case((and_(*when), 1), else_=0)), 0)

    row = conn.execute(
        select(
            count(recent),
            count(recent, quarantined),
            count(~recent),
            count(~recent, quarantined),
        )
        .select_from(price_observations)
        .outerjoin(review_items, ri.observation_id == po.id)
        .where(
            po.connector_id == connector_id,
            po.kind.in_(("sale", "realised", "ask")),
            po.created_at >= baseline_since,
        )
    ).one()
    return int(row[0]), int(row[1]), int(row[2]), int(row[3])
