"""The 50,000-item scale catalog and its labelled noisy titles (bench/resolve.py's ground truth)."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

from bench.scale.catalog import (
    LabeledTitle,
    build_scale_catalog,
    held_out,
    identity,
    noisy_titles,
    scale_catalog,
)
from bench.scale.noise import segments, trap_serial
from rareindex_connectors.records import CatalogItem
from rareindex_fakeweb.sites.catalog import world_catalog
from rareindex_fakeweb.sites.market_data import market_data
from tests.subprocess_env import subprocess_env

REPO = Path(__file__).resolve().parents[3]
SEED = 7


@pytest.fixture(scope="module")
def catalog() -> tuple[CatalogItem, ...]:
    return scale_catalog(SEED)


@pytest.fixture(scope="module")
def titles(catalog: tuple[CatalogItem, ...]) -> tuple[LabeledTitle, ...]:
    return noisy_titles(SEED, 5_000, catalog)


def digest(lines: object) -> str:
    return hashlib.sha256("\n".join(map(str, lines)).encode()).hexdigest()  # type: ignore[call-overload]


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def find(catalog: tuple[CatalogItem, ...], **fields: object) -> list[CatalogItem]:
    return [r for r in catalog if all(getattr(r, k) == v for k, v in fields.items())]


# --- The catalog ----------------------------------------------------------------------------------


def test_default_size_is_exactly_50000(catalog: tuple[CatalogItem, ...]) -> None:
    assert len(catalog) == 50_000
    assert all(isinstance(r, CatalogItem) for r in catalog)
    assert Counter(r.category for r in catalog).keys() == {
        "sports_card",
        "tcg_card",
        "comic",
        "coin",
    }


def test_ids_identities_and_titles_are_unique(catalog: tuple[CatalogItem, ...]) -> None:
    assert len({r.external_id for r in catalog}) == len(catalog)
    assert len({identity(r) for r in catalog}) == len(catalog)
    assert len({r.title.casefold() for r in catalog}) == len(catalog)
    generated = [
        r.external_id for r in catalog if not r.external_id.startswith(("sc", "pk", "cm", "cn"))
    ]
    assert all(re.fullmatch(r"sx\d{6}", i) for i in generated)


def test_one_subject_per_set_year_number(catalog: tuple[CatalogItem, ...]) -> None:
    slots: dict[tuple[object, ...], list[CatalogItem]] = {}
    for r in catalog:
        if r.category in ("sports_card", "tcg_card"):
            slots.setdefault((r.category, r.set_name, r.year, r.number, r.language), []).append(r)
    # the world's filler may double up a number (two sports share "Panini Prizm");
    # a generated item only ever joins the slot's first subject
    for records in slots.values():
        first = records[0].subject
        assert all(r.subject == first for r in records if r.external_id.startswith("sx"))


def test_contains_every_world_item_unchanged(catalog: tuple[CatalogItem, ...]) -> None:
    by_id = {r.external_id: r for r in catalog}
    world = world_catalog(SEED)
    assert all(by_id[r.external_id] == r for r in world)
    assert catalog[: len(world)] == world


def test_titles_are_written_like_the_world_catalog(catalog: tuple[CatalogItem, ...]) -> None:
    for record in catalog:
        parts = segments(record)
        assert len(parts) > 1, record.title  # the title parses back into its identity fields
        assert " ".join(parts) == record.title
        assert str(record.year) in record.title
    sports = [r for r in catalog if r.category == "sports_card"]
    assert all(r.title.startswith(f"{r.year} {r.set_name} {r.subject} #{r.number}") for r in sports)
    runs = [r for r in sports if r.print_run]
    assert runs and all(f" /{r.print_run}" in r.title for r in runs)


def test_deterministic_across_calls(catalog: tuple[CatalogItem, ...]) -> None:
    again = build_scale_catalog(SEED)
    assert digest(r.title for r in again) == digest(r.title for r in catalog)
    assert [r.external_id for r in again] == [r.external_id for r in catalog]
    first, second = noisy_titles(SEED, 600, catalog), noisy_titles(SEED, 600, catalog)
    assert first == second
    assert digest(r.title for r in build_scale_catalog(8, 2_000)) != digest(
        r.title for r in build_scale_catalog(SEED, 2_000)
    )


def test_deterministic_across_processes() -> None:
    """String hashing is salted per process: nothing may depend on set or dict-of-set order."""
    code = (
        "import hashlib; from bench.scale.catalog import *;"
        "c = build_scale_catalog(7, 3000); t = noisy_titles(7, 900, c);"
        "print(hashlib.sha256('\\n'.join([r.title for r in c] + [x.title for x in t]).encode())"
        ".hexdigest())"
    )
    env = subprocess_env({"PYTHONHASHSEED": "12345"})
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO, env=env
    )
    small = build_scale_catalog(SEED, 3_000)
    lines = [r.title for r in small] + [x.title for x in noisy_titles(SEED, 900, small)]
    assert out.stdout.strip() == hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_size_must_hold_the_world() -> None:
    with pytest.raises(ValueError, match="world items"):
        build_scale_catalog(SEED, 100)
    small = build_scale_catalog(SEED, 1_000)
    assert len(small) == 1_000 and small[: len(world_catalog(SEED))] == world_catalog(SEED)


# --- The sibling traps ----------------------------------------------------------------------------


def test_pokemon_reprint_and_language_siblings(catalog: tuple[CatalogItem, ...]) -> None:
    base = find(
        catalog, set_name="Base Set", subject="Charizard", number="4/102", language="English"
    )
    assert {r.edition for r in base} == {"1st Edition", "Shadowless", "Unlimited"}
    assert find(catalog, set_name="Base Set 2", subject="Charizard", number="4/130")
    assert find(catalog, set_name="Legendary Collection", subject="Charizard", number="4/110")
    japanese = find(catalog, category="tcg_card", language="Japanese")
    english = {(r.set_name, r.number, r.subject, r.edition, r.parallel) for r in catalog}
    twins = [
        r for r in japanese if (r.set_name, r.number, r.subject, r.edition, r.parallel) in english
    ]
    assert len(twins) > 50


def test_jr_and_sr_share_the_catalog(catalog: tuple[CatalogItem, ...]) -> None:
    for senior, junior in (
        ("Ken Griffey", "Ken Griffey Jr."),
        ("Tim Hardaway", "Tim Hardaway Jr."),
    ):
        assert find(catalog, subject=senior) and find(catalog, subject=junior)
    griffey = find(catalog, year=1989, set_name="Upper Deck", subject="Ken Griffey")
    assert griffey and griffey[0].number != "1"  # father and son in the same product and year
    subjects = {r.subject for r in catalog if r.category == "sports_card"}
    fathers = [s for s in subjects if s and s.endswith(" Jr.") and s[: -len(" Jr.")] in subjects]
    assert len(fathers) >= 10


def test_sibling_products_share_player_number_and_year(catalog: tuple[CatalogItem, ...]) -> None:
    luka = find(catalog, year=2018, subject="Luka Dončić", number="280")
    assert {"Panini Prizm", "Panini Mosaic", "Panini Select", "Donruss Optic"} & {
        r.set_name for r in luka if r.set_name != "Panini Prizm"
    }
    assert {r.parallel for r in luka if r.set_name == "Panini Prizm"} >= {None, "Silver Prizm"}
    ohtani = find(catalog, year=2018, subject="Shohei Ohtani", number="150")
    assert {"Topps Chrome Sapphire", "Topps Finest", "Topps Chrome Black"} & {
        r.set_name for r in ohtani
    }


def test_neighbours_years_parallels_and_print_runs(catalog: tuple[CatalogItem, ...]) -> None:
    prizm_2018 = find(catalog, year=2018, set_name="Panini Prizm", category="sports_card")
    assert {"279", "281"} & {r.number for r in prizm_2018}
    assert find(catalog, year=2019, set_name="Panini Prizm", subject="Luka Dončić", number="280")
    refractors = find(catalog, set_name="Topps Chrome", subject="LeBron James", year=2003)
    assert {"Refractor", "Gold Refractor"} <= {r.parallel for r in refractors}
    gold = [r for r in refractors if r.parallel == "Gold Refractor"]
    assert {r.print_run for r in gold} >= {50} and len(gold) >= 2  # /50 and another run


def test_serial_and_first_bowman_traps(catalog: tuple[CatalogItem, ...]) -> None:
    by_slot = {(r.year, r.set_name, r.subject, r.number) for r in catalog}
    numbered = [r for r in world_catalog(SEED) if r.print_run and r.category == "sports_card"]
    trapped = [
        r
        for r in numbered
        if (
            r.year,
            r.set_name,
            r.subject,
            str(trap_serial(r.year or 0, r.number or "", r.print_run or 1)),
        )
        in by_slot
    ]
    assert len(trapped) > len(numbered) // 2  # `#'d 17/50` next to a real card #17
    skenes = find(catalog, subject="Paul Skenes", number="1")
    assert skenes and all("1st Bowman" not in r.title for r in skenes)


def test_comic_and_coin_siblings(catalog: tuple[CatalogItem, ...]) -> None:
    saga = find(catalog, set_name="Saga", number="1", year=2012)
    assert len({r.parallel for r in saga}) >= 4  # Cover A, 1:25, 2nd Printing, more
    spidey = {r.year for r in find(catalog, set_name="The Amazing Spider-Man", number="1")}
    assert len(spidey) >= 2  # issue #1 of several volumes
    morgan = find(catalog, set_name="Morgan Dollar", year=1893)
    assert {"S", "O", "CC", None} <= {r.mint_mark for r in morgan}
    assert find(catalog, set_name="Morgan Dollar", year=1892, mint_mark="S")
    upcs = [r.identifiers.upc for r in catalog if r.identifiers.upc]
    assert len(upcs) == len(set(upcs)) > 500


# --- The titles -----------------------------------------------------------------------------------


def test_titles_count_and_market_first(
    titles: tuple[LabeledTitle, ...], catalog: tuple[CatalogItem, ...]
) -> None:
    assert len(titles) == 5_000
    listings = market_data(SEED).listings
    market = titles[: len(listings)]
    assert [t.title for t in market] == [x.title for x in listings]
    assert [t.expected for t in market] == [x.copy.item.key for x in listings]
    lots = [t for t, x in zip(market, listings, strict=True) if x.lot_size > 1]
    assert lots and all("lot" in t.noise and t.expected for t in lots)
    ids = {r.external_id for r in catalog}
    assert all(t.expected in ids for t in titles if t.expected is not None)
    assert {t.category for t in titles} == {"sports_card", "tcg_card", "comic", "coin"}


def test_held_out_titles_are_absent_from_the_catalog(
    titles: tuple[LabeledTitle, ...], catalog: tuple[CatalogItem, ...]
) -> None:
    none = [t for t in titles if t.expected is None]
    assert len(none) == 500
    items = held_out(SEED, 500, catalog)
    present = {identity(r) for r in catalog}, {r.title.casefold() for r in catalog}
    assert not any(identity(r) in present[0] or r.title.casefold() in present[1] for r in items)
    assert len({identity(r) for r in items}) == len(items)
    # near misses: most share a set and year with a catalog item
    blocks = {(r.set_name, r.year) for r in catalog}
    assert sum((r.set_name, r.year) in blocks for r in items) > 0.8 * len(items)


def test_noise_keeps_the_identity_readable(
    titles: tuple[LabeledTitle, ...], catalog: tuple[CatalogItem, ...]
) -> None:
    by_id = {r.external_id: r for r in catalog}
    drawn = [t for t in titles[len(market_data(SEED).listings) :] if t.expected]
    kinds = Counter(k for t in drawn for k in t.noise)
    for kind in ("grade", "cert", "serial", "emoji", "hype", "lot", "typo", "reorder", "no_hash"):
        assert kinds[kind] > 20, kind
    for t in drawn:
        record, title = by_id[t.expected], fold(t.title)  # type: ignore[index]
        assert str(record.year) in title
        if record.number:
            assert fold(record.number) in title, t
        if "typo" not in t.noise and record.category != "comic":
            assert fold(record.subject or "") in title, t
        if "truncated" in t.noise:
            assert len(t.title) <= 80
    assert any(t.title.isupper() for t in drawn) and any("#'d" in t.title for t in drawn)


def test_titles_for_a_smaller_catalog() -> None:
    small = scale_catalog(SEED, 5_000)
    labelled = noisy_titles(SEED, 1_000, small)
    ids = {r.external_id for r in small}
    assert len(labelled) == 1_000
    assert all(t.expected in ids for t in labelled if t.expected)
    assert sum(t.expected is None for t in labelled) == 100
