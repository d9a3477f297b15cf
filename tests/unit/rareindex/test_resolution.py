"""Entity resolution: identifiers, canonical keys, fuzzy subjects, and the traps it avoids."""

from __future__ import annotations

import pytest

from rareindex.resolution import Resolver, asset_key, tokenize, variant_key
from rareindex_connectors.records import CatalogItem, Grading, Identifiers
from rareindex_fakeweb.sites.catalog import world_catalog
from rareindex_fakeweb.sites.market_data import market_data


def card(eid: str, **fields: object) -> CatalogItem:
    defaults: dict[str, object] = {"category": "tcg_card", "title": eid}
    return CatalogItem(external_id=eid, **{**defaults, **fields})  # type: ignore[arg-type]


CATALOG = [
    card(
        "base-zard",
        year=1999,
        set_name="Base Set",
        number="4/102",
        subject="Charizard",
        parallel="Holo",
        edition="Unlimited",
    ),
    card(
        "base-zard-1st",
        year=1999,
        set_name="Base Set",
        number="4/102",
        subject="Charizard",
        parallel="Holo",
        edition="1st Edition",
    ),
    card(
        "base2-zard",
        year=2000,
        set_name="Base Set 2",
        number="4/130",
        subject="Charizard",
        parallel="Holo",
    ),
    card(
        "jp-zard",
        year=1999,
        set_name="Base Set",
        number="4/102",
        subject="Charizard",
        parallel="Holo",
        edition="Unlimited",
        language="Japanese",
    ),
    card(
        "griffey-jr",
        category="sports_card",
        year=1989,
        set_name="Upper Deck",
        number="1",
        subject="Ken Griffey Jr.",
    ),
    card(
        "griffey-sr",
        category="sports_card",
        year=1989,
        set_name="Upper Deck",
        number="300",
        subject="Ken Griffey",
    ),
    card(
        "chrome",
        category="sports_card",
        year=2003,
        set_name="Topps Chrome",
        number="111",
        subject="LeBron James",
    ),
    card(
        "chrome-ref",
        category="sports_card",
        year=2003,
        set_name="Topps Chrome",
        number="111",
        subject="LeBron James",
        parallel="Refractor",
    ),
    card(
        "chrome-gold",
        category="sports_card",
        year=2003,
        set_name="Topps Chrome",
        number="111",
        subject="LeBron James",
        parallel="Gold Refractor",
        print_run=50,
    ),
    card(
        "sapphire",
        category="sports_card",
        year=2003,
        set_name="Topps Chrome Sapphire",
        number="111",
        subject="LeBron James",
    ),
    card(
        "vdb-s",
        category="coin",
        year=1909,
        set_name="Lincoln Wheat Cent",
        mint_mark="S",
        subject="Lincoln Wheat Cent",
        parallel="VDB",
    ),
    card(
        "vdb",
        category="coin",
        year=1909,
        set_name="Lincoln Wheat Cent",
        subject="Lincoln Wheat Cent",
        parallel="VDB",
        identifiers=Identifiers(pcgs_number="2425"),
    ),
    card(
        "asm-300",
        category="comic",
        year=1988,
        set_name="The Amazing Spider-Man",
        number="300",
        identifiers=Identifiers(upc="75960601772030011"),
    ),
]


@pytest.fixture(scope="module")
def resolver() -> Resolver:
    return Resolver.from_catalog(CATALOG)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("🔥 1999 Pokemon Base Set CHARIZARD 4/102 Unlimited Holo PSA 9 MINT", "base-zard"),
        ("1999 Pokémon Base Set Charizard 4/102 1st Edition Holo BGS 9.5", "base-zard-1st"),
        ("Charizard 4/130 Base Set 2 Holo 2000 PSA 10", "base2-zard"),
        ("1999 Pokemon Japanese Base Set Charizard 4/102 Unlimited Holo", "jp-zard"),
        ("1989 Upper Deck Ken Griffey Jr. #1 RC PSA 10 GEM MINT #12345678", "griffey-jr"),
        ("1989 Upper Deck Ken Griffey #300 NM", "griffey-sr"),
        ("2003 Topps Chrome LeBron James #111 RC", "chrome"),
        ("2003 Topps Chrome LeBron James #111 Refractor RC", "chrome-ref"),
        ("2003 Topps Chrome LeBron James #111 Gold Refractor #'d 12/50", "chrome-gold"),
        ("2003 Topps Chrome Sapphire LeBron James #111", "sapphire"),
        ("1909-S Lincoln Wheat Cent VDB 1C PCGS MS65 RD", "vdb-s"),
        ("1909 Lincoln Wheat Cent VDB 1C", "vdb"),
        ("1909 S Lincoln Wheat Cent VDB NGC MS64", "vdb-s"),  # mint mark after a space
        ("1909S VDB Lincoln Wheat Cent", "vdb-s"),
        ("The Amazing Spider-Man #300 (1988) CGC 9.8", "asm-300"),
        ("2003 Topps Chrome LeBron Jmaes #111 Refractor", "chrome-ref"),  # a typo: fuzzy
        ("Charizard - 4/102 - Base Set - 1st Edition Holo - Near Mint", "base-zard-1st"),  # no year
    ],
)
def test_resolves_to_the_one_right_asset(resolver: Resolver, title: str, expected: str) -> None:
    decision = resolver.resolve(title)
    assert decision.catalog_id == expected, decision


