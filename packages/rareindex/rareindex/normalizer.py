"""The normalizer stage: raw records -> ``normalized_records`` through each connector's pure
``normalize()``.

* **Idempotent** per raw record and parser version: a raw record already normalized with its
  connector's current ``parser_version`` is skipped; a bumped parser version normalizes again
  into new rows (the old ones stay, for comparison).
* **Fails closed:** a ``ParseError`` keeps its reason; a connector that is gone is
  ``connector_missing``; anything else a connector raises is ``normalize_crashed``; an empty result
  is ``no_records``. Each becomes one visible ``failed``/``rejected`` row — never a skipped record,
  never a crashed worker.
* **Rules before statistics:** every record gets its rule flags (lots, reprints, negated grades,
  hidden best-offer prices …) in ``anomaly_flags`` now; price-distribution anomalies need the
  variant, so the resolver flags them after matching.
* **Field presence** per connector and fetch day is added to ``connector_field_stats`` (only for
  newly normalized raw records, so replays do not double count), and a sharp drop of a field's
  presence is reported as schema drift.

Example:
    >>> summary = normalize_raw(engine, registry, raw_ids, blobs=blobs)   # doctest: +SKIP
    >>> summary.records, summary.failed                                   # doctest: +SKIP
    (1673, 0)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import structlog

from rareindex_connectors.errors import ParseError
from rareindex_connectors.records import RawRecord, parse_normalized

from .handoff import ValidatedRecords
from .quality import DriftSignal, count_fields, detect_drift, rule_flags
from .registry import Registry
from .storage import Engine, RawRecordStore
from .storage.blobs import BlobStore
from .storage.field_stats import add_field_stats_many, load_field_histories
from .storage.normalized_store import (
    NormalizedRow,
    discard_missing_connector_rows,
    insert_normalized,
    normalized_raw_ids,
    normalized_row_id,
)

__all__ = ["NORMALIZE_FAILURES", "NormalizeSummary", "normalize_raw"]

log = structlog.get_logger(__name__)

NORMALIZE_FAILURES = ("connector_missing", "normalize_crashed", "no_records")
"""Failure reasons besides the SDK's ``ParseReason`` values."""
BATCH = 200
MISSING_VERSION = ""
"""The parser version of a failure row whose connector is not registered."""
DRIFT_WINDOW = timedelta(days=7)


@dataclass(slots=True)
class NormalizeSummary:
    raw: int = 0
    skipped: int = 0
    records: int = 0
    failed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    drift: list[tuple[str, DriftSignal]] = field(default_factory=list)

    def add(self, other: NormalizeSummary) -> None:
        self.raw += other.raw
        self.skipped += other.skipped
        self.records += other.records
        self.failed += other.failed
        self.reasons.update(other.reasons)
        self.kinds.update(other.kinds)
        self.drift.extend(other.drift)


def normalize_raw(
    engine: Engine,
    registry: Registry,
    raw_ids: Sequence[str],
    *,
    blobs: BlobStore,
    batch: int = BATCH,
    handoff: ValidatedRecords | None = None,
) -> NormalizeSummary:
    """Normalize ``raw_ids`` in batches of ``batch`` (one transaction each). Each record this call
    stores is also kept in ``handoff``, when given, for the resolver of this process."""
    total = NormalizeSummary()
    for start in range(0, len(raw_ids), batch):
        chunk = raw_ids[start : start + batch]
        total.add(_normalize_batch(engine, registry, chunk, blobs, handoff))
    return total


def _versions(registry: Registry) -> dict[str, str]:
    return {c.meta.id: c.parser_version for c in registry}


