"""A card title read for matching: its words, numbers, printed totals and the sets it names.

:func:`read_title` turns a title into a :class:`CardTitle` against a catalog's :class:`CardSets`:

* numbers as real listings write them: ``N/T`` and ``N of T`` (the ``T`` kept as a printed total
  beside its ``N``), ``#N``, ``No. N``, numbers with letters (``TG12``, ``SWSH050``) — all
  *strong* — and a bare ``N`` (*bare*); leading zeros and case never matter (:func:`norm_number`);
  a set code (``G2``, ``MH2``, ``PR-SW``) is never a number;
* the words again as set names are compared (fillers out, plurals folded), the sets named whole or
  by code, the words that may tell a rarity (not the ``Holo`` of ``Reverse Holo``), and the
  catalog's distinguishing phrases the title holds.

:func:`flags_without` reads a title's flags again without a card's name and set code, for the
words that only look like a lot (``Iron Bundle``, ``(LOT)``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rareindex_adapters import lift_grading

from .cardsets import FILLERS, CardSet, CardSets, code_of, match_words, stem
from .text import Tokens, fold, tokenize

__all__ = ["FINISHES", "CardTitle", "flags_without", "norm_number", "read_title"]

FINISHES = frozenset({"reverse", "rev", "non"})
"""Words that make the next (``holo``, ``foil``) a finish or a negation, not a rarity."""

_NUMBER = re.compile(r"^([a-z]{0,6})0*(\d{1,4})([a-z]{0,2})$")
_FRACTION = re.compile(r"^([a-z]{0,6}\d{1,4}[a-z]?)/([a-z]{0,6})(\d{1,4})$")
_ALNUM_NUMBER = re.compile(r"^(?:[a-z]{1,6}\d{1,4}[a-z]?|\d{1,4}[a-z])$")
_DIGITS = re.compile(r"^\d{1,4}$")
_HASHED = re.compile(
    r"(?:#|\bno\.?\s?|\bnumber\s|\bnum\.?\s?|\bcard\s#?)\s*([a-z]{0,6}\d{1,4}[a-z]?)\b"
)
_YEAR = re.compile(r"^(18[5-9]\d|19\d\d|20[0-3]\d)$")
_PARENTHESIZED = re.compile(r"[(\[]\s*([A-Za-z0-9][A-Za-z0-9\-]{1,7})\s*[)\]]")
_CAPITAL_WORD = re.compile(r"(?<![\w-])([A-Z][A-Z0-9]{1,5})(?![\w-])(?!\s+(?i:of)\b)")


def norm_number(text: str | None) -> str | None:
    """The comparable form of a card number: folded, ``#`` and leading zeros off.

    >>> norm_number("008"), norm_number("TG05"), norm_number("SWSH050"), norm_number("4")
    ('8', 'tg5', 'swsh50', '4')
    """
    if not text:
        return None
    value = fold(text).lstrip("#").replace(" ", "")
    match = _NUMBER.match(value)
    if match:
        return f"{match[1]}{int(match[2])}{match[3]}"
    return value or None


@dataclass(slots=True)
class CardTitle:
    """A title read for numbered matching (see :func:`read_title`)."""

    tokens: Tokens
    words: tuple[str, ...]
    word_set: frozenset[str]
    """Its words, and their set-name forms (fillers out, plurals folded)."""
    forms: frozenset[str]
    """Its words, and each without a final ``s`` (``Erikas`` -> ``erika``)."""
    year_words: frozenset[str]
    rarity_words: frozenset[str]
    """Its words that may tell a rarity: all but the holo or foil of a finish (Reverse Holo)."""
    numbers: dict[str, str]
    """Normalized number -> ``strong`` or ``bare``."""
    totals: dict[str, set[int]]
    """Normalized number -> printed totals written beside it (``7/123``)."""
    named: list[CardSet]
    coded: list[CardSet]
    phrases: list[frozenset[str]]
    """The catalog's distinguishing phrases (parallels, editions, languages) in the title."""