@pytest.mark.parametrize(
    ("title", "reason"),
    [
        ("Charizard 4/102 Base Set 2 Holo 2000", "no_candidate"),  # 4/102 is not Base Set 2's
        ("Charizard 4/130 Base Set Holo 1999", "no_candidate"),  # 4/130 is not Base Set's
        ("1989 Upper Deck Ken Griffey #1", "no_candidate"),  # Sr. never takes Jr.'s #1
        ("1989 Upper Deck Ken Griffey Jr. #300", "no_candidate"),
        ("2003 Topps Chrome LeBron James #111 Refractor #'d 5/99", "no_candidate"),  # no /99
        ("2004 Topps Chrome LeBron James #111", "no_candidate"),  # year must agree
        ("1999 Pokemon Base Set Charizard 4/102 Holo", "no_candidate"),  # which edition?
        ("Topps Chrome LeBron James #111", "no_year"),
        ("1910-D Lincoln Wheat Cent VDB 1C", "no_candidate"),
    ],
)
def test_never_forces_a_match(resolver: Resolver, title: str, reason: str) -> None:
    decision = resolver.resolve(title)
    assert decision.catalog_id is None and decision.reject_reason == reason, decision


def test_two_equally_good_candidates_stay_unmatched() -> None:
    twins = [
        card("a", year=2020, set_name="Darkness Ablaze", number="20/189", subject="Charizard"),
        card(
            "b",
            year=2020,
            set_name="Darkness Ablaze",
            number="20/189",
            subject="Charizard",
            language="English ",
            parallel=None,
            edition=None,
            print_run=None,
            brand="x",
        ),
    ]
    # Same identity twice collapses to one asset key; the index keeps the first.
    resolver = Resolver.from_catalog(twins)
    assert len(resolver.index) == 1
    assert resolver.resolve("2020 Darkness Ablaze Charizard 20/189").catalog_id == "a"


def test_identifiers_win_over_the_title(resolver: Resolver) -> None:
    by_upc = resolver.resolve("ASM 300 key issue", identifiers=Identifiers(upc="75960601772030011"))
    assert (by_upc.catalog_id, by_upc.method, by_upc.confidence) == ("asm-300", "identifier", 0.99)
    by_pcgs = resolver.resolve("wheatie", identifiers=Identifiers(pcgs_number="2425"))
    assert by_pcgs.catalog_id == "vdb"


def test_the_grade_is_a_variant_never_part_of_the_asset(resolver: Resolver) -> None:
    nine = resolver.resolve("1999 Pokemon Base Set Charizard 4/102 Unlimited Holo PSA 9 MINT")
    ten = resolver.resolve("1999 Pokemon Base Set Charizard 4/102 Unlimited Holo PSA 10 GEM MINT")
    raw = resolver.resolve("1999 Pokemon Base Set Charizard 4/102 Unlimited Holo NOT PSA")
    assert nine.asset_key == ten.asset_key == raw.asset_key is not None
    keys = {variant_key(d.asset_key or "", d.grading) for d in (nine, ten, raw)}
    assert len(keys) == 3
    assert raw.grading is None and "negated_grade" in raw.flags


def test_keys_fold_case_and_accents() -> None:
    a = card("a", year=1999, set_name="Base Set", number="4/102", subject="Charizard")
    b = card("b", year=1999, set_name="BASE SET", number="#4/102", subject="charizard")
    assert asset_key(a) == asset_key(b)
    assert variant_key("k", None) == "k|raw"
    assert variant_key("k", Grading(grader="PSA", grade="8", qualifier="OC")) == "k|psa|8|oc||"


def test_a_mint_mark_is_read_only_where_it_is_one() -> None:
    assert tokenize("1890 CC Morgan Dollar").mint_marks == frozenset({"cc"})
    assert tokenize("1979 O-Pee-Chee Wayne Gretzky #18").mint_marks == frozenset()
    assert tokenize("1909 Lincoln Cent").mint_marks == frozenset()


def test_tokenize_cuts_the_grade_phrase_and_cert() -> None:
    tokens = tokenize("2018 Prizm Luka Doncic #280 PSA 10 GEM MINT #12345678 🔥")
    assert tokens.words == ("2018", "prizm", "luka", "doncic", "280")
    assert tokens.years == (2018,) and "280" in tokens.numbers
    serial = tokenize("2020 Prizm Joe Burrow #307 Gold /10 #'d 3/10")
    assert serial.fractions == frozenset({"10"})


def test_every_fake_market_title_resolves_to_its_item() -> None:
    resolver = Resolver.from_catalog(world_catalog(7))
    listings = market_data(7).listings
    wrong = [
        (x.title, d.catalog_id)
        for x in listings
        if (d := resolver.resolve(x.title)).catalog_id not in (None, x.copy.item.key)
    ]
    matched = sum(resolver.resolve(x.title).catalog_id == x.copy.item.key for x in listings)
    assert wrong == []
    assert matched / len(listings) >= 0.95
