"""Records validated once: what the normalizer stored, handed to the resolver of the same process.

A normalized record is validated when its connector's output is parsed (``parse_normalized``),
then stored as JSON. The resolver reads the pending rows back; when the same process normalized
them a moment before, a :class:`ValidatedRecords` gives it each record as validated then instead of
validating the stored JSON a second time. Both are the same record: a record model's JSON parses
back to an equal model whose JSON is identical (tested on every record of the connectors' golden
fixtures and of the fake web's crawl).

A row the handoff does not hold (normalized by another worker, before a restart, or past the
handoff's ``limit``) is parsed from its JSON as before: the handoff saves work and never changes a
result. ``limit`` bounds its memory (a record model is about 3 KB).

Example:
    >>> from rareindex_connectors.records import Sale
    >>> sale = Sale(external_id="1", title="Charizard", url="https://example.test/1",
    ...             price={"amount": "5.00", "currency": "USD"}, sale_type="fixed",
    ...             sold_at="2026-01-02T00:00:00Z")
    >>> handoff = ValidatedRecords(limit=1)
    >>> handoff.keep("nrm_a", sale)
    >>> handoff.keep("nrm_b", sale)              # past the limit: not kept, parsed again later
    >>> handoff.take("nrm_a") is sale, handoff.take("nrm_a"), handoff.take("nrm_b")
    (True, None, None)
"""

from __future__ import annotations

from typing import Any

__all__ = ["HANDOFF_LIMIT", "ValidatedRecords"]

HANDOFF_LIMIT = 20_000
"""Records one handoff holds at most (about 60 MB of record models)."""


class ValidatedRecords:
    """Validated record models by normalized row id, each taken once."""

    __slots__ = ("_records", "limit")

    def __init__(self, limit: int = HANDOFF_LIMIT) -> None:
        if limit < 0:
            raise ValueError(f"limit must be 0 or more, not {limit}")
        self.limit = limit
        self._records: dict[str, Any] = {}

    def keep(self, row_id: str, record: Any) -> None:
        """Hold ``record`` (a frozen record model, as stored under ``row_id``) until taken."""
        if len(self._records) < self.limit:
            self._records[row_id] = record

    def take(self, row_id: str) -> Any | None:
        """The record stored under ``row_id``, once; None when it is not held."""
        return self._records.pop(row_id, None)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._records

    def __len__(self) -> int:
        return len(self._records)
