"""The resolve stage's quarantine: which of a batch's price observations go to the review queue.

Called by :func:`rareindex.indexer._resolve_batch` once the batch's rows are written and its
anomaly flags recomputed, before the price index is updated, in the batch's transaction. For the
batch's sales, auction results and asks (the ``sale``, ``realised`` and ``ask`` observations of a
resolved variant) it reads, set-based, the variants' categories and estimates and their newest
sales (:func:`~rareindex.storage.review_store.batch_references`), the anomaly flags, and the
change limits; then judges each observation (:mod:`.limits`) and queues the ones beyond their
limit or flagged by an anomaly rule (``reason`` ``above_limit``, ``below_limit`` or
``anomaly``), in one statement. About five statements a batch, whatever its size.

A queued observation stays stored everywhere (sales, listings, price observations); the index
leaves it out (``rareindex.pricing.sales``: reason ``quarantined``) and the multi-currency views
mark it (``quarantined``) until it is accepted. A replay finds the item there and keeps it as it
is — pending, accepted or rejected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import structlog

from ..storage import Connection
from ..storage.ids import stable_id
from ..storage.observation_store import listing_id
from ..storage.review_store import (
    VariantFacts,
    batch_anomalies,
    batch_references,
    insert_items,
    review_limits_of,
)
from .limits import RECENT_SALES, Reference, judge, limit_for, median_reference, ratio_of

__all__ = ["QUARANTINED_KINDS", "quarantine_batch", "reference_for"]

log = structlog.get_logger(__name__)

QUARANTINED_KINDS = frozenset({"sale", "realised", "ask"})
"""Observations judged: sales, auction results and listings' asks (not price guides)."""


def reference_for(
    facts: VariantFacts | None, currency: str, recent: Sequence[Decimal]
) -> Reference | None:
    """The variant's estimate in ``currency`` (its own currency, or USD), else the median of its
    recent sales in ``currency`` (see :mod:`.limits`)."""
    if facts is not None and facts.estimate_currency is not None:
        if currency == facts.estimate_currency and facts.estimate_value is not None:
            return Reference("estimate", Decimal(facts.estimate_value))
        if currency == "USD" and facts.estimate_usd is not None:
            return Reference("estimate", Decimal(facts.estimate_usd))
    return median_reference(recent)


def quarantine_batch(conn: Connection, observations: Sequence[Mapping[str, Any]]) -> int:
    """Queue the batch's observations that are beyond their limit or flagged; returns how many
    were judged so (including those already queued by an earlier pass)."""
    judged = {
        o["id"]: o for o in observations if o["kind"] in QUARANTINED_KINDS and o["variant_id"]
    }  # the last row of an id wins, as the upsert that wrote it
    if not judged:
        return 0
    facts, recent = batch_references(
        conn, {o["variant_id"] for o in judged.values()}, judged, recent=RECENT_SALES
    )
    flagged = batch_anomalies(conn, judged)
    limits = review_limits_of(conn)
    items = []
    for obs_id, o in judged.items():
        variant = facts.get(o["variant_id"])
        category = variant.category if variant else None
        factor = limit_for(category, limits)
        price = Decimal(o["price"])
        reference = reference_for(
            variant, o["currency"], recent.get((o["variant_id"], o["currency"]), [])
        )
        verdict = judge(price, reference, factor)
        anomaly = flagged.get(obs_id)
        if verdict is None and anomaly is None:
            continue
        items.append(
            {
                "id": stable_id("rev", obs_id),
                "observation_id": obs_id,
                "kind": o["kind"],
                "sale_id": o.get("sale_id"),
                "listing_id": (
                    listing_id(o["source_id"], o["source_item_id"]) if o["kind"] == "ask" else None
                ),
                "source_id": o["source_id"],
                "connector_id": o["connector_id"],
                "asset_id": o["asset_id"],
                "variant_id": o["variant_id"],
                "category": category,
                "observed_at": o["observation_date"],
                "price": price,
                "currency": o["currency"],
                "reason": verdict.reason if verdict else "anomaly",
                "anomaly_reason": anomaly,
                "reference_basis": reference.basis if reference else None,
                "reference": reference.value if reference else None,
                "ratio": ratio_of(price, reference),
                "limit_factor": factor,
                "status": "pending",
            }
        )
    insert_items(conn, items)
    if items:
        log.info(
            "review.quarantined",
            observations=len(items),
            above=sum(i["reason"] == "above_limit" for i in items),
            below=sum(i["reason"] == "below_limit" for i in items),
            anomalies=sum(i["reason"] == "anomaly" for i in items),
        )
    return len(items)
