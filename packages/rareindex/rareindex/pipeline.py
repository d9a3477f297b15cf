"""The stages after the crawl, in one call: normalize raw records, then resolve what is pending.

Embedded mode (``rareindex demo``, ``crawl``, ``replay``) calls :func:`process` directly; in a
fleet the ``normalize_raw`` and ``resolve_pending`` actors call the same two functions. Neither
fetches anything: everything comes from stored raw records.

:func:`process` takes the raw ids in chunks of :data:`CHUNK`, oldest first: a chunk is normalized,
then everything pending is resolved, with the records the chunk stored handed over as validated
(:mod:`rareindex.handoff`: a record is validated once, not again from its stored JSON), with the
long-lived heap left out of the garbage collector's passes (:mod:`rareindex.heap`). The
resolver imports pending catalog items before it resolves anything else, so a catalog item counts
for the records of its own chunk and of every later one.

Example:
    >>> result = process(engine, registry, raw_ids, blobs=blobs)        # doctest: +SKIP
    >>> result.normalized.records, result.resolved.matched              # doctest: +SKIP
    (1842, 1824)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from .handoff import ValidatedRecords
from .heap import frozen_heap
from .indexer import ResolveSummary, resolve_pending
from .normalizer import NormalizeSummary, normalize_raw
from .registry import Registry
from .storage import Engine
from .storage.blobs import BlobStore
from .storage.normalized_store import raw_ids_in_scope, reset_for_replay

__all__ = ["CHUNK", "PipelineResult", "process", "replay"]

CHUNK = 5_000
"""Raw ids normalized before the pending records are resolved (and the handoff emptied)."""


@dataclass(frozen=True, slots=True)
class PipelineResult:
    normalized: NormalizeSummary
    resolved: ResolveSummary
    reopened: int = 0
    normalize_seconds: float = 0.0
    """Wall-clock seconds spent normalizing, and resolving (below)."""
    resolve_seconds: float = 0.0


def process(
    engine: Engine,
    registry: Registry,
    raw_ids: Sequence[str],
    *,
    blobs: BlobStore,
    chunk: int = CHUNK,
    on_chunk: Callable[[int], None] | None = None,
) -> PipelineResult:
    """Normalize ``raw_ids`` (idempotently) and resolve every pending record, ``chunk`` raw ids
    at a time; ``on_chunk(done)`` after each chunk, with the raw ids done so far (progress)."""
    if chunk < 1:
        raise ValueError(f"chunk must be 1 or more, not {chunk}")
    normalized, resolved = NormalizeSummary(), ResolveSummary()
    normalizing = resolving = 0.0
    with frozen_heap():
        for start in range(0, max(len(raw_ids), 1), chunk):
            handoff = ValidatedRecords()
            began = time.perf_counter()
            some = raw_ids[start : start + chunk]
            normalized.add(normalize_raw(engine, registry, some, blobs=blobs, handoff=handoff))
            middle = time.perf_counter()
            resolved.add(resolve_pending(engine, handoff=handoff))
            normalizing += middle - began
            resolving += time.perf_counter() - middle
            if on_chunk is not None:
                on_chunk(start + len(some))
    return PipelineResult(
        normalized, resolved, normalize_seconds=normalizing, resolve_seconds=resolving
    )


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
    handoff = ValidatedRecords()
    with frozen_heap():
        began = time.perf_counter()
        normalized = normalize_raw(engine, registry, raw_ids, blobs=blobs, handoff=handoff)
        middle = time.perf_counter()
        with engine.begin() as conn:
            reopened = reset_for_replay(conn, raw_ids)
        resolved = resolve_pending(engine, handoff=handoff)
    return PipelineResult(
        normalized,
        resolved,
        reopened,
        normalize_seconds=middle - began,
        resolve_seconds=time.perf_counter() - middle,
    )
