"""Raw records: what a connector's ``crawl()`` yields, and what the index stores immutably.

A :class:`RawRecordInput` is source-shaped: the connector keeps the payload as the source sent it
(a JSON value) and, for HTML or PDF pages, the raw bytes as ``snapshot``. The index turns it into a
:class:`RawRecord` by adding an id, the connector's versions and the content hash. Identical content
fetched again is a *dupe*, not a new row (see :func:`content_hash`).

Example:
    >>> rec = RawRecordInput(external_id="sku-1", url="https://shop.example/products/sku-1",
    ...                      payload={"title": "Charizard"}, engine="api")
    >>> len(content_hash(rec.payload, rec.snapshot))
    64
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PlainValidator,
)

__all__ = ["EngineName", "RawRecord", "RawRecordInput", "canonical_json", "content_hash"]

EngineName = Literal["api", "firecrawl", "scrapfly"]
"""The fetch engines, in the router's default priority order."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _json_value(value: Any) -> Any:
    """Accept exactly the JSON values (str keys, no sets, no objects), checked by orjson in C:
    pydantic's recursive ``JsonValue`` check cost ~50 us a product, for every record crawled.
    The payload is kept as given, not copied: a connector must not change it after yielding."""
    try:  # datetimes and dataclasses are not JSON values: let them fail instead of converting
        orjson.dumps(
            value, option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
        )
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise ValueError(f"payload must be a JSON value: {exc}") from None
    return value


def canonical_json(payload: Any) -> str:
    """``payload`` as canonical JSON: sorted keys, no whitespace, UTF-8 kept as is.

    orjson writes exactly what ``json.dumps(sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)`` writes for JSON values, several times faster (it runs for every record
    crawled); integers beyond 64 bits fall back to the standard library."""
    try:
        return orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(
    payload: Any, snapshot: bytes | None = None, *, canonical: str | None = None
) -> str:
    """SHA-256 hex of the canonical JSON of ``payload`` followed by the ``snapshot`` bytes.

    Canonical JSON sorts keys and uses no whitespace, so the same data re-fetched in another key
    order hashes the same. Pass ``canonical`` when :func:`canonical_json` was already computed.
    """
    digest = hashlib.sha256()
    digest.update((canonical if canonical is not None else canonical_json(payload)).encode())
    if snapshot is not None:
        digest.update(b"\x00snapshot\x00")
        digest.update(snapshot)
    return digest.hexdigest()


class RawRecordInput(BaseModel):
    """One capture as a connector yields it from ``crawl()`` or ``lookup()``. In JSON (recorded
    fixtures) the ``snapshot`` bytes are base64, so PDFs and images round-trip."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", ser_json_bytes="base64", val_json_bytes="base64"
    )

    external_id: str = Field(min_length=1, max_length=512)
    url: str = Field(min_length=1)
    payload: Annotated[JsonValue, PlainValidator(_json_value)]
    snapshot: bytes | None = None
    engine: EngineName = "api"
    http_status: int | None = Field(default=None, ge=100, le=599)
    fetched_at: AwareDatetime = Field(default_factory=_utcnow)


class RawRecord(RawRecordInput):
    """A stored raw record, as ``normalize()`` receives it. Never updated, never deleted."""

    id: str = Field(pattern=r"^raw_[0-9A-Za-z]+$")
    connector_id: str
    content_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    connector_version: str
    parser_version: str
    snapshot_ref: str | None = None
