"""The sets of a card catalog, as titles name them: by their words, their code, their series.

Everything here is derived from the catalog's own fields, never from a list of aliases:

* a set's **words** are its name's, with the fillers titles add or drop (``set``, ``the``,
  ``&``…) left out and plurals folded, so ``Base Set`` names ``Base`` and ``Black Star Promo``
  reads like ``Black Star Promos``;
* its **code** (``identifiers.set_code``: ``BS``, ``LOT``, ``SHR``) counts as a name unless the
  catalog also uses that word in card names (``MEW``, ``EX``) or it is condition shorthand
  (``HP``); in parentheses (``(EX)``) it always counts;
* its **series** (``Sun & Moon``) and the series' initials (``SM``) are a family, not another
  set: ``Sun & Moon Lost Thunder`` names Lost Thunder;
* its **printed total** is the catalog's ``printed_total`` or the ``T`` of its own ``N/T``
  numbers; without either, how many numbered cards it holds (and its highest plain number)
  stands in, as weaker evidence;
* how much of a set's name a title holds is weighted by how few sets share each word
  (``Unleashed`` says more than ``HS``).

Example:
    >>> from rareindex_connectors.records import CatalogItem, Identifiers
    >>> def card(set_name, code, series):
    ...     return CatalogItem(external_id=set_name, title=set_name, category="tcg_card",
    ...         set_name=set_name, series=series, identifiers=Identifiers(set_code=code))
    >>> sets = CardSets([card("Base", "BS", "Base"), card("Base Set 2", "B2", "Base"),
    ...                  card("Lost Thunder", "LOT", "Sun & Moon"), card("Sun & Moon", "SUM",
    ...                  "Sun & Moon")])
    >>> sets.finish(vocabulary={"charizard"}, numbers={})
    >>> [s.name for s in sets.named(("base", "2", "charizard"))]
    ['Base Set 2']
    >>> [s.name for s in sets.named(("sun", "moon", "lost", "thunder"))]
    ['Lost Thunder']
    >>> [s.name for s in sets.coded({"lot"}, parenthesized=frozenset())]
    ['Lost Thunder']
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from rareindex_connectors.records import CatalogItem

from .text import fold, longest_phrases, tokenize

__all__ = ["FILLERS", "CardSet", "CardSets", "match_words", "set_key", "stem", "text_words"]

FILLERS = frozenset({"set", "the", "and", "&", "of", "series"})
"""Words a set name gains or loses in titles (``Base`` / ``Base Set``, ``Sun & Moon``)."""
CONDITION_WORDS = frozenset({"nm", "lp", "mp", "hp", "dmg", "ex", "vg", "gd", "mint", "psa"})
"""Condition shorthand that is never read as a bare set code."""
PARTIAL = 0.5
"""A set is evidenced by its words when the title holds this share of them (by weight)."""

_PARTS = re.compile(r"[-.]")


def stem(word: str) -> str:
    """A word with a plural ``s`` off (``promos`` -> ``promo``); short words stay as they are."""
    return word[:-1] if len(word) >= 5 and word.endswith("s") and not word.endswith("ss") else word


def match_words(words: Iterable[str]) -> tuple[str, ...]:
    """Words as names are compared: hyphens and dots split (``Charizard-GX``, ``LV.X``),
    apostrophes dropped (``Farfetch'd``), ``&``/``and`` gone; ``a/b`` fractions kept whole.

    >>> match_words(("charizard-gx", "farfetch'd", "&", "lv.x", "4/102"))
    ('charizard', 'gx', 'farfetchd', 'lv', 'x', '4/102')
    """
    out: list[str] = []
    for word in words:
        if "/" in word:
            out.append(word)
            continue
        for part in _PARTS.split(word.replace("'", "")):
            if part and part not in ("&", "and"):
                out.append(part)
    return tuple(out)


@lru_cache(maxsize=65536)
def text_words(text: str) -> tuple[str, ...]:
    """:func:`match_words` of a catalog field's text, cached: names and rarities repeat."""
    return match_words(tokenize(text).words)


def name_words(text: str | None) -> tuple[str, ...]:
    """A set or series name as title words are compared with it: fillers out, plurals folded."""
    if not text:
        return ()
    return tuple(stem(w) for w in text_words(text) if w not in FILLERS)


def code_of(text: str | None) -> str | None:
    """A set code's comparable form: folded, letters and digits only (``PR-SW`` -> ``prsw``)."""
    return re.sub(r"[^a-z0-9]", "", fold(text)) or None if text else None


def set_key(item: CatalogItem) -> tuple[str, str] | None:
    return (item.category, fold(item.set_name)) if item.set_name else None


@dataclass(slots=True)
class CardSet:
    """One set of the catalog (see the module docstring)."""

    name: str
    words: tuple[str, ...]
    code: str | None
    series_words: tuple[str, ...]
    series_initials: str | None
    total: int | None = None
    """The printed total the catalog states."""
    counted: frozenset[int] = frozenset()
    """Without a stated total: how many numbered cards it has, and its highest plain number."""

    def is_family(self, words: tuple[str, ...]) -> bool:
        """Whether ``words`` name this set's series (a family of sets), not a set."""
        return bool(words) and (
            words == self.series_words
            or (
                len(words) == 1
                and self.series_initials is not None
                and words[0] == self.series_initials
            )
        )


class CardSets:
    """Every set of a catalog, with the lookups titles need (see the module docstring)."""

    def __init__(self, items: Iterable[CatalogItem]):
        self.by_key: dict[tuple[str, str], CardSet] = {}
        self._names: dict[tuple[str, ...], list[CardSet]] = defaultdict(list)
        self._longest = 1
        totals: dict[tuple[str, str], set[int]] = defaultdict(set)
        for item in items:
            key = set_key(item)
            if key is None or item.set_name is None:
                continue
            card_set = self.by_key.get(key)
            if card_set is None:
                series = name_words(item.series)
                card_set = CardSet(
                    name=item.set_name,
                    words=name_words(item.set_name) or tuple(fold(item.set_name).split()),
                    code=code_of(item.identifiers.set_code),
                    series_words=series,
                    series_initials="".join(w[0] for w in series) if len(series) > 1 else None,
                )
                self.by_key[key] = card_set
                self._names[card_set.words].append(card_set)
                self._longest = max(self._longest, len(card_set.words))
            if item.printed_total and not card_set.total:
                card_set.total = item.printed_total
            elif item.number and "/" in item.number:
                digits = re.sub(r"\D", "", item.number.rsplit("/", 1)[1])
                if digits:
                    totals[key].add(int(digits))
        for key, found in totals.items():
            if self.by_key[key].total is None and len(found) == 1:
                self.by_key[key].total = found.pop()
        shared: dict[str, int] = defaultdict(int)
        self._by_word: dict[str, list[CardSet]] = defaultdict(list)
        for card_set in self.by_key.values():
            for word in set(card_set.words):
                shared[word] += 1
                self._by_word[word].append(card_set)
        self._weight = {word: 1.0 / n for word, n in shared.items()}
        self.all_codes = frozenset(s.code for s in self.by_key.values() if s.code)
        self._codes: dict[str, list[CardSet]] = defaultdict(list)
        self._bare_codes: dict[str, list[CardSet]] = defaultdict(list)

    def finish(self, vocabulary: set[str], numbers: Mapping[int, list[str]]) -> None:
        """Settle what needs every card: which codes stand alone (not a word of any card's
        name, ``vocabulary``), and, from each set's card ``numbers`` (by set ``id``), the counted
        total of the sets that state none."""
        for card_set in self.by_key.values():
            if card_set.code:
                self._codes[card_set.code].append(card_set)
                if card_set.code not in vocabulary and card_set.code not in CONDITION_WORDS:
                    self._bare_codes[card_set.code].append(card_set)
            found = numbers.get(id(card_set), [])
            if card_set.total is None and found:
                plain = [int(n) for n in found if n.isdigit()]
                card_set.counted = frozenset({len(found)} | ({max(plain)} if plain else set()))

    def get(self, item: CatalogItem) -> CardSet | None:
        key = set_key(item)
        return self.by_key.get(key) if key else None

    def named(self, words: tuple[str, ...]) -> list[CardSet]:
        """The sets whose whole name is in ``words`` (set words of a title), longest first,
        none inside a longer one, and none that is only the series of another named set."""
        kept = longest_phrases(words, self._names, self._longest)
        named = [s for _, _, sets in kept for s in sets]
        return [s for s in named if not any(o is not s and o.is_family(s.words) for o in named)]

    def coded(self, words: Iterable[str], *, parenthesized: frozenset[str]) -> list[CardSet]:
        """The sets whose code is one of ``words`` (bare codes only) or of ``parenthesized``."""
        found: list[CardSet] = []
        for word in words:
            found.extend(self._bare_codes.get(word, ()))
        for code in parenthesized:
            found.extend(self._codes.get(code, ()))
        return list({id(s): s for s in found}.values())

    def coverage(self, card_set: CardSet, words: frozenset[str]) -> float:
        """How much of ``card_set``'s name is in ``words``, each word weighted by rarity."""
        weight = self._weight
        total = sum(weight[w] for w in card_set.words)
        present = sum(weight[w] for w in card_set.words if w in words)
        return present / total if total else 0.0

    def partly_named(self, words: frozenset[str]) -> list[CardSet]:
        """The sets at least :data:`PARTIAL` of whose name is in ``words``."""
        seen = {id(s): s for w in words for s in self._by_word.get(w, ())}
        return [s for s in seen.values() if self.partly(s, words)]

    def partly(self, card_set: CardSet, words: frozenset[str]) -> float:
        """The share of ``card_set``'s name in ``words`` when it is enough to name the set —
        :data:`PARTIAL` of its weight and half its words (``Wizards`` alone does not name
        ``Wizards Black Star Promos``) — else 0."""
        held = sum(w in words for w in card_set.words)
        if 2 * held < len(card_set.words):
            return 0.0
        coverage = self.coverage(card_set, words)
        return coverage if coverage >= PARTIAL else 0.0
