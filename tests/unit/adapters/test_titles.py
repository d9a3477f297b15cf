"""lift_grading: grades, raw condition and flags from real-world-shaped listing titles."""

from __future__ import annotations

import re
from typing import Any

import pytest

from rareindex_adapters import grades, titles
from rareindex_adapters.grades import find_grades
from rareindex_adapters.titles import CONDITIONS, TitleFacts, TitleFlag, lift_grading

G = tuple[str, str, str | None, str | None] | None  # (grader, grade, qualifier, label_type)

# (title, expected grading, expected condition, expected flags)
CASES: list[tuple[str, G, str | None, set[str]]] = [
    # --- PSA ------------------------------------------------------------------------------------
    (
        "2018 Panini Prizm Luka Doncic #280 Rookie RC PSA 10 GEM MINT",
        ("PSA", "10", None, None),
        None,
        set(),
    ),
    ("1986 Fleer Michael Jordan #57 PSA 8 NM-MT", ("PSA", "8", None, None), None, set()),
    ("1986 Fleer Michael Jordan #57 PSA 8 OC", ("PSA", "8", "OC", None), None, set()),
    ("1952 Topps Mickey Mantle #311 PSA 1.5 FAIR", ("PSA", "1.5", None, None), None, set()),
    ("1989 Upper Deck Ken Griffey Jr #1 PSA 9 (MC)", ("PSA", "9", "MC", None), None, set()),
    ("2003 Topps Chrome LeBron James RC #111 PSA 9 MINT ST", ("PSA", "9", "ST", None), None, set()),
    ("1985 Topps Ozzie Smith PSA 8 St. Louis Cardinals", ("PSA", "8", None, None), None, set()),
    ("PSA AUTHENTIC 1909 T206 Honus Wagner", ("PSA", "AUTH", None, None), None, set()),
    ("PSA/DNA Authentic Auto Shohei Ohtani", ("PSA", "AUTH", None, None), None, set()),
    ("PSA GEM MT 10 1986 Fleer Jordan #57", ("PSA", "10", None, None), None, set()),
    ("PSA10 Charizard Celebrations", ("PSA", "10", None, None), None, set()),
    ("PSA-9 Griffey 1989 Upper Deck", ("PSA", "9", None, None), None, set()),
    ("1933 Goudey Babe Ruth PSA 2 GOOD", ("PSA", "2", None, None), None, set()),
    ("ＰＳＡ １０ Pikachu Japanese Promo", ("PSA", "10", None, None), None, set()),
    ("Jordan Fleer 1986 PSA 7 NM 🔥🔥 INVEST L@@K", ("PSA", "7", None, None), None, set()),
    ("PSA 10 Pop 1 Charizard Shining Legends", ("PSA", "10", None, None), None, set()),
    # numbers that are not grades
    ("2020 Topps Chrome Gold /50 PSA 9", ("PSA", "9", None, None), None, set()),
    ("Luka Doncic 2018 Prizm 23/99 PSA 10", ("PSA", "10", None, None), None, set()),
    ("eBay item 123456789012 PSA 10 Jordan", ("PSA", "10", None, None), None, set()),
    ("1/1 Superfractor Trout PSA 9", ("PSA", "9", None, None), None, set()),
    ("PSA #12345678 Jordan 1986 Fleer", None, None, set()),
    ("PSA 12345678 Mantle 1952 Topps", None, None, set()),
    ("PSA 1986 Fleer Jordan Rookie", None, None, set()),
    ("PSA 9.5 Michael Jordan Fleer", None, None, {"invalid_grade"}),
    # --- BGS ------------------------------------------------------------------------------------
    (
        "BGS 9.5 GEM MINT 2019 Prizm Zion #248 (9.5, 9.5, 10, 9)",
        ("BGS", "9.5", None, None),
        None,
        set(),
    ),
    ("Beckett 10 Pristine Luka Doncic Prizm", ("BGS", "10", None, None), None, set()),
    ("BGS 10 BLACK LABEL 2020 Prizm Herbert", ("BGS", "10", None, "Black Label"), None, set()),
    ("BGS Black Label Pikachu Illustrator", ("BGS", "10", None, "Black Label"), None, set()),
    ("BGS 9 Mint Tom Brady 2000 Playoff Contenders", ("BGS", "9", None, None), None, set()),
    (
        "2000 Bowman Chrome Tom Brady RC #236 BGS 8.5 NM-MT+",
        ("BGS", "8.5", None, None),
        None,
        set(),
    ),
    ("BGS 9.5 Black Label Luka", ("BGS", "9.5", None, None), None, set()),
    ("BGS 11 Jordan", None, None, {"invalid_grade"}),
    # --- CGC cards and comics -------------------------------------------------------------------
    ("CGC 10 Pristine Charizard Celebrations", ("CGC", "10", None, "Pristine"), None, set()),
    ("CGC 10 Gem Mint Umbreon VMAX Alt Art", ("CGC", "10", None, None), None, set()),
    ("CGC 9.5 Mint+ Pikachu Van Gogh", ("CGC", "9.5", None, None), None, set()),
    ("Amazing Spider-Man #300 CGC 9.8 White Pages 1988", ("CGC", "9.8", None, None), None, set()),
    ("Amazing Spider-Man 300 9.8 CGC", ("CGC", "9.8", None, None), None, set()),
    ("X-Men #1 CGC 4.5 Restored", ("CGC", "4.5", None, "Restored"), None, set()),
    (
        "Incredible Hulk #181 CGC SS 9.0 Signed Stan Lee",
        ("CGC", "9", None, "Signature Series"),
        None,
        set(),
    ),
    ("Batman #1 CGC 1.8 Qualified", ("CGC", "1.8", None, "Qualified"), None, set()),
    ("Giant-Size X-Men 1 CGC 9.9", ("CGC", "9.9", None, None), None, set()),
    ("CGC 10.0 Spawn #1 1992", ("CGC", "10", None, None), None, set()),
    ("CGC Authentic Altered Charizard", ("CGC", "AA", None, None), None, set()),
    ("CGC 9.7 Venom Lethal Protector", None, None, {"invalid_grade"}),
    # --- SGC ------------------------------------------------------------------------------------
    ("SGC 10 Gold Label 1st Bowman Chrome", ("SGC", "10", None, "Pristine"), None, set()),
    ("SGC 9.5 Mint+ Ohtani 2018 Topps Update", ("SGC", "9.5", None, None), None, set()),
    ("SGC 8 NM-MT Ruth 1933 Goudey", ("SGC", "8", None, None), None, set()),
    ("1952 Topps Mantle SGC 96", ("SGC", "96", None, None), None, {"legacy_scale"}),
    # --- coins (Sheldon) ------------------------------------------------------------------------
    ("1881-S Morgan Silver Dollar PCGS MS65", ("PCGS", "MS65", None, None), None, set()),
    ("1881-S Morgan Dollar MS-65 PCGS", ("PCGS", "MS65", None, None), None, set()),
    ("1909-S VDB Lincoln Cent PCGS MS64RD", ("PCGS", "MS64", "RD", None), None, set()),
    ("1955 Doubled Die Cent PCGS AU58 BN", ("PCGS", "AU58", "BN", None), None, set()),
    ("1916-D Mercury Dime PCGS VG8", ("PCGS", "VG8", None, None), None, set()),
    ("1921 Morgan PCGS MS66+ CAC", ("PCGS", "MS66+", None, None), None, set()),
    ("1893-S Morgan PCGS XF45+", ("PCGS", "XF45+", None, None), None, set()),
    ("1893-S Morgan NGC AU Details Cleaned", ("NGC", "AU Details", None, None), None, set()),
    ("1796 Draped Bust Quarter PCGS Genuine", ("PCGS", "GENUINE", None, None), None, set()),
    ("1885-CC Morgan NGC MS64 DMPL", ("NGC", "MS64", "DMPL", None), None, set()),
    ("1964 Kennedy Half PCGS PR69 DCAM", ("PCGS", "PR69", "DCAM", None), None, set()),
    ("2021 American Silver Eagle NGC PF70 Ultra Cameo", ("NGC", "PR70", "DCAM", None), None, set()),
    ("NGC MS 70 2023 Silver Eagle First Day of Issue", ("NGC", "MS70", None, None), None, set()),
    ("PCGS MS72 Morgan", None, None, {"invalid_grade"}),
    ("1878 Morgan Dollar MS63 raw no slab", None, None, set()),
    # --- other graders --------------------------------------------------------------------------
    ("TAG 10 Charizard Evolving Skies", ("OTHER", "10", None, None), None, {"other_grader"}),
    ("HGA 9.5 Jordan 1986 Fleer", ("OTHER", "9.5", None, None), None, {"other_grader"}),
    ("ANACS MS63 1882-CC Morgan", ("OTHER", "MS63", None, None), None, {"other_grader"}),
    ("Pikachu & Zekrom GX Tag Team 33/181 NM", None, "NM", set()),
    # --- negated and speculative grades ---------------------------------------------------------
    ("PSA 10? Pack fresh Charizard Base Set Holo", None, None, {"speculative_grade"}),
    ("NOT PSA 10 Charizard raw NM", None, "NM", {"negated_grade"}),
    ("Wemby Prizm Silver RC PSA 10 candidate 🔥📈", None, None, {"speculative_grade"}),
    ("Luka Doncic Prizm RC raw (PSA 10 comp) LP", None, "LP", {"speculative_grade"}),
    ("Potential PSA 10 Mahomes rookie", None, None, {"speculative_grade"}),
    ("Send to PSA? Charizard raw", None, None, {"speculative_grade"}),
    ("PSA ready Charizard raw Mint", None, "Mint", {"speculative_grade"}),
    ("Non-PSA raw copy of 1986 Fleer Jordan", None, None, {"negated_grade"}),
    (
        "Herbert Prizm PSA 10 crossed from BGS 9.5",
        ("PSA", "10", None, None),
        None,
        {"negated_grade"},
    ),
    (
        "Morgan Dollar PCGS MS65 crossed from NGC MS64",
        ("PCGS", "MS65", None, None),
        None,
        {"negated_grade"},
    ),
    (
        "PSA 9 Charizard Base Set, easy PSA 10?",
        ("PSA", "9", None, None),
        None,
        {"speculative_grade"},
    ),
    ("No Reserve PSA 10 Mahomes Prizm", ("PSA", "10", None, None), None, set()),
    ("2020 Bowman Chrome Prospect PSA 10 Julio", ("PSA", "10", None, None), None, set()),
    # --- two graders ----------------------------------------------------------------------------
    ("PSA 10 and BGS 9.5 Jordan two cards", None, None, {"multiple_grades"}),
    ("PSA 10 TAG 10 Charizard", None, None, {"multiple_grades"}),
    ("Beckett BGS 9.5 Zion Prizm", ("BGS", "9.5", None, None), None, set()),
    # --- lots, reprints, customs, sealed, redemptions, offers -----------------------------------
    ("Lot of 3 PSA 10 2020 Prizm Herbert", ("PSA", "10", None, None), None, {"lot"}),
    ("(10) 1989 Upper Deck Ken Griffey Jr RC #1 raw", None, None, {"lot"}),
    ("Charizard x4 bundle raw NM", None, "NM", {"lot"}),
    ("2019 Prizm Zion PSA 10 x2", ("PSA", "10", None, None), None, {"lot"}),
    ("Mahomes RC 2017 Prizm 5 card lot", None, None, {"lot"}),
    ("2022 Panini Prizm Team Set Chiefs", None, None, {"lot"}),
    ("Lot #245: 1952 Topps Mantle PSA 5", ("PSA", "5", None, None), None, set()),
    ("Electivire LV.X 121/123 Mysterious Treasures", None, None, set()),  # the X of a name
    ("1986 Fleer Jordan #57 REPRINT RP", None, None, {"reprint"}),
    ("Ungraded Mint Charizard NOT REAL", None, "Mint", {"reprint"}),
    ("2019 Topps Tribute Mike Trout #50 PSA 9", ("PSA", "9", None, None), None, set()),
    ("Custom ACEO Shohei Ohtani art card", None, None, {"custom"}),
    ("Fan made Charizard proxy NM", None, "NM", {"custom"}),
    ("2023 Bowman Chrome Hobby Box Factory Sealed", None, None, {"sealed"}),
    ("Pokemon Evolving Skies Booster Box sealed OBO", None, None, {"sealed", "best_offer"}),
    ("Booster Bundle Pokemon 151", None, None, {"sealed"}),
    ("2021 Topps Chrome Wander Franco Auto Redemption", None, None, {"redemption"}),
    (
        "2019 Topps Chrome Mike Trout PSA 10 Make Offer",
        ("PSA", "10", None, None),
        None,
        {"best_offer"},
    ),
    # --- raw conditions -------------------------------------------------------------------------
    ("Charizard 4/102 Holo Base Set 120 HP Lightly Played", None, "LP", set()),
    ("Blastoise 2/102 Base Set Holo Heavily Played", None, "HP", set()),
    ("Venusaur 15/102 Holo damaged crease", None, "DMG", set()),
    ("Mickey Mantle 1952 Topps #311 Good condition", None, "Good", set()),
    ("2023 Silver Eagle from the US Mint in original box", None, None, set()),
    ("1999 Lincoln Cent mint mark error", None, None, set()),
    ("Pikachu Illustrator Near Mint", None, "NM", set()),
    ("Michael Jordan Fleer 1986 #57 EX-MT", None, "EX-MT", set()),
    ("Mint Condition Ken Griffey 1989 UD", None, "Mint", set()),
    ("Dark Charizard 4/82 Team Rocket MP", None, "MP", set()),
    ("Shadowless Machamp 8/102 NM/M", None, "NM-MT", set()),
    ("Charizard ex 199/165 Special Illustration", None, None, set()),
]


