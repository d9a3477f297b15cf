"""Raw records read back a batch at a time, for the stages after the crawl.

:meth:`RawRecordStore.get <rareindex.storage.RawRecordStore.get>` reads one record per query;
the normalizer reads hundreds per batch, so :func:`load_raw_records` reads them in one query per
:data:`CHUNK` ids (snapshots still come from the blob store, one file each).

Example:
    >>> with engine.connect() as conn:                                    # doctest: +SKIP
    ...     raws = load_raw_records(conn, blobs, ["raw_01…", "raw_02…"])
    >>> raws["raw_01…"].connector_id                                      # doctest: +SKIP
    'card-market'
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, select

from rareindex_connectors import RawRecord

from .blobs import BlobStore
from .raw_store import record_from_row
from .schema import raw_records

__all__ = ["CHUNK", "load_raw_records"]

CHUNK = 500
"""Ids per ``IN (…)`` list: far below any driver's bound-parameter limit."""


def load_raw_records(
    conn: Connection, blobs: BlobStore, raw_ids: Sequence[str], *, with_snapshot: bool = True
) -> dict[str, RawRecord]:
    """The stored records of ``raw_ids`` by id, snapshots loaded. ``KeyError`` names an id that
    is not stored (as ``RawRecordStore.get`` does)."""
    ids = list(dict.fromkeys(raw_ids))
    found: dict[str, RawRecord] = {}
    for start in range(0, len(ids), CHUNK):
        rows = conn.execute(
            select(raw_records).where(raw_records.c.id.in_(ids[start : start + CHUNK]))
        )
        for row in rows.mappings():
            found[row["id"]] = record_from_row(row, blobs, with_snapshot=with_snapshot)
    missing = [raw_id for raw_id in ids if raw_id not in found]
    if missing:
        raise KeyError(missing[0])
    return found