def _normalize_batch(
    engine: Engine,
    registry: Registry,
    raw_ids: Sequence[str],
    blobs: BlobStore,
    handoff: ValidatedRecords | None,
) -> NormalizeSummary:
    """One transaction, set-based: a fixed handful of statements whatever the batch size (which
    raw records are done, load the rest, insert the rows, count fields, read drift history)."""
    summary = NormalizeSummary()
    versions = _versions(registry)
    rows: list[NormalizedRow] = []
    models: dict[str, Any] = {}  # row id -> its validated record
    presence: dict[tuple[str, date], list[Any]] = defaultdict(list)
    raw_ids = list(dict.fromkeys(raw_ids))  # an id given twice is normalized (and counted) once
    with engine.begin() as conn:
        done = normalized_raw_ids(conn, raw_ids, versions)
        summary.skipped = sum(1 for raw_id in raw_ids if raw_id in done)
        todo = [raw_id for raw_id in raw_ids if raw_id not in done]
        raws = RawRecordStore(blobs).get_many(conn, todo)
        for raw_id in todo:
            raw = raws[raw_id]
            summary.raw += 1
            records, failure = _run_normalize(registry, raw)
            # A missing connector has no parser version: its failure row must not count as
            # "done" for the version the connector comes back with.
            version = versions.get(raw.connector_id, MISSING_VERSION)
            if failure is not None:
                summary.failed += 1
                summary.reasons[failure] += 1
                status = "rejected" if failure == "no_records" else "failed"
                rows.append(_failure_row(raw, version, status, failure))
                continue
            for ordinal, record in enumerate(records):
                summary.records += 1
                summary.kinds[record.kind] += 1
                rows.append(
                    {
                        "id": normalized_row_id(raw.id, version, ordinal),
                        "raw_id": raw.id,
                        "connector_id": raw.connector_id,
                        "parser_version": version,
                        "ordinal": ordinal,
                        "kind": record.kind,
                        "record": record.model_dump(mode="json", exclude_none=True),
                        "status": "pending",
                        "reject_reason": None,
                        "anomaly_flags": list(rule_flags(record)) or None,
                        "fetched_at": raw.fetched_at,
                    }
                )
                models[rows[-1]["id"]] = record
                presence[raw.connector_id, raw.fetched_at.date()].append((rows[-1]["id"], record))
        inserted = insert_normalized(conn, rows)
        stored = [r for r in rows if r["status"] == "pending" and r["id"] in inserted]
        summary.records = len(stored)  # what this call stored, not what a concurrent one did
        summary.kinds = Counter(r["kind"] for r in stored)
        if handoff is not None:
            for row in stored:
                handoff.keep(row["id"], models[row["id"]])
        discard_missing_connector_rows(
            conn, [r["raw_id"] for r in rows if r["status"] == "pending"]
        )
        # Only what this transaction inserted is counted: a raw record normalized concurrently
        # by another worker (or given twice) adds to the counters once.
        counted = {
            key: count_fields(found)
            for key, pairs in presence.items()
            if (found := [record for row_id, record in pairs if row_id in inserted])
        }
        add_field_stats_many(conn, counted)
        if counted:
            histories = load_field_histories(
                conn, {c for c, _ in counted}, min(d for _, d in counted) - DRIFT_WINDOW
            )
            for connector_id, day in sorted(counted):
                # Days before this day's window are ignored by detect_drift.
                for signal in detect_drift(histories[connector_id], day):
                    summary.drift.append((connector_id, signal))
                    log.warning(
                        "schema.drift_detected",
                        connector=connector_id,
                        record_kind=signal.record_kind,
                        field=signal.field,
                        baseline_ratio=round(signal.baseline_ratio, 3),
                        today_ratio=round(signal.today_ratio, 3),
                    )
    if summary.raw:
        log.info(
            "normalize.completed",
            raw=summary.raw,
            records=summary.records,
            failed=summary.failed,
            skipped=summary.skipped,
        )
    return summary


def _run_normalize(registry: Registry, raw: RawRecord) -> tuple[list[Any], str | None]:
    connector = registry.connectors.get(raw.connector_id)
    if connector is None:
        return [], "connector_missing"
    try:
        produced = connector.normalize(raw)
        records = [parse_normalized(r) for r in produced]
    except ParseError as exc:
        log.info("parse.failed", connector=raw.connector_id, raw_id=raw.id, reason=exc.reason.value)
        return [], exc.reason.value
    except Exception as exc:
        log.warning(
            "normalize.crashed",
            connector=raw.connector_id,
            raw_id=raw.id,
            error=type(exc).__name__,
        )
        return [], "normalize_crashed"
    if not records:
        return [], "no_records"
    return records, None


def _failure_row(raw: RawRecord, version: str, status: str, reason: str) -> NormalizedRow:
    return {
        "id": normalized_row_id(raw.id, version, 0),
        "raw_id": raw.id,
        "connector_id": raw.connector_id,
        "parser_version": version,
        "ordinal": 0,
        "kind": "none",
        "record": {"reason": reason, "url": raw.url},
        "status": status,
        "reject_reason": reason,
        "anomaly_flags": None,
        "fetched_at": raw.fetched_at,
    }