def _as_tuple(facts: TitleFacts) -> G:
    g = facts.grading
    return None if g is None else (g.grader, g.grade, g.qualifier, g.label_type)


def test_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len({title for title, *_ in CASES}) == len(CASES), "duplicate titles"


@pytest.mark.parametrize(
    ("title", "grading", "condition", "flags"), CASES, ids=[c[0] for c in CASES]
)
def test_title(title: str, grading: G, condition: str | None, flags: set[str]) -> None:
    facts = lift_grading(title)
    assert _as_tuple(facts) == grading
    assert facts.condition == condition
    assert set(facts.flags) == flags
    assert facts.is_lot is ("lot" in flags)
    assert facts.negated is bool(flags & {"negated_grade", "speculative_grade"})


@pytest.mark.parametrize(
    ("title", "auto"),
    [
        ("2018 Bowman Chrome Ohtani PSA 9 Auto 10", "10"),
        ("BGS 9.5 Auto 10 Luka Prizm", "10"),
        ("PSA Authentic Auto 8 Mantle cut", "8"),
        ("PSA 10 Auto Wemby Prizm", None),
        ("PSA 9 Auto /25 Ohtani", None),
    ],
)
def test_autograph_grade(title: str, auto: str | None) -> None:
    facts = lift_grading(title)
    assert facts.grading is not None
    assert facts.grading.autograph_grade == auto


