"""LoweredPrefilter: the lowered, look-around-free search that lets a printable ASCII title through
to the exact flag rules must admit every title one of the rules matches."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rareindex_adapters import titles
from rareindex_adapters._ascii_twin import (
    LoweredPrefilter,
    _pieces,
    _spread,
    _without_lookarounds,
    printable_ascii,
)

PRINTABLE = "".join(chr(c) for c in range(0x20, 0x7F))
FLAG_RULES = [rule for _, rule in titles._FLAG_RULES]


def _admits_whatever_a_rule_matches(
    prefilter: LoweredPrefilter, rules: list[str], text: str
) -> None:
    for variant in (text, text.upper(), text.lower(), text.swapcase()):
        if any(re.search(rule, variant, re.IGNORECASE) for rule in rules):
            assert prefilter.admits(variant), variant


@pytest.mark.parametrize("rule", FLAG_RULES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_text_a_flag_rule_matches_is_admitted(rule: str, data: st.DataObject) -> None:
    """Texts made to match one rule (hypothesis's ``from_regex``, ASCII, its white space as
    spaces), between random printable text."""
    match = data.draw(
        st.from_regex(re.compile(rule, re.IGNORECASE | re.ASCII), fullmatch=True)
        .map(lambda s: re.sub(r"\s", " ", s))
        .filter(printable_ascii)
    )
    before = data.draw(st.text(alphabet=PRINTABLE, max_size=12))
    after = data.draw(st.text(alphabet=PRINTABLE, max_size=12))
    _admits_whatever_a_rule_matches(titles._ANY_FLAG_ASCII, FLAG_RULES, before + match + after)


def test_titles_and_random_text_a_flag_rule_matches_are_admitted() -> None:
    from tests.unit.adapters.test_titles import CASES

    rng = random.Random(11)
    words = [w for case in CASES for w in case[0].split()]
    words += [
        "lot",
        "(3)",
        "x10",
        "10x",
        "RP",
        "R/P",
        "B/O",
        "OBO",
        "set of 4",
        "Qty: 3",
        "5 cards",
    ]
    texts = [case[0] for case in CASES]
    texts += [" ".join(rng.choices(words, k=rng.randint(1, 12))) for _ in range(3_000)]
    texts += ["".join(rng.choices(PRINTABLE, k=rng.randint(0, 30))) for _ in range(3_000)]
    admitted = 0
    for text in filter(printable_ascii, texts):
        _admits_whatever_a_rule_matches(titles._ANY_FLAG_ASCII, FLAG_RULES, text)
        admitted += titles._ANY_FLAG_ASCII.admits(text)
    assert admitted > 500  # the random titles hit the rules often


def test_a_title_without_a_flag_word_is_not_admitted() -> None:
    """A prefilter that admitted everything would pass the tests above and save nothing."""
    for title in (
        "2018 Panini Prizm Luka Doncic #280 PSA 10",
        "Charizard 4/102 Base Set Holo",
        "1909-S VDB Lincoln Cent PCGS MS65 RD",
    ):
        assert not titles._ANY_FLAG_ASCII.admits(title), title


def test_look_arounds_are_left_out_and_sets_and_escapes_kept() -> None:
    def without(rule: str) -> str:
        return "".join(_without_lookarounds(_pieces(rule)))

    assert without(r"\b(?<!booster\s)bundle\b") == r"\bbundle\b"
    assert without(r"lot\b(?!\s*#)(?!\s*\d+\s*[:\-–])") == r"lot\b"
    assert without(r"[(](?=[)])x\(") == r"[(]x\("
    assert without(r"[]a)](?!b(?=c))d") == r"[]a)]d"
    assert without(r"(?P<n>a)(?:b)") == r"(?P<n>a)(?:b)"


def test_a_leading_group_is_spread_over_its_tail() -> None:
    def spread(rule: str) -> list[str]:
        return ["".join(p) for p in _spread(_pieces(rule))]

    assert spread(r"(?:complete|team)\s+set") == [r"complete\s+set", r"team\s+set"]
    assert spread(r"(?:factory[\s\-]+)?sealed") == [r"factory[\s\-]+sealed", "sealed"]
    assert spread(r"(?:a|(?:b|c)d)e") == ["ae", "(?:b|c)de"]
    assert spread(r"(?:ab)+c") == [r"(?:ab)+c"]  # a repeated group stays whole
    assert spread(r"(?:ab){2}c") == [r"(?:ab){2}c"]


def test_a_rule_with_inline_flags_is_refused() -> None:
    with pytest.raises(ValueError, match="inline flags"):
        LoweredPrefilter([r"\b(?x) lot"])
    with pytest.raises(ValueError, match="inline flags"):
        LoweredPrefilter([r"\b(?i:lot)"])
    assert LoweredPrefilter([r"\b(?-i:RP\b)"]).admits("an RP card")
