"""Which stored asset each imported catalog item is: the plan of a catalog import, pure.

An item is found, in this order:

1. **by reference** — the asset whose ``catalog_ref`` is the item's external id: that asset is
   updated in place (same id) whatever changed, its asset key included;
2. **by asset key** — the asset that holds the item's key once the moves of step 1 are done;
3. otherwise it is **new**: id ``stable_id("ast", key)``, or, when an asset that changed its key
   keeps that id, ``stable_id("ast", key, ref)``, else a fresh id.

Several items that land on one asset leave it as the last of them says (file order); an external
id named twice counts once, at its last line. An asset's ``catalog_ref`` is set when it is
inserted or first found without one, and never re-pointed afterwards: a second catalog that
describes the same asset under its own ids updates the asset but cannot take it over. An asset
the plan would write exactly as stored is left alone (``unchanged``). Two distinct assets that
would end up with one asset key raise :class:`~rareindex.errors.ConfigError`.

Example:
    >>> row = {c: None for c in ASSET_COLUMNS} | {"asset_key": "k1", "catalog_ref": "c-1",
    ...                                           "title": "Charizard"}
    >>> stored = {**row, "id": "ast_1"}
    >>> plan = plan_assets([{**row, "asset_key": "k2", "title": "Charizard (fixed)"}], [stored])
    >>> [(u["id"], u["asset_key"], u["title"]) for u in plan.updates], plan.moving, plan.inserts
    ([('ast_1', 'k2', 'Charizard (fixed)')], ['ast_1'], [])
    >>> plan_assets([row], [stored]).unchanged
    1
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .ids import new_id, stable_id

__all__ = ["ASSET_COLUMNS", "AssetPlan", "candidate_ids", "plan_assets"]

ASSET_COLUMNS = (
    "asset_key",
    "category",
    "title",
    "year",
    "brand_id",
    "set_id",
    "number",
    "subject",
    "parallel",
    "edition",
    "language",
    "print_run",
    "identifiers",
    "attributes",
    "catalog_ref",
)
"""The columns an import writes (besides ``id``), and compares to tell an unchanged asset."""


@dataclass(slots=True)
class AssetPlan:
    """What to write: whole rows (``id`` and :data:`ASSET_COLUMNS`) to insert and to update."""

    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    moving: list[str] = field(default_factory=list)
    """Ids among ``updates`` whose asset key changes (they must let go of it first: a swap)."""


def candidate_ids(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The ids a new asset for ``row`` may take, in order of preference.

    Only the first can be held by an asset the plan does not find otherwise (one that moved
    away from the key): the second was only ever given to an asset with reference ``ref``,
    which is found by reference — so a lookup of stored assets needs the first alone.
    """
    key, ref = row["asset_key"], row["catalog_ref"]
    return (stable_id("ast", key),) + ((stable_id("ast", key, ref),) if ref else ())


def plan_assets(
    rows: Sequence[Mapping[str, Any]], stored: Iterable[Mapping[str, Any]]
) -> AssetPlan:
    """The plan for ``rows`` (one per item, in file order; :data:`ASSET_COLUMNS`, no id) against
    ``stored``: every stored asset that holds one of their references, keys or candidate ids."""
    by_id = {s["id"]: s for s in stored}
    by_ref = {s["catalog_ref"]: s["id"] for s in by_id.values() if s["catalog_ref"]}
    last_of_ref = {row["catalog_ref"]: i for i, row in enumerate(rows) if row["catalog_ref"]}
    live = [i for i, row in enumerate(rows) if last_of_ref.get(row["catalog_ref"], i) == i]

    target: dict[int, str] = {}
    moved_to: dict[str, int] = {}  # asset found by reference -> the last item that found it
    for i in live:
        found = by_ref.get(rows[i]["catalog_ref"])
        if found is not None:
            target[i] = found
            moved_to[found] = i
    holder = {s["asset_key"]: asset for asset, s in by_id.items() if asset not in moved_to}
    for asset, i in moved_to.items():
        key = rows[i]["asset_key"]
        other = holder.setdefault(key, asset)
        if other != asset:
            raise _collision(rows[i], by_id[other])

    new = "\0new "  # a new asset is named by its key until its last item gives it an id
    for i in live:
        if i not in target:
            key = rows[i]["asset_key"]
            target[i] = holder.setdefault(key, new + key)

    last = {asset: i for i, asset in sorted(target.items())}
    plan = AssetPlan()
    fresh: set[str] = set()
    for asset, i in last.items():
        row = {"id": asset, **{c: rows[i][c] for c in ASSET_COLUMNS}}
        if asset.startswith(new):
            row["id"] = _new_id(row, lambda c: c in by_id or c in fresh)
            fresh.add(row["id"])
            plan.inserts.append(row)
            continue
        before = by_id[asset]
        row["catalog_ref"] = before["catalog_ref"] or row["catalog_ref"]  # set once, then kept
        if all(row[c] == before[c] for c in ASSET_COLUMNS):
            plan.unchanged += 1
            continue
        plan.updates.append(row)
        if row["asset_key"] != before["asset_key"]:
            plan.moving.append(asset)
    return plan


def _new_id(row: Mapping[str, Any], taken: Callable[[str], bool]) -> str:
    for candidate in candidate_ids(row):
        if not taken(candidate):
            return candidate
    return new_id("ast")


def _collision(row: Mapping[str, Any], other: Mapping[str, Any]) -> ConfigError:
    whose = (
        f"catalog item {other['catalog_ref']!r}" if other["catalog_ref"] else "not from a catalog"
    )
    return ConfigError(
        f"catalog item {row['catalog_ref']!r} now has the asset key {row['asset_key']!r} of "
        f"another asset ({other['id']}, {whose}); two assets cannot become one: fix the catalog"
    )