def test_flags_come_in_enum_order_as_plain_strings() -> None:
    facts = lift_grading("Lot of 3 PSA 10? Booster Box sealed OBO custom")
    order = [f.value for f in TitleFlag]
    assert list(facts.flags) == sorted(facts.flags, key=order.index)
    assert facts.flags == ("lot", "custom", "sealed", "best_offer", "speculative_grade")
    assert all(type(f) is str for f in facts.flags)


def test_every_condition_is_in_the_closed_vocabulary() -> None:
    seen = {lift_grading(title).condition for title, *_ in CASES} - {None}
    assert seen <= set(CONDITIONS)
    assert {"NM", "LP", "MP", "HP", "DMG", "Mint"} <= seen


def test_flags_from_the_grade_scanner_are_title_flags() -> None:
    titles = ["PSA 9.5 Jordan", "SGC 96 Mantle", "TAG 10 Charizard", "PCGS MS72 Morgan"]
    produced = set().union(*(find_grades(t).flags for t in titles))
    assert produced == {"invalid_grade", "legacy_scale", "other_grader"}
    assert produced <= {f.value for f in TitleFlag}


def test_negation_masks_only_the_negated_grade() -> None:
    scan = find_grades("PSA 10 crossed from BGS 9.5")
    assert [(g.grader, g.grade) for g in scan.gradings] == [("PSA", "10")]
    assert scan.negated and not scan.speculative
    assert "9.5" not in scan.masked and "BGS" not in scan.masked


