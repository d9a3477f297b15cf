"""``import_catalog`` on both databases with the real Pokémon TCG sample: an asset is the
catalog item of its external id, so a newer dump updates assets in place (same id, new key) and
the same dump twice writes nothing; two items that would become one asset leave nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Engine, select

from rareindex.catalog import read_catalog
from rareindex.errors import ConfigError
from rareindex.resolution import asset_key
from rareindex.settings import REPO_ROOT
from rareindex.storage import upgrade
from rareindex.storage.catalog_store import (
    CatalogImport,
    asset_ids_by_key,
    catalog_version,
    import_catalog,
    load_catalog,
)
from rareindex.storage.schema import assets, brands, sets
from rareindex_connectors.records import CatalogItem

SAMPLE = read_catalog(REPO_ROOT / "fixtures/catalogs/pokemon-tcg-sample")
N = len(SAMPLE)


def _by_ref(engine: Engine) -> dict[str, dict[str, Any]]:
    """Every asset row (timestamps included) by its catalog reference."""
    with engine.connect() as conn:
        return {r["catalog_ref"]: dict(r) for r in conn.execute(select(assets)).mappings()}


def _everything(engine: Engine) -> dict[str, list[Any]]:
    with engine.connect() as conn:
        return {
            t.name: sorted(map(tuple, conn.execute(select(t))), key=repr)
            for t in (assets, sets, brands)
        }


def _renamed(items: list[CatalogItem], ref: str, **changes: Any) -> list[CatalogItem]:
    return [i.model_copy(update=changes) if i.external_id == ref else i for i in items]


def test_the_sample_imports_whole_and_a_second_import_writes_nothing(any_engine: Engine) -> None:
    upgrade(any_engine)
    first = import_catalog(any_engine, SAMPLE)
    assert N == 1175
    assert first == CatalogImport(items=N, inserted=N, updated=0, unchanged=0, sets=11, brands=1)
    stored = _everything(any_engine)
    refs = _by_ref(any_engine)
    assert set(refs) == {i.external_id for i in SAMPLE}
    assert all(r["attributes"]["external_id"] == ref for ref, r in refs.items())
    with any_engine.connect() as conn:
        version = catalog_version(conn)

    second = import_catalog(any_engine, SAMPLE)
    assert second == CatalogImport(items=N, inserted=0, updated=0, unchanged=N, sets=11, brands=1)
    assert second.assets == N
    assert _everything(any_engine) == stored  # same ids, same rows, same updated_at
    with any_engine.connect() as conn:
        assert catalog_version(conn) == version  # a cached resolver stays valid


def test_a_newer_dump_updates_assets_in_place(any_engine: Engine) -> None:
    upgrade(any_engine)
    import_catalog(any_engine, SAMPLE)
    before = _by_ref(any_engine)
    newer = _renamed(
        SAMPLE,
        "base1-4",
        subject="Charizard δ",
        title="Charizard δ 4/102 Base",
    )
    newer = _renamed(newer, "base2-1", rarity="Rare Holo 1st Print")

    result = import_catalog(any_engine, newer)
    assert (result.inserted, result.updated, result.unchanged) == (0, 2, N - 2)
    after = _by_ref(any_engine)
    assert len(after) == N
    assert {ref: r["id"] for ref, r in after.items()} == {ref: r["id"] for ref, r in before.items()}
    zard, old_zard = after["base1-4"], before["base1-4"]
    assert (zard["subject"], zard["title"]) == ("Charizard δ", "Charizard δ 4/102 Base")
    assert zard["asset_key"] != old_zard["asset_key"]
    assert zard["attributes"]["subject"] == "Charizard δ"
    assert after["base2-1"]["attributes"]["rarity"] == "Rare Holo 1st Print"
    assert after["base2-1"]["asset_key"] == before["base2-1"]["asset_key"]
    unchanged = set(after) - {"base1-4", "base2-1"}
    assert all(after[ref] == before[ref] for ref in unchanged)
    with any_engine.connect() as conn:
        by_key = asset_ids_by_key(conn)
        catalog = {i.external_id: i for i in load_catalog(conn)}
    renamed = next(i for i in newer if i.external_id == "base1-4")
    assert by_key[asset_key(renamed)] == zard["id"] and old_zard["asset_key"] not in by_key
    assert catalog[zard["id"]].subject == "Charizard δ"  # load_catalog: external_id = asset id

    again = import_catalog(any_engine, newer)
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, N)


def test_two_cards_may_swap_names_but_not_become_one(any_engine: Engine) -> None:
    upgrade(any_engine)
    import_catalog(any_engine, SAMPLE)
    one, two = (next(i for i in SAMPLE if i.external_id == r) for r in ("base1-1", "base1-2"))
    swapped = _renamed(SAMPLE, "base1-1", number=two.number, subject=two.subject)
    swapped = _renamed(swapped, "base1-2", number=one.number, subject=one.subject)
    before = _by_ref(any_engine)
    result = import_catalog(any_engine, swapped)
    assert (result.inserted, result.updated) == (0, 2)
    after = _by_ref(any_engine)
    assert after["base1-1"]["id"] == before["base1-1"]["id"]
    assert after["base1-1"]["asset_key"] == before["base1-2"]["asset_key"]
    assert after["base1-2"]["asset_key"] == before["base1-1"]["asset_key"]

    stored = _everything(any_engine)
    merged = _renamed(swapped, "base1-1", number=one.number, subject=one.subject)  # two Alakazam 1
    with pytest.raises(ConfigError, match="two assets cannot become one"):
        import_catalog(any_engine, merged)
    assert _everything(any_engine) == stored  # one transaction: nothing written


def test_assets_imported_before_references_are_adopted_by_key(any_engine: Engine) -> None:
    """A database whose catalog was imported before ``assets.catalog_ref`` existed (or through
    a connector): the next import finds each asset by key and sets its reference, same ids."""
    upgrade(any_engine)
    import_catalog(any_engine, SAMPLE, by_external_id=False)
    assert set(_by_ref(any_engine)) == {None}
    ids = {r["asset_key"]: r["id"] for r in _by_ref_rows(any_engine)}
    adopted = import_catalog(any_engine, SAMPLE)
    assert (adopted.inserted, adopted.updated, adopted.unchanged) == (0, N, 0)
    assert {r["asset_key"]: r["id"] for r in _by_ref_rows(any_engine)} == ids
    assert set(_by_ref(any_engine)) == {i.external_id for i in SAMPLE}
    assert import_catalog(any_engine, SAMPLE).unchanged == N


def _by_ref_rows(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(assets)).mappings()]


def test_progress_is_reported_by_phase(sqlite_engine: Engine) -> None:
    upgrade(sqlite_engine)
    seen: list[tuple[str, int, int]] = []
    import_catalog(sqlite_engine, SAMPLE, on_progress=lambda *step: seen.append(step))
    assert seen[0] == ("matching", 0, N) and ("matching", N, N) in seen
    assert seen[-1] == ("writing", N, N)
    phases = [phase for phase, _, _ in seen]
    assert phases == sorted(phases)  # all the matching, then all the writing
    done = [d for phase, d, _ in seen if phase == "writing"]
    assert done == sorted(done) and len(done) > 1
