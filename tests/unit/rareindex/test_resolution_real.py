"""Entity resolution on a real catalog: eleven sets of the Pokémon TCG data, titled the way real
listings title cards, and a hand-made catalog of another game that has set codes and collector
numbers but no printed totals."""

from __future__ import annotations

from pathlib import Path

import pytest

from rareindex.catalog.pokemon_tcg import read_pokemon_tcg
from rareindex.resolution import Resolver, asset_key, variant_key
from rareindex_connectors.records import CatalogItem, Identifiers

SAMPLE = Path(__file__).parents[3] / "fixtures" / "catalogs" / "pokemon-tcg-sample"


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver.from_catalog(read_pokemon_tcg(SAMPLE))


def matched(resolver: Resolver, title: str) -> str | None:
    return resolver.resolve(title).catalog_id


# --- the titles the issue names ------------------------------------------------------------------


def test_base_set_charizard_over_its_printed_total(resolver: Resolver) -> None:
    decision = resolver.resolve("Charizard 4/102 Base Set Holo PSA 9")
    assert decision.catalog_id == "base1-4"
    assert decision.grading is not None and decision.grading.grade == "9"


def test_base_set_2_charizard_never_the_base_set_one(resolver: Resolver) -> None:
    assert matched(resolver, "Charizard 4/130 Base Set 2") == "base4-4"
    assert matched(resolver, "Charizard 4/102 Base Set 2") is None  # 102 is not Base Set 2's
    assert matched(resolver, "1999 Charizard 4/130 Base Set") is None  # nor 130 Base Set's


@pytest.mark.parametrize(
    "title",
    [
        "Celebi 7/123 Mysterious Treasures 2007",
        "Celebi 7/123 Mysterious Treasures",
        "2007 Pokemon Mysterious Treasures Celebi #7 Holo",
    ],
)
def test_celebi_with_and_without_a_year(resolver: Resolver, title: str) -> None:
    assert matched(resolver, title) == "dp2-7"


def test_a_wrong_year_refuses(resolver: Resolver) -> None:
    explained = resolver.explain("Celebi 7/123 Mysterious Treasures 2015")
    assert explained.decision.catalog_id is None
    assert explained.decision.reject_reason == "no_candidate"
    assert ("dp2-7", "wrong_year", "title [2015], card 2007") in explained.considered


def test_a_lot_naming_a_card_is_not_that_card(resolver: Resolver) -> None:
    decision = resolver.resolve("Lot of 50 Pokemon cards incl Charizard")
    assert decision.catalog_id is None and decision.reject_reason == "not_one_item"


def test_a_real_listing_title(resolver: Resolver) -> None:
    title = "1999 Pokemon Alakazam 1/102 Base Set Holo Rare Unlimited WOTC HP/Damaged"
    assert matched(resolver, title) == "base1-1"


# --- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Alakazam 1/102 Base Set", "base1-1"),  # N/T
        ("Alakazam 1 of 102 Base Set", "base1-1"),  # N of T
        ("Pokemon Natu #87 Lost Thunder Common PSA 9", "sm8-87"),  # #N, no year
        ("Natu No. 87 Lost Thunder", "sm8-87"),  # No. N
        ("Natu 87 Lost Thunder", "sm8-87"),  # N alone
        ("Natu 087/214 Lost Thunder", "sm8-87"),  # leading zeros
        ("Flareon TG01/TG30 Brilliant Stars Trainer Gallery", "swsh9tg-TG01"),  # letters
        ("Charmander SV6/SV94 Hidden Fates Shiny Vault", "sma-SV6"),
        ("Charmander SV06 Shiny Vault Hidden Fates PSA 10", "sma-SV6"),
    ],
)
def test_number_forms(resolver: Resolver, title: str, expected: str) -> None:
    assert matched(resolver, title) == expected


def test_a_number_the_card_does_not_have_refuses(resolver: Resolver) -> None:
    assert matched(resolver, "Natu 88/214 Lost Thunder") is None


def test_a_number_shared_by_many_sets_is_settled_by_the_evidence(resolver: Resolver) -> None:
    assert matched(resolver, "Charizard #4 Base Set 2 Holo") == "base4-4"  # the set
    assert matched(resolver, "2000 Charizard #4 Holo") == "base4-4"  # the year
    assert matched(resolver, "Dark Charizard #4 Holo") == "base5-4"  # the longer name


