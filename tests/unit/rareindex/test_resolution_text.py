"""fold and longest_phrases against their plain definitions: the fast forms (one regular
expression; one pass with the furthest end so far) must give the same answers."""

from __future__ import annotations

import random
import sys
import unicodedata

from rareindex.resolution.text import fold, longest_phrases


def _fold_by_definition(text: str) -> str:
    """Character by character: letters and digits, white space and ``/#'$+.:-&`` stay."""
    text = unicodedata.normalize("NFKC", text)
    if not text.isascii():
        text = "".join(
            c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)
        )
    kept = [c if c.isalnum() or c in " /#'$+.:-&" or c.isspace() else " " for c in text.casefold()]
    return " ".join("".join(kept).split())


def _phrases_by_definition(
    words: tuple[str, ...], table: dict[tuple[str, ...], str], longest: int
) -> list[tuple[int, int, str]]:
    """The longest phrase at each position, minus those inside a longer one found elsewhere."""
    found = []
    for start in range(len(words)):
        for length in range(min(longest, len(words) - start), 0, -1):
            if (value := table.get(words[start : start + length])) is not None:
                found.append((start, start + length, value))
                break
    return [
        (a, b, v)
        for a, b, v in found
        if not any(a2 <= a and b <= b2 and (b2 - a2) > (b - a) for a2, b2, _ in found)
    ]


def test_fold_keeps_and_drops_every_character_as_its_definition_does() -> None:
    for block in range(0, sys.maxunicode + 1, 64):
        text = "".join(chr(c) for c in range(block, block + 64) if not 0xD800 <= c <= 0xDFFF)
        assert fold.__wrapped__(text) == _fold_by_definition(text), hex(block)


def test_fold_agrees_with_its_definition_on_titles_and_noise() -> None:
    rng = random.Random(5)
    pool = list("aZ09 _-/#'$+.:&,!?()\t\n\u00a0\u2003\u3000éÉñ①½ﬁⅫ🔥⭐\ufe0f\u200b\u0301")
    titles = [
        "🔥 2018 Panini Prizm Luka Dončić #280 Silver Prizm #'d 23/99 PSA 10 GEM MINT",
        "1999 Pokémon Base Set Charizard 4/102 Holo — BGS 9.5 (9.5 9.5 9.5 9)",
        "snake_case_title__with___underscores",
        "",
    ]
    titles += ["".join(rng.choice(pool) for _ in range(rng.randint(0, 30))) for _ in range(5000)]
    for title in titles:
        assert fold.__wrapped__(title) == _fold_by_definition(title), repr(title)


def test_longest_phrases_agrees_with_its_definition() -> None:
    rng = random.Random(3)
    vocabulary = "abcdef"
    for _ in range(20_000):
        longest = rng.randint(1, 5)
        words = tuple(rng.choice(vocabulary) for _ in range(rng.randint(0, 12)))
        table = {}
        for _ in range(rng.randint(0, 12)):
            key = tuple(rng.choice(vocabulary) for _ in range(rng.randint(1, longest)))
            table[key] = "".join(key)
        assert longest_phrases(words, table, longest) == _phrases_by_definition(
            words, table, longest
        ), (words, table, longest)


def test_a_numberish_word_always_holds_a_digit_or_a_hyphen() -> None:
    """tokenize counts every word _NUMBERISH matches as a number: a word of letters alone must
    never match (a set name is not a card number)."""
    from rareindex.resolution.text import _NUMBERISH

    rng = random.Random(9)
    alphabet = "abcxyz0123456789-٣"
    for _ in range(50_000):
        word = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))
        if _NUMBERISH.match(word):
            assert any(c.isdigit() for c in word) or "-" in word, word
    assert not _NUMBERISH.match("charizard") and not _NUMBERISH.match("holo")