def test_grade_words_are_not_read_as_a_condition_when_the_grade_is_negated() -> None:
    # The label words belong to the masked grade, so only the seller's own "LP" remains.
    assert lift_grading("NOT PSA 10 GEM MINT copy LP").condition == "LP"


@pytest.mark.parametrize("title", ["", "   ", "🔥🔥🔥", "#1", "x", "PSA", "10", "?" * 300])
def test_odd_input_never_raises(title: str) -> None:
    facts = lift_grading(title)
    assert facts.grading is None


def _first_characters(rule: str) -> set[str]:
    """The characters (lower case) a pattern's first consumed character can be, read from the
    standard library's own parse of it; ``*`` stands for anything else (an escape, a category)."""
    import re._constants as c
    import re._parser as parser

    def first(items: list[Any]) -> tuple[set[str], bool]:
        """(first characters, whether ``items`` can match the empty string)."""
        found: set[str] = set()
        for op, av in items:
            if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
                continue  # zero-width: \\b, ^, look-arounds
            if op is c.LITERAL:
                return found | {chr(av).lower()}, False
            if op is c.IN:
                for kind, value in av:
                    if kind is c.LITERAL:
                        found.add(chr(value).lower())
                    elif kind is c.RANGE:
                        found.update(chr(n).lower() for n in range(value[0], value[1] + 1))
                    else:
                        found.add("*")
                return found, False
            if op is c.SUBPATTERN:
                inner, empty = first(list(av[-1]))
            elif op is c.BRANCH:
                branches = [first(list(b)) for b in av[1]]
                inner = set().union(*(b[0] for b in branches))
                empty = any(b[1] for b in branches)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                inner, empty = first(list(av[2]))
                empty = empty or av[0] == 0
            else:
                return found | {"*"}, False
            found |= inner
            if not empty:
                return found, False
        return found, True

    chars, empty = first(list(parser.parse(rule, re.IGNORECASE)))
    return chars | ({"*"} if empty else set())


