"""Title text as tokens: folded, noise-free and shaped for identity checks
(docs/domain.md#title-noise-and-red-flags).

:func:`tokenize` folds a title (NFKC, accents dropped, case-folded, emoji and most punctuation
gone) into :class:`Tokens`:

* ``words`` — the folded tokens in order (``#280`` -> ``280``; ``1909-S``, ``1909 S`` ->
  ``1909`` + ``mint:s``);
* ``numbers`` — every token that may be a card, collector or issue number (``280``, ``4/102``,
  ``bdc-ex``, ``sv31/sv94``);
* ``fractions`` — denominators of ``a/b`` and ``/b`` tokens (``#'d 23/99`` -> ``99``): print runs,
  unless the fraction is the collector number itself;
* ``years`` — four-digit years 1850-2035;
* ``graded`` — the grade phrase (``PSA 10 GEM MINT #12345678``) is cut out of ``words`` so a label
  word (``Gem``, ``Mint``) or a cert number never passes for part of the item's identity.

Example:
    >>> t = tokenize("🔥 2018 Panini Prizm Luka Dončić #280 Silver Prizm #'d 23/99 PSA 10 GEM MINT")
    >>> t.words[:6], t.years, "99" in t.fractions
    (('2018', 'panini', 'prizm', 'luka', 'doncic', '280'), (2018,), True)
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from rareindex_adapters.certs import GRADERS as _GRADER_TOKENS

V = TypeVar("V")

__all__ = ["GRADERS", "Tokens", "fold", "longest_phrases", "tokenize"]

GRADERS = frozenset({g.casefold() for g in _GRADER_TOKENS} | {"beckett"})
"""The graders' tokens, folded; ``beckett`` added on purpose: titles name BGS slabs by the firm."""
_LABEL_WORDS = frozenset(
    {
        "gem", "mint", "mt", "nm", "nm-mt", "nm/mt", "nm+", "ex-mt", "ex/nm", "ex", "vg", "vg-ex",
        "good", "fair", "poor", "pristine", "perfect", "superb", "near", "excellent", "very",
        "auth", "authentic", "altered", "aa", "genuine", "details", "cert", "cert#", "black",
        "label", "qualified", "universal", "signature", "series", "white", "pages", "ow", "oc",
        "st", "pd", "of", "mk", "mc", "rd", "rb", "bn", "cam", "dcam", "pl", "dmpl", "fb", "fbl",
    }
)  # fmt: skip
_GRADE_VALUE = re.compile(
    r"^(?:10|[1-9](?:\.[05])?|\d\.\d|(?:ms|pr|pf|sp|au|xf|ef|vf|f|vg|g|ag)-?\d{1,2}\+?|\d{2,3})$"
)
_SUBGRADE = re.compile(r"^\d{1,2}\.\d$")
"""BGS 9.5 (9.5 9 10): the subgrades after a grade."""
_CERT = re.compile(r"^\d{7,10}(?:-\d{3})?$")
_ITEM_ID = re.compile(r"^\d{11,13}$")
_YEAR_MINT = re.compile(r"\b(1[789]\d\d|20[0-3]\d)(?:-(cc|[a-z])|\s?(cc|[cdopsw]))(?=[\s,;)]|$)")
"""``1909-S``, ``1909 S``, ``1909S``, ``1890 CC``: a date and its mint mark."""
_SPLIT = re.compile(r"[^\w/#'$+.:\-]+")
_YEAR = re.compile(r"^(18[5-9]\d|19\d\d|20[0-3]\d)$")
_NUMBERISH = re.compile(r"^(?:[a-z]{0,5}-?\d+[a-z]?|\d+[a-z]{0,3}|[a-z]{1,5}-[a-z0-9]{1,5})$")
_FRACTION = re.compile(r"^([a-z]{0,4}\d{1,4})?/([a-z]{0,4}\d{1,4})$")


def _strip_marks(text: str) -> str:
    if text.isascii():
        return text  # nothing to decompose: most titles
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


_NOT_KEPT = re.compile(r"[^\w\s/#'$+.:\-&]|_")
r"""What folding turns into a space: anything but a letter or digit (``str.isalnum``, which is what
``\w`` matches besides ``_``), white space (``str.isspace``, ``\s``) and ``/#'$+.:-&``."""


