"""Field presence: how many records of each kind carry each field (the input to drift detection).

A source that changes its page layout rarely fails outright: the parser keeps producing records,
but ``identifiers.upc`` or ``grading.grade`` quietly stops being filled in. Counting, per record
kind and field, how many records had the field set and how many there were makes that visible;
:mod:`.drift` compares the ratios day over day and :mod:`rareindex.storage.field_stats` keeps the
daily counters.

*Present* means set to a non-empty value: not ``None``, not a blank string, not an empty tuple,
list or dict. ``False`` and ``0`` are values, so present. The nested :class:`Identifiers` and
:class:`Grading` models are counted by their parts (``identifiers.upc``, ``grading.grade``;
every part is absent when ``grading`` is ``None``); money (``price``, ``hammer_price``…) counts
as one field, present when set. ``kind`` is the key, not a field. Every field of a record's model
is counted for every record, so all fields of a kind share one total.

Example:
    >>> from datetime import UTC, datetime
    >>> from rareindex_connectors.records import Identifiers, Listing, Money
    >>> listings = [
    ...     Listing(external_id="a", title="Charizard Base Set", seller="",
    ...             price=Money(amount="420", currency="USD"),
    ...             identifiers=Identifiers(upc="820650123456")),
    ...     Listing(external_id="b", title="Blastoise Base Set", seller="shop",
    ...             price=Money(amount="180", currency="USD")),
    ... ]
    >>> counts = count_fields(listings)
    >>> counts[("listing", "identifiers.upc")], counts[("listing", "seller")]
    ((1, 2), (1, 2))
    >>> counts[("listing", "price")], counts[("listing", "grading.grade")]
    ((2, 2), (0, 2))
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from rareindex_connectors.records import Grading, Identifiers, NormalizedRecord

__all__ = ["FieldCounts", "FieldPresence", "count_fields", "merge_counts"]

FieldCounts = dict[tuple[str, str], tuple[int, int]]
"""``(record kind, dotted field) -> (present, total)``."""

# Sub-records whose parts come and go independently, so each part is counted on its own.
_EXPANDED: tuple[type[BaseModel], ...] = (Identifiers, Grading)


@dataclass(slots=True)
class FieldPresence:
    """Running presence counters over any number of batches of normalized records.

    Example:
        >>> presence = FieldPresence()
        >>> presence.update([])          # one batch after another, then
        >>> presence.counts()
        {}
    """

    _present: dict[tuple[str, str], int] = field(default_factory=dict, init=False)
    # Every field of a kind is counted for every record of it: one total per kind.
    _records: dict[type[BaseModel], int] = field(default_factory=dict, init=False)

    def add(self, record: NormalizedRecord) -> None:
        """Count one record."""
        model = type(record)
        self._records[model] = self._records.get(model, 0) + 1
        present = self._present
        values = record.__dict__
        for key, name, parts in _layout(model):
            value = values[name]
            if value is None:
                continue  # absent, and so are its parts
            if parts is None:
                if _is_present(value):
                    present[key] = present.get(key, 0) + 1
                continue
            inner = value.__dict__
            for part_key, part in parts:
                if _is_present(inner[part]):
                    present[part_key] = present.get(part_key, 0) + 1

    def update(self, records: Iterable[NormalizedRecord]) -> None:
        """Count every record of ``records``."""
        for record in records:
            self.add(record)

    def counts(self) -> FieldCounts:
        """A copy of the counters: ``(kind, field) -> (present, total)``."""
        present = self._present
        return {
            key: (present.get(key, 0), total)
            for model, total in self._records.items()
            for key in _keys(model)
        }


def count_fields(records: Iterable[NormalizedRecord]) -> FieldCounts:
    """Presence counters of one batch of records: ``(kind, field) -> (present, total)``."""
    presence = FieldPresence()
    presence.update(records)
    return presence.counts()


def merge_counts(*batches: Mapping[tuple[str, str], tuple[int, int]]) -> FieldCounts:
    """The sum of several batches' counters (what the store does when it adds a batch to a day).

    Example:
        >>> merge_counts({("sale", "url"): (1, 2)}, {("sale", "url"): (3, 3)})
        {('sale', 'url'): (4, 5)}
    """
    merged: FieldCounts = {}
    for batch in batches:
        for key, (present, total) in batch.items():
            old_present, old_total = merged.get(key, (0, 0))
            merged[key] = (old_present + present, old_total + total)
    return merged


_Layout = tuple[tuple[tuple[str, str], str, tuple[tuple[tuple[str, str], str], ...] | None], ...]


@cache
def _layout(model: type[BaseModel]) -> _Layout:
    """Each counted field of ``model`` as ``((kind, field), field, parts)``: ``parts`` are the
    ``((kind, "field.part"), part)`` of a sub-model whose parts are counted instead, else None."""
    kind = model.model_fields["kind"].default
    found = []
    for name, info in model.model_fields.items():
        if name == "kind":
            continue
        nested = _expanded_model(info.annotation)
        parts = (
            None
            if nested is None
            else tuple(((kind, f"{name}.{part}"), part) for part in nested.model_fields)
        )
        found.append(((kind, name), name, parts))
    return tuple(found)


@cache
def _keys(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    """Every counted ``(kind, field)`` of ``model``, parts included, in layout order."""
    return tuple(
        k
        for key, _, parts in _layout(model)
        for k in ((key,) if parts is None else (p for p, _ in parts))
    )


def _expanded_model(annotation: Any) -> type[BaseModel] | None:
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else ()
    for option in (annotation, *options):
        if isinstance(option, type) and issubclass(option, _EXPANDED):
            return option
    return None


def _is_present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, tuple | list | dict | set | frozenset):
        return len(value) > 0
    return True