def test_each_flag_rule_starts_with_a_character_its_flag_lets_through() -> None:
    """_FLAG_STARTS lets a word through to a flag's rules only when it starts with one of these
    characters: a rule starting otherwise would silently never match."""
    for flag, rule in titles._FLAG_RULES:
        if not rule.startswith(r"\b"):
            continue
        allowed = _first_characters(f"[{titles._FLAG_STARTS[flag]}]")
        starts = _first_characters(rule)
        assert "*" not in starts and starts <= allowed, (flag, rule, starts - allowed)


def test_each_condition_rule_starts_with_a_letter_the_pattern_lets_through() -> None:
    allowed = _first_characters(f"[{titles._CONDITION_STARTS}]")
    for condition, rule in titles._CONDITION_RULES:
        starts = _first_characters(rule)
        assert "*" not in starts and starts <= allowed, (condition, rule, starts - allowed)


@pytest.mark.parametrize(
    ("cues", "starts"),
    [
        (grades._NEGATION_CUES, grades._NEGATION_STARTS),
        (grades._SPECULATION_CUES, grades._SPECULATION_STARTS),
    ],
)
def test_each_grade_cue_starts_with_a_letter_its_pattern_lets_through(
    cues: str, starts: str
) -> None:
    allowed = _first_characters(f"[{starts}]")
    found = _first_characters(cues)
    assert "*" not in found and found <= allowed, found - allowed


