"""Accepting or rejecting a quarantined observation: who, when and why, in one transaction.

* **accept** — the item is marked ``accepted`` with who, when and why; the observation enters the
  index at once: the price index is brought up to date for its variant in the same transaction
  (:func:`rareindex.storage.pricing_store.update_after_batch`, as after a resolve batch; nothing
  to do before a first ``rareindex index build``), even when an anomaly rule flagged it; and a
  ``review.accepted`` event goes to the outbox with the change.
* **reject** — the item is marked ``rejected``: the observation stays stored and out of the index
  for good, and the views keep marking it ``quarantined``.

Only a ``pending`` item can be decided: a second decision is
:class:`~rareindex.errors.ReviewConflict`; an unknown id :class:`~rareindex.errors.NotFound`.

Example:
    >>> item = decide(engine, "rev_…", "accept", by="user:alice",             # doctest: +SKIP
    ...               reason="a real 1st edition, not a typo")
    >>> item.status, item.decided_by                                          # doctest: +SKIP
    ('accepted', 'user:alice')
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

import structlog

from ..storage import Engine
from ..storage.outbox import emit, event, money
from ..storage.pricing_store import update_after_batch
from ..storage.review_store import ReviewItem, get_item, mark_decided

__all__ = ["Decision", "decide"]

log = structlog.get_logger(__name__)

Decision = Literal["accept", "reject"]
_STATUS: dict[Decision, str] = {"accept": "accepted", "reject": "rejected"}
MAX_REASON = 2000


def decide(engine: Engine, item_id: str, decision: Decision, *, by: str, reason: str) -> ReviewItem:
    """Record ``decision`` on review item ``item_id`` (see the module); returns the item as
    decided."""
    if not reason or len(reason) > MAX_REASON:  # the CLI and the API's schema refuse it first
        raise ValueError(f"a review decision needs a reason of 1 to {MAX_REASON} characters")
    status = _STATUS[decision]
    now = datetime.now(UTC)
    with engine.begin() as conn:
        item = get_item(conn, item_id, lock=True)
        mark_decided(conn, item_id, status, by=by, at=now, reason=reason)
        if decision == "accept":
            update_after_batch(conn, [item.variant_id])
            emit(
                conn,
                [
                    event(
                        "review.accepted",
                        asset_id=item.asset_id,
                        variant_id=item.variant_id,
                        connector_id=item.connector_id,
                        category=item.category,
                        payload={
                            "review_id": item.id,
                            "observation_id": item.observation_id,
                            "kind": item.kind,
                            "sale_id": item.sale_id,
                            "listing_id": item.listing_id,
                            "price": money(item.price),
                            "currency": item.currency,
                            "reason": item.reason,
                            "decided_by": by,
                            "decision_reason": reason,
                        },
                    )
                ],
            )
        decided = get_item(conn, item_id)
    log.info(
        "review.decided",
        item=item_id,
        decision=status,
        by=by,
        reason=reason,
        variant=item.variant_id,
        connector=item.connector_id,
    )
    return decided
