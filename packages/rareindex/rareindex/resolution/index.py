"""The catalog index: every catalog item tokenized once, with the lookups resolution needs.

* identifiers (UPC, EAN, JAN, ISBN, PCGS number, set code + collector number) -> item;
* a gazetteer of set names (folded word sequences) to find the set in a title;
* blocks by ``(category, year, set)`` and, as a fallback when no set name is found, by
  ``(year, number)``;
* per category, the *distinguishing phrases*: every set name, parallel, edition and language that
  tells two siblings apart (``Topps Chrome`` / ``Topps Chrome Sapphire``, ``Holo`` /
  ``Reverse Holo``, ``Jr.``). A title that contains one its candidate does not explain is not that
  candidate.

Building it for 50,000 items takes about a second; it is read-only afterwards.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from rareindex_connectors.records import CatalogItem

from .keys import asset_key
from .text import fold, longest_phrases, tokenize

__all__ = ["CatalogIndex", "Entry"]

SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})
MAX_PHRASE = 6


def _words(text: str | None) -> tuple[str, ...]:
    return tokenize(text).words if text else ()


def _number(text: str | None) -> str | None:
    if not text:
        return None
    words = tokenize(text).words
    return words[0] if len(words) == 1 else fold(text).lstrip("#") or None


@dataclass(frozen=True, slots=True)
class Entry:
    """One catalog item, tokenized for matching."""

    item: CatalogItem
    key: str
    category: str
    year: int | None
    set_words: tuple[str, ...]
    number: str | None
    subject_words: tuple[str, ...]
    required: frozenset[str]
    """Words that must all be in a title naming this item (set, parallel, edition, language)."""
    explained: frozenset[str]
    """Every word this item's fields account for."""
    print_run: str | None
    number_denominator: str | None
    mint_mark: str | None
    language: str

    @property
    def needs_subject(self) -> bool:
        return self.category in ("sports_card", "tcg_card") and bool(self.subject_words)

    @classmethod
    def of(cls, item: CatalogItem) -> Entry:
        set_words = _words(item.set_name)
        subject = _words(item.subject)
        parallel = _words(item.parallel)
        edition = _words(item.edition)
        language = fold(item.language or "English")
        required = set(set_words) | set(parallel) | set(edition)
        if language != "english":
            required.add(language)
        number = _number(item.number)
        denominator = number.rsplit("/", 1)[1] if number and "/" in number else None
        explained = set(required) | set(subject) | set(_words(item.brand)) | {language}
        explained |= set(tokenize(item.title).words)
        if number:
            explained.add(number)
        return cls(
            item=item,
            key=asset_key(item),
            category=item.category,
            year=item.year,
            set_words=set_words,
            number=number,
            subject_words=subject,
            required=frozenset(required),
            explained=frozenset(explained),
            print_run=str(item.print_run) if item.print_run else None,
            number_denominator=denominator,
            mint_mark=fold(item.mint_mark) if item.mint_mark else None,
            language=language,
        )


class CatalogIndex:
    """Lookups over a catalog (see the module docstring)."""

    def __init__(self, items: Iterable[CatalogItem]):
        self.entries: list[Entry] = []
        self.by_key: dict[str, Entry] = {}
        self.by_identifier: dict[tuple[str, str], list[Entry]] = defaultdict(list)
        self.sets: dict[tuple[str, ...], set[str]] = defaultdict(set)
        """Set-name words -> categories having that set."""
        self.blocks: dict[tuple[str, int | None, tuple[str, ...]], list[Entry]] = defaultdict(list)
        self.by_number: dict[tuple[int | None, str], list[Entry]] = defaultdict(list)
        self.by_set_number: dict[tuple[tuple[str, ...], str], list[Entry]] = defaultdict(list)
        """Set words + collector number (``4/102``) -> TCG cards: the numbering implies the year."""
        self.phrases: dict[str, dict[tuple[str, ...], frozenset[str]]] = defaultdict(dict)
        """Category -> distinguishing phrase -> its words."""
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, item: CatalogItem) -> Entry:
        entry = Entry.of(item)
        if entry.key in self.by_key:
            return self.by_key[entry.key]
        self.entries.append(entry)
        self.by_key[entry.key] = entry
        ids = item.identifiers
        for name in ("upc", "ean", "jan", "isbn", "pcgs_number"):
            value = getattr(ids, name)
            if value:
                self.by_identifier[name, str(value)].append(entry)
        if ids.set_code and ids.collector_number:
            self.by_identifier["set_number", f"{fold(ids.set_code)}|{ids.collector_number}"].append(
                entry
            )
        if entry.set_words:
            self.sets[entry.set_words].add(entry.category)
        self.blocks[entry.category, entry.year, entry.set_words].append(entry)
        if entry.number:
            self.by_number[entry.year, entry.number].append(entry)
            if entry.category == "tcg_card" and entry.number_denominator:
                self.by_set_number[entry.set_words, entry.number].append(entry)
        phrases = self.phrases[entry.category]
        for text in (item.set_name, item.parallel, item.edition):
            words = _words(text)
            if words and len(words) <= MAX_PHRASE:
                phrases.setdefault(words, frozenset(words))
        if entry.language != "english":
            phrases.setdefault((entry.language,), frozenset({entry.language}))
        for suffix in SUFFIXES & set(entry.subject_words):
            phrases.setdefault((suffix,), frozenset({suffix}))
        return entry

    def find_sets(self, words: tuple[str, ...]) -> list[tuple[str, ...]]:
        """Set names found in ``words``, longest first, skipping those inside a longer match."""
        kept = longest_phrases(words, self.sets, MAX_PHRASE)
        return [words[a:b] for a, b, _ in sorted(kept, key=lambda f: f[0] - f[1])]

    def phrases_in(self, category: str, words: tuple[str, ...]) -> list[frozenset[str]]:
        """The distinguishing phrases of ``category`` that occur in ``words``."""
        table = self.phrases.get(category)
        if not table:
            return []
        hits = []
        for start in range(len(words)):
            for length in range(1, min(MAX_PHRASE, len(words) - start) + 1):
                phrase = table.get(words[start : start + length])
                if phrase is not None:
                    hits.append(phrase)
        return hits