def test_the_all_flags_search_finds_every_title_a_flag_pattern_does() -> None:
    """``_ANY_FLAG_RE`` lets a title through to the six flag searches: it must match whenever
    one of them does (the titles of this module and their upper and lower case forms)."""
    titles_here = [case[0] for case in CASES] + [
        "Lot of 3 1st Edition cards",
        "(3) PSA 9 slabs",
        "Booster box sealed OBO",
        "Topps Tribute custom proxy reprint",
        "10x Pikachu, qty: 4, set of 6",
    ]
    flagged = 0
    for title in titles_here:
        for text in (title, title.upper(), title.lower()):
            masked = find_grades(text).masked
            if any(rx.search(masked) for _, rx in titles._FLAG_RES):
                flagged += 1
                assert titles._ANY_FLAG_RE.search(masked), text
    assert flagged > 30  # every flag, several times


def test_each_mint_phrase_that_is_no_condition_has_mint_in_it() -> None:
    """``_without_mint_phrases`` searches ``_NOT_CONDITION`` only in a text where ``_MINT``
    matches: each of its alternatives must have the letters ``mint`` outside any group."""
    import re._constants as c
    import re._parser as parser

    items = list(parser.parse(titles._NOT_CONDITION.pattern, re.IGNORECASE))
    [branches] = [value[1] for kind, value in items if kind is c.BRANCH]
    assert all(kind in (c.AT, c.BRANCH) for kind, _ in items)  # a \b the parser factored out
    assert len(branches) == 3
    for branch in branches:
        letters = "".join(chr(value) if kind is c.LITERAL else "\0" for kind, value in branch)
        assert "mint" in letters.lower(), branch


@pytest.mark.parametrize(
    "title",
    [
        "Base Set 1st Ed. Charizard",
        "FIRST EDITION Machamp",
        "shadowless",
        "Unlimited Holo",
        "4/102",
    ],
)
def test_the_any_edition_search_gives_the_rules_answer(title: str) -> None:
    expected = next((name for name, rx in titles._EDITION_RES if rx.search(title)), None)
    assert titles.edition_of(title) == expected
    assert (titles._ANY_EDITION_RE.search(title) is not None) == (expected is not None)


def test_each_edition_rule_starts_at_a_word_with_a_character_the_any_search_lets_through() -> None:
    allowed = _first_characters(f"[{titles._EDITION_STARTS}]")
    for edition, rule in titles._EDITION_RULES:
        assert rule.startswith(r"\b"), edition
        starts = _first_characters(rule)
        assert "*" not in starts and starts <= allowed, (edition, rule, starts - allowed)


def test_the_grader_tokens_first_characters_are_all_re_takes_for_them() -> None:
    """``_GRADER_RE`` first consumes a character of ``_GRADER_FIRST``: the set must hold every
    character a token's first letter matches, IGNORECASE included (on every code point)."""
    import sys

    every = "".join(map(chr, range(sys.maxunicode + 1)))
    firsts = {
        token.removeprefix("(?-i:")[0] for tokens, _, _ in grades._GRADERS for token in tokens
    }
    taken = set(re.findall(f"[{''.join(sorted(firsts))}]", every, re.IGNORECASE))
    assert taken <= set(grades._GRADER_FIRST)


