"""The stages after the crawl, in one call: normalize raw records, then resolve what is pending.

Embedded mode (``rareindex demo``, ``rareindex replay``) calls :func:`process` directly; in a fleet
the ``normalize_raw`` and ``resolve_pending`` actors call the same two functions. Neither fetches
anything: everything comes from stored raw records.

Example:
    >>> result = process(engine, registry, raw_ids, blobs=blobs)        # doctest: +SKIP
    >>> result.normalized.records, result.resolved.matched              # doctest: +SKIP
    (1842, 1824)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from .indexer import ResolveSummary, resolve_pending
from .normalizer import NormalizeSummary, normalize_raw
from .registry import Registry
from .storage import Engine
from .storage.blobs import BlobStore
from .storage.normalized_store import raw_ids_in_scope, reset_for_replay

__all__ = ["PipelineResult", "process", "replay"]


@dataclass(frozen=True, slots=True)
class PipelineResult:
    normalized: NormalizeSummary
    resolved: ResolveSummary
    reopened: int = 0


def process(
    engine: Engine, registry: Registry, raw_ids: Sequence[str], *, blobs: BlobStore
) -> PipelineResult:
    """Normalize ``raw_ids`` (idempotently) and resolve every pending record."""
    normalized = normalize_raw(engine, registry, raw_ids, blobs=blobs)
    return PipelineResult(normalized, resolve_pending(engine))


def replay(
    engine: Engine,
    registry: Registry,
    *,
    blobs: BlobStore,
    connector_id: str | None = None,
    since: datetime | None = None,
) -> PipelineResult:
    """Re-normalize and re-resolve stored raw records, without any network access.

    Raw records not yet normalized with their connector's current parser version are normalized;
    every normalized record in scope is resolved again against the current catalog. All writes
    are idempotent upserts with stable ids, so a second replay changes nothing.
    """
    if connector_id is not None:
        registry.get(connector_id)  # a clear error listing the known connectors
    with engine.connect() as conn:
        raw_ids = raw_ids_in_scope(conn, connector_id=connector_id, since=since)
    normalized = normalize_raw(engine, registry, raw_ids, blobs=blobs)
    with engine.begin() as conn:
        reopened = reset_for_replay(conn, raw_ids)
    return PipelineResult(normalized, resolve_pending(engine), reopened)