def read_title(
    title: str,
    sets: CardSets,
    phrases: Mapping[tuple[str, ...], frozenset[str]],
    tokens: Tokens | None = None,
) -> CardTitle:
    """Read ``title`` into what matching needs: words, numbers, totals, the sets it names and
    the catalog's distinguishing ``phrases`` it holds."""
    tokens = tokens or tokenize(title)
    words = match_words(tokens.words)
    folded = fold(title)
    hashed = {norm_number(m) for m in _HASHED.findall(folded)}
    codes = sets.all_codes
    written_codes = {c for m in _PARENTHESIZED.findall(title) if (c := code_of(m)) in codes}
    joined = {w: c for w in tokens.words if "-" in w and (c := code_of(w)) in codes}
    written_codes.update(joined.values())  # PR-SW: one code, not PR and SW
    parts = {p for w in joined for p in match_words((w,))}
    numbers: dict[str, str] = {}
    totals: dict[str, set[int]] = defaultdict(set)
    for i, word in enumerate(words):
        fraction = _FRACTION.match(word)
        if fraction:
            number = norm_number(fraction[1])
            if number:
                numbers[number] = "strong"
                totals[number].add(int(fraction[3]))
            continue
        of_total = i + 2 < len(words) and words[i + 1] == "of" and _DIGITS.match(words[i + 2])
        if _DIGITS.match(word) and of_total:
            number = norm_number(word)
            if number:
                numbers[number] = "strong"
                totals[number].add(int(words[i + 2]))
            continue
        if _ALNUM_NUMBER.match(word):
            if word not in codes and (number := norm_number(word)):
                numbers[number] = "strong"  # a set code (G2, N1, MH2) is no card number
        elif _DIGITS.match(word) and not _YEAR.match(word):
            number = norm_number(word)
            if number:
                numbers[number] = "strong" if number in hashed else numbers.get(number, "bare")
    set_words = tuple(stem(w) for w in words if w not in FILLERS and w not in parts)
    word_set = frozenset(words) | frozenset(set_words)
    return CardTitle(
        tokens=tokens,
        words=words,
        word_set=word_set,
        forms=frozenset(words) | frozenset(w[:-1] for w in words if w.endswith("s")),
        year_words=frozenset(str(y) for y in tokens.years),
        rarity_words=frozenset(
            w for i, w in enumerate(words) if not (i and words[i - 1] in FINISHES)
        ),
        numbers=numbers,
        totals=totals,
        named=sets.named(set_words),
        coded=sets.coded(
            (w for w in words if w not in parts), parenthesized=frozenset(written_codes)
        ),
        phrases=_phrases_in(words, phrases),
    )


def _phrases_in(
    words: Sequence[str], phrases: Mapping[tuple[str, ...], frozenset[str]]
) -> list[frozenset[str]]:
    if not phrases:
        return []
    hits = []
    for start in range(len(words)):
        for length in range(1, min(6, len(words) - start) + 1):
            phrase = phrases.get(tuple(words[start : start + length]))
            if phrase is not None:
                hits.append(phrase)
    return hits


def flags_without(title: str, subject: Sequence[str], code: str | None) -> tuple[str, ...]:
    """The title flags of ``title`` read without the words of a card's name and its set's
    ``code`` (in capitals or parentheses): ``Iron Bundle`` is no bundle, ``(LOT)`` no lot."""
    for word in sorted(subject, key=len, reverse=True):
        title = re.sub(rf"(?i)(?<!\w){re.escape(word)}(?!\w)", " ", title)
    if code:

        def drop(match: re.Match[str]) -> str:
            return " " if code_of(match[1]) == code else match[0]

        title = _PARENTHESIZED.sub(drop, title)
        if any(c.islower() for c in title):  # in an all-capitals title LOT may be a lot
            title = _CAPITAL_WORD.sub(drop, title)
    return lift_grading(title).flags
