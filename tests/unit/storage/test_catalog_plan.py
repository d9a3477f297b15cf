"""The plan of a catalog import (:mod:`rareindex.storage.catalog_plan`): which stored asset each
item is, found by reference, then by asset key, else new. Pure: rows in, rows out."""

from __future__ import annotations

from typing import Any

import pytest

from rareindex.errors import ConfigError
from rareindex.storage.catalog_plan import ASSET_COLUMNS, plan_assets
from rareindex.storage.ids import stable_id


def _row(ref: str | None, key: str, **fields: Any) -> dict[str, Any]:
    """An item's asset row (no id) as the import builds it."""
    return {c: None for c in ASSET_COLUMNS} | {"catalog_ref": ref, "asset_key": key} | fields


def _stored(asset_id: str, ref: str | None, key: str, **fields: Any) -> dict[str, Any]:
    return {"id": asset_id, **_row(ref, key, **fields)}


def _ids(rows: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(r["id"], r["asset_key"], r["catalog_ref"]) for r in rows]


def test_a_fresh_catalog_is_all_inserts_with_stable_ids() -> None:
    plan = plan_assets([_row("c1", "k1"), _row("c2", "k2")], [])
    assert _ids(plan.inserts) == [
        (stable_id("ast", "k1"), "k1", "c1"),
        (stable_id("ast", "k2"), "k2", "c2"),
    ]
    assert (plan.updates, plan.unchanged, plan.moving) == ([], 0, [])


def test_the_same_rows_again_are_unchanged() -> None:
    rows = [_row("c1", "k1", title="A"), _row("c2", "k2", title="B")]
    stored = [{**r} for r in plan_assets(rows, []).inserts]
    plan = plan_assets(rows, stored)
    assert (plan.inserts, plan.updates, plan.unchanged) == ([], [], 2)


def test_a_renamed_item_updates_its_asset_in_place_by_reference() -> None:
    stored = [_stored("ast_a", "c1", "k1", title="Charizard", subject="Charizard")]
    plan = plan_assets([_row("c1", "k1b", title="Charizard δ", subject="Charizard δ")], stored)
    assert _ids(plan.updates) == [("ast_a", "k1b", "c1")]
    assert plan.updates[0]["subject"] == "Charizard δ"
    assert plan.moving == ["ast_a"] and plan.inserts == []


def test_a_field_outside_the_key_is_an_update_that_does_not_move() -> None:
    stored = [_stored("ast_a", "c1", "k1", attributes={"rarity": "Common"})]
    plan = plan_assets([_row("c1", "k1", attributes={"rarity": "Rare"})], stored)
    assert _ids(plan.updates) == [("ast_a", "k1", "c1")] and plan.moving == []


def test_two_assets_may_swap_their_keys() -> None:
    stored = [_stored("ast_a", "c1", "k1"), _stored("ast_b", "c2", "k2")]
    plan = plan_assets([_row("c1", "k2"), _row("c2", "k1")], stored)
    assert sorted(_ids(plan.updates)) == [("ast_a", "k2", "c1"), ("ast_b", "k1", "c2")]
    assert sorted(plan.moving) == ["ast_a", "ast_b"]


def test_a_key_vacated_by_a_move_goes_to_a_new_asset_with_another_id() -> None:
    # ast_a was inserted as k1 (its id is k1's stable id), then renamed to k2: a new item named
    # like the old one is a new asset, and cannot take the id ast_a keeps.
    moved = stable_id("ast", "k1")
    stored = [_stored(moved, "c1", "k2")]
    plan = plan_assets([_row("c1", "k2"), _row("c9", "k1")], stored)
    assert _ids(plan.inserts) == [(stable_id("ast", "k1", "c9"), "k1", "c9")]
    assert plan.unchanged == 1


def test_an_asset_without_a_reference_is_adopted_by_key() -> None:
    stored = [_stored("ast_old", None, "k1", title="T")]
    plan = plan_assets([_row("c1", "k1", title="T")], stored)
    assert _ids(plan.updates) == [("ast_old", "k1", "c1")]
    again = plan_assets([_row("c1", "k1", title="T")], [plan.updates[0]])
    assert again.unchanged == 1


def test_a_reference_once_set_is_never_re_pointed() -> None:
    """A second catalog naming the same asset under its own id updates it but keeps its ref."""
    stored = [_stored("ast_a", "base1-4", "k1", title="Charizard 4/102 Base")]
    plan = plan_assets([_row("mine-7", "k1", title="My Charizard")], stored)
    assert _ids(plan.updates) == [("ast_a", "k1", "base1-4")]
    assert plan.updates[0]["title"] == "My Charizard"


def test_items_without_reference_go_by_key_and_keep_a_stored_one() -> None:
    stored = [_stored("ast_a", "c1", "k1", title="Old")]
    plan = plan_assets([_row(None, "k1", title="New"), _row(None, "k2")], stored)
    assert _ids(plan.updates) == [("ast_a", "k1", "c1")]
    assert _ids(plan.inserts) == [(stable_id("ast", "k2"), "k2", None)]


def test_items_that_are_one_asset_leave_it_as_the_last_says() -> None:
    plan = plan_assets([_row("c1", "k1", title="first"), _row("c2", "k1", title="last")], [])
    assert [(r["catalog_ref"], r["title"]) for r in plan.inserts] == [("c2", "last")]
    again = plan_assets(
        [_row("c1", "k1", title="first"), _row("c2", "k1", title="last")], plan.inserts
    )
    assert again.unchanged == 1 and again.updates == again.inserts == []


def test_an_external_id_named_twice_counts_at_its_last_line() -> None:
    plan = plan_assets([_row("c1", "k1", title="typo"), _row("c1", "k2", title="fixed")], [])
    assert [(r["asset_key"], r["title"]) for r in plan.inserts] == [("k2", "fixed")]


@pytest.mark.parametrize(
    ("rows", "stored", "clash"),
    [
        (  # renamed onto an asset that no catalog item names
            [_row("c1", "k2")],
            [_stored("ast_a", "c1", "k1"), _stored("ast_b", None, "k2")],
            "catalog item 'c1' now has the asset key 'k2' of another asset "
            "(ast_b, not from a catalog)",
        ),
        (  # renamed onto another item of the same dump
            [_row("c1", "k2"), _row("c2", "k2")],
            [_stored("ast_a", "c1", "k1"), _stored("ast_b", "c2", "k2")],
            "catalog item 'c2' now has the asset key 'k2' of another asset "
            "(ast_a, catalog item 'c1')",
        ),
    ],
)
def test_two_assets_that_would_become_one_are_refused(
    rows: list[dict[str, Any]], stored: list[dict[str, Any]], clash: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        plan_assets(rows, stored)
    assert str(caught.value) == f"{clash}; two assets cannot become one: fix the catalog"