@lru_cache(maxsize=65536)
def fold(text: str) -> str:
    """NFKC, accents off, case-folded, emoji and symbols to spaces: the comparable form."""
    text = _strip_marks(unicodedata.normalize("NFKC", text)).casefold()
    return " ".join(_NOT_KEPT.sub(" ", text).split())


@dataclass(frozen=True, slots=True)
class Tokens:
    """A tokenized title (see the module docstring)."""

    words: tuple[str, ...]
    numbers: frozenset[str]
    fractions: frozenset[str]
    years: tuple[int, ...]
    mint_marks: frozenset[str]
    graded: bool

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _clean(token: str) -> str:
    token = token.strip(".:'-+")
    if token.startswith("#"):
        token = token.lstrip("#").strip(".:'")
    if token.endswith("'s"):
        token = token[:-2]
    return token


@lru_cache(maxsize=65536)
def tokenize(title: str) -> Tokens:
    """Tokenize one title (see the module docstring). Answers are immutable and remembered: the
    resolver's steps and the catalog's index ask for the same titles again."""
    folded = fold(title)
    mint_marks: set[str] = set()

    def year_mint(m: re.Match[str]) -> str:
        mark = m.group(2) or m.group(3)
        mint_marks.add(mark)
        return f"{m.group(1)} mint:{mark}"

    folded = _YEAR_MINT.sub(year_mint, folded)
    raw = [t for t in _SPLIT.split(folded) if t]
    words: list[str] = []
    graded = False
    skip_grade = 0
    valued = False  # a grade phrase holds one grade value: PSA 9 78/97 keeps the 78
    for token in raw:
        if token.startswith("mint:"):
            words.append(token)
            continue
        word = _clean(token)
        if not word:
            continue
        if word in GRADERS or word == "cert#" or word == "cert":
            graded = True
            skip_grade = 4
            valued = False
            continue
        if skip_grade:
            value = not valued and bool(_GRADE_VALUE.match(word))
            subgrade = valued and bool(_SUBGRADE.match(word))
            if word in _LABEL_WORDS or value or subgrade or _CERT.match(word):
                valued = valued or value
                skip_grade -= 1
                continue
            skip_grade = 0
        if _CERT.match(word) or _ITEM_ID.match(word):
            continue
        words.append(word)
    numbers: set[str] = set()
    fractions: set[str] = set()
    years: list[int] = []
    for word in words:
        if _YEAR.match(word):
            years.append(int(word))
            numbers.add(word)
            continue
        fraction = _FRACTION.match(word)
        if fraction:
            numbers.add(word)
            fractions.add(fraction.group(2))
            if fraction.group(1):
                numbers.add(fraction.group(1))
            continue
        if _NUMBERISH.match(word):  # each of its forms holds a digit or a hyphen
            numbers.add(word)
    return Tokens(
        words=tuple(words),
        numbers=frozenset(numbers),
        fractions=frozenset(fractions),
        years=tuple(dict.fromkeys(years)),
        mint_marks=frozenset(mint_marks),
        graded=graded,
    )


def longest_phrases(
    words: tuple[str, ...], table: Mapping[tuple[str, ...], V], longest: int
) -> list[tuple[int, int, V]]:
    """The phrases of ``table`` (word tuples up to ``longest`` words) found in ``words``: at each
    position the longest, and none that lies inside a longer one found elsewhere, as
    ``(start, end, value)`` in title order.

    >>> names = {("base",): "Base", ("base", "set", "2"): "Base Set 2"}
    >>> longest_phrases(("base", "set", "2", "charizard"), names, 3)
    [(0, 3, 'Base Set 2')]
    """
    found: list[tuple[int, int, V]] = []
    reach = 0  # the furthest end of a phrase found at an earlier position
    for start in range(len(words)):
        for length in range(min(longest, len(words) - start), 0, -1):
            value = table.get(words[start : start + length])
            if value is not None:
                end = start + length
                # One phrase per position, the longest: only one that starts earlier and ends
                # here or later can hold it, and it is longer.
                if end > reach:
                    found.append((start, end, value))
                    reach = end
                break
    return found