def test_the_grader_pattern_finds_what_one_pattern_of_the_tokens_does() -> None:
    """The same matches (start, end, grader group) as the tokens joined under one look-behind and
    IGNORECASE, the way the pattern was first written, on this module's titles and random ones."""
    import random

    reference = re.compile(
        r"(?<![\w/])(?:"
        + "|".join(
            f"(?P<g{i}>{'|'.join(tokens)})(?![a-z])"
            for i, (tokens, _, _) in enumerate(grades._GRADERS)
        )
        + ")",
        re.IGNORECASE,
    )
    pieces = [
        *"PSABGCNIKTHMXDVaeiopsbgcnktmx/ -#.:0123456789\n\t\u017f\u0131\u0130\u212aé_",
        *("PSA", "psa", "BGS", "Beckett", "CGC", "SGC", "PCGS", "NGC", "ANACS", "ICG", "CSG"),
        *("BVG", "CBCS", "PGX", "TAG", "tag", "HGA", "ISA", "GMA", "KSA", "MNT", "AGS", "/DNA"),
    ]
    rng = random.Random(21)
    titles_here = [case[0] for case in CASES]
    titles_here += ["".join(rng.choices(pieces, k=rng.randint(0, 10))) for _ in range(20_000)]
    for title in titles_here:
        for text in (title, title.upper(), title.lower()):
            got = [(m.start(), m.end(), m.lastgroup) for m in grades._GRADER_RE.finditer(text)]
            want = [(m.start(), m.end(), m.lastgroup) for m in reference.finditer(text)]
            assert got == want, text


@pytest.mark.parametrize("name", ["_ANY_FLAG_RE", "_ANY_EDITION_RE", "_CONDITION_RE"])
def test_an_ascii_twin_finds_what_its_pattern_does_in_printable_ascii(name: str) -> None:
    """lift_grading searches a printable ASCII title with the pattern compiled with re.ASCII:
    the same matches (spans and groups) on this module's titles and on random printable text."""
    import random

    from rareindex_adapters._ascii_twin import ascii_twin, printable_ascii

    pattern = getattr(titles, name)
    twin = ascii_twin(pattern)
    rng = random.Random(7)
    words = [w for case in CASES for w in case[0].split()] + ["1st", "ed.", "(3)", "x10", "RP"]
    printable = [chr(c) for c in range(0x20, 0x7F)]
    texts = [case[0] for case in CASES]
    texts += [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(2_000)]
    texts += ["".join(rng.choices(printable, k=rng.randint(0, 30))) for _ in range(2_000)]
    for text in texts:
        for variant in (text, text.upper(), text.lower()):
            if not printable_ascii(variant):
                continue
            got = [(m.span(), m.groups()) for m in twin.finditer(variant)]
            assert got == [(m.span(), m.groups()) for m in pattern.finditer(variant)], variant


def test_only_printable_ascii_text_is_searched_with_a_twin() -> None:
    from rareindex_adapters._ascii_twin import printable_ascii

    assert printable_ascii("PSA 10 Gem Mint ~!@#$%^&*()")
    assert not printable_ascii("Pokémon")  # not ASCII
    assert not printable_ascii("lot\x1cof 3")  # \x1c is white space for Unicode's \s only
    assert not printable_ascii("lot\tof 3")


def test_a_grade_met_again_is_the_same_frozen_grading_with_the_same_fields_set() -> None:
    first = find_grades("2018 Prizm Luka Doncic #280 PSA 10").gradings[0]
    again = find_grades("1999 Pokemon Base Charizard 4/102 PSA 10 GEM MINT").gradings[0]
    postfix = find_grades("Amazing Spider-Man #300 9.8 CGC").gradings[0]
    assert first is again
    assert first.model_fields_set == {
        "grader",
        "grade",
        "qualifier",
        "label_type",
        "autograph_grade",
    }
    assert postfix.model_fields_set == {"grader", "grade"}  # as Grading(grader=…, grade=…)


@pytest.mark.parametrize(
    ("first", "again", "flag"),
    [
        ("1952 Topps Mantle SGC 96", "SGC 96 1954 Bowman Mays", "legacy_scale"),
        ("TAG 10 Charizard Evolving Skies", "Umbreon VMAX TAG 10", "other_grader"),
        ("PSA 9.5 Michael Jordan Fleer", "Griffey PSA 9.5", "invalid_grade"),
    ],
)
def test_a_card_grade_read_again_raises_its_flag_again(first: str, again: str, flag: str) -> None:
    # The second title's grade words are the first's: its reading is remembered, and the flag
    # that reading raised must be raised for the second title too.
    lift_grading.cache_clear()
    assert flag in find_grades(first).flags
    assert flag in find_grades(again).flags
    assert flag in lift_grading(again).flags
    assert lift_grading(first).grading == lift_grading(again).grading