def test_a_number_left_open_is_ambiguous_with_the_candidates_named(resolver: Resolver) -> None:
    decision = resolver.resolve("Charizard #4 Holo Rare")
    assert decision.catalog_id is None and decision.reject_reason == "ambiguous"
    assert set(decision.candidates) == {"base1-4", "base4-4"}


# --- sets ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("1999 Pokemon Base Charizard 4/102", "base1-4"),  # the catalog's name
        ("Blastoise 2/102 Base Set Holo", "base1-2"),  # a one-word name + "Set"
        ("Blastoise 2/102 BS Holo Rare", "base1-2"),  # the set code
        ("Natu 87/214 (LOT) Common", "sm8-87"),  # a code in parentheses
        ("Sun & Moon Lost Thunder Natu 87/214", "sm8-87"),  # the series before the set
        ("Blastoise 2/102 Holo Rare", "base1-2"),  # no set: the total names it
        ("Blastoise Base Set Holo Rare", "base1-2"),  # no number: the set and the name do
    ],
)
def test_set_forms(resolver: Resolver, title: str, expected: str) -> None:
    assert matched(resolver, title) == expected


def test_a_title_naming_another_set_refuses(resolver: Resolver) -> None:
    explained = resolver.explain("Alakazam #1 Jungle Holo")  # Jungle has no #1 Alakazam
    assert explained.decision.catalog_id is None
    refused = {eid: reason for eid, reason, _ in explained.considered}
    assert refused["base1-1"] == "wrong_set" and refused["base4-1"] == "wrong_set"


@pytest.mark.parametrize(
    ("mark", "edition"),
    [
        ("1st Edition", "1st Edition"),
        ("1st Ed", "1st Edition"),
        ("First Edition", "1st Edition"),
        ("Shadowless", "Shadowless"),
        ("Unlimited", "Unlimited"),
    ],
)
def test_editions_are_kept_on_the_variant(resolver: Resolver, mark: str, edition: str) -> None:
    """The catalog has one Base Set Charizard: the edition a title names goes on the variant."""
    decision = resolver.resolve(f"Charizard 4/102 Base Set {mark} Holo PSA 9")
    assert decision.catalog_id == "base1-4" and decision.print_mark == edition
    assert decision.asset_key is not None
    keyed = variant_key(decision.asset_key, decision.grading, decision.print_mark)
    assert keyed != variant_key(decision.asset_key, decision.grading)
    assert keyed.endswith("|psa|9||||" + edition.lower())


def test_a_title_without_an_edition_keeps_the_plain_variant(resolver: Resolver) -> None:
    assert resolver.resolve("Charizard 4/102 Base Set Holo PSA 9").print_mark is None


# --- names ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("CHARIZARD 4/102 BASE SET HOLO", "base1-4"),  # capitals
        ("charizard 4/102 base set holo", "base1-4"),
        ("Charizrad 4/102 Base Set Holo", "base1-4"),  # a typo
        ("Alakazm 1/102 Base Set", "base1-1"),
        ("Farfetchd 27/102 Base Set", "base1-27"),  # apostrophe dropped
        ("Farfetch'd 27/102 Base Set", "base1-27"),
        ("Mr Mime 6/64 Jungle Holo", "base2-6"),  # punctuation
        ("Mr. Mime 6/64 Jungle Holo", "base2-6"),
        ("Nidoran ♀ 57/64 Jungle", "base2-57"),
        ("Nidoran F 57/64 Jungle", "base2-57"),
        ("Team Rockets Meowth 18 Black Star Promo", "basep-18"),  # possessive
        ("Pokémon Jungle Mr. Mime 6/64", "base2-6"),
        ("Pokemon Jungle Mr. Mime 6/64", "base2-6"),
        ("Electivire LV.X 121/123 Mysterious Treasures", "dp2-121"),
        ("Electivire LVX 121/123 Mysterious Treasures", "dp2-121"),
        ("Suicune GX 60/214 Lost Thunder", "sm8-60"),
    ],
)
def test_names_as_sellers_spell_them(resolver: Resolver, title: str, expected: str) -> None:
    assert matched(resolver, title) == expected


def test_a_different_name_under_the_right_number_refuses(resolver: Resolver) -> None:
    explained = resolver.explain("Blastoise 4/102 Base Set Holo")
    assert explained.decision.catalog_id is None
    assert ("base1-4", "wrong_subject", "Charizard") in explained.considered


@pytest.mark.parametrize(
    "title",
    [
        "🔥🔥 CHARIZARD 4/102 BASE SET HOLO L@@K MUST SEE 🔥",
        "Charizard 4/102 Base Set Holo PSA 10 GEM MINT #12345678",
        "BGS 9.5 Charizard 4/102 Base Set Holo INVEST",
        "Charizard Holo 1999 Pokemon CGC 9 4/102 Base Set RARE GOAT",
    ],
)
def test_hype_emoji_grades_and_certs_anywhere(resolver: Resolver, title: str) -> None:
    assert matched(resolver, title) == "base1-4"


# --- negatives -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "title",
    [
        "Lot of 50 Pokemon cards incl Charizard",
        "Pokemon Bulk Lot 100 Commons Base Set",
        "Charizard 4/102 Base Set Proxy Holo",
        "Custom Charizard 4/102 Base Set Orica",
        "Base Set Booster Box Sealed",
        "Jungle Booster Pack Factory Sealed 1999",
    ],
)
def test_what_is_not_one_card_never_matches(resolver: Resolver, title: str) -> None:
    assert matched(resolver, title) is None


def test_a_negated_grade_still_names_the_card_raw(resolver: Resolver) -> None:
    decision = resolver.resolve("Charizard 4/102 Base Set Holo NOT PSA")
    assert decision.catalog_id == "base1-4" and decision.grading is None


# --- another game: set codes and collector numbers, no printed totals ----------------------------


def _other_game() -> list[CatalogItem]:
    def card(eid: str, name: str, number: str, set_name: str, code: str, year: int) -> CatalogItem:
        return CatalogItem(
            external_id=eid,
            title=f"{name} {set_name} {number}",
            category="tcg_card",
            subject=name,
            number=number,
            set_name=set_name,
            year=year,
            identifiers=Identifiers(set_code=code, collector_number=number),
        )

    return [
        card("shr-121", "Ironclad Sentinel", "121", "Shattered Realms", "SHR", 2023),
        card("shr-7", "Ember Drake", "7", "Shattered Realms", "SHR", 2023),
        card("vow-121", "Ironclad Sentinel", "121", "Veil of Whispers", "VOW", 2024),
        card("vow-8", "Ember Drake", "8", "Veil of Whispers", "VOW", 2024),
    ]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Ironclad Sentinel Shattered Realms (SHR) #121", "shr-121"),
        ("Ironclad Sentinel SHR 121 NM", "shr-121"),
        ("Ironclad Sentinel #121 Veil of Whispers foil", "vow-121"),
        ("2024 Ironclad Sentinel 121", "vow-121"),
        ("Ironclad Sentinal #121 (VOW)", "vow-121"),
        ("Ember Drake #7", "shr-7"),  # one card answers to that name and number
        ("Ironclad Sentinel #121", None),  # two do
        ("Ironclad Sentinel #121 Shattered Realms 2024", None),  # a wrong year
    ],
)
def test_a_catalog_of_another_game(title: str, expected: str | None) -> None:
    assert Resolver.from_catalog(_other_game()).resolve(title).catalog_id == expected


def test_numbers_of_signs_only_keep_their_cards_apart() -> None:
    """Unown ``!`` and Unown ``?`` of Unseen Forces: folding drops the signs, the key keeps them."""
    unown = {"category": "tcg_card", "subject": "Unown", "set_name": "Unseen Forces", "year": 2005}
    bang = CatalogItem(external_id="ex10-!", title="Unown !", number="!", **unown)  # type: ignore[arg-type]
    what = CatalogItem(external_id="ex10-?", title="Unown ?", number="?", **unown)  # type: ignore[arg-type]
    assert asset_key(bang) != asset_key(what)
    assert asset_key(bang).split("|")[3] == "!"
