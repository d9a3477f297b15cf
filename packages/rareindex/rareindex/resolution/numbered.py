"""Numbered cards as real listings title them: number, name, set and year weighed together.

Real card titles rarely follow a catalog's spelling. They print the number over the set's
printed total (``7/123``) or as ``#87``, ``No. 87``, ``008/064``, ``TG12/TG30``; they leave out
the year a third of the time; they name the set by its words (``Base Set`` for ``Base``), its
code (``BS``, ``(LOT)``) or its series (``Sun & Moon Lost Thunder``), or not at all. This module
resolves such titles against every catalog item that has a number (``tcg_card``), using only
the catalog's own fields — set names, set codes, printed totals, numbers, subjects, years — so a
catalog of any numbered game works without hand-written aliases.

For each candidate sharing a number with the title (or, in a title without a number, sharing
the set and the name), the evidence is:

* **number** — ``N/T`` / ``N of T`` / ``#N`` / ``No. N`` / an alphanumeric number (``SV107``)
  count fully, a bare ``N`` less; leading zeros and case never matter;
* **printed total** — ``T`` equal to the set's printed total (``printed_total``, or the ``T`` of
  the catalog's own ``N/T`` numbers) is evidence for the set; a different ``T`` refuses;
* **set** — the set's whole name in the title (the word ``set`` and ``&`` ignored, plurals
  folded), its code, or most of its distinctive words (weighted by how few sets share each);
  a title that names *another* set — not this one, not its series, not inside the card's
  name — refuses;
* **year** — optional; when the title has years, the set's year must be one of them;
* **name** — the subject's words in order, or each within one or two typos (rapidfuzz ratio);
  always required. A longer name that explains more of the title ranks higher
  (``Dark Charizard`` over ``Charizard``);
* the catalog item's parallel, edition and language words must be in the title, and a sibling's
  distinguishing phrase (``1st Edition``, ``Reverse Holo``) rules it out.

The best-supported candidate wins only when no other comes within :data:`TIE` of it; otherwise
the title stays unmatched as ``ambiguous`` with the candidates named. Every refusal is recorded
with its reason, for ``rareindex resolve --explain``.

Example:
    >>> from rareindex_connectors import CatalogItem
    >>> def card(eid, name, number, set_name, total, year):
    ...     return CatalogItem(external_id=eid, title=eid, category="tcg_card", subject=name,
    ...         number=number, set_name=set_name, printed_total=total, year=year)
    >>> cards = NumberedCards([card("b1-4", "Charizard", "4", "Base", 102, 1999),
    ...                        card("b4-4", "Charizard", "4", "Base Set 2", 130, 2000)])
    >>> cards.resolve("1999 Pokemon Charizard 4/102 Base Set Holo PSA 9").best.item.external_id
    'b1-4'
    >>> cards.resolve("Charizard 4/130 Base Set 2").best.item.external_id
    'b4-4'
    >>> outcome = cards.resolve("Charizard #4 holo")
    >>> outcome.best is None, [c.item.external_id for c in outcome.tied]
    (True, ['b1-4', 'b4-4'])
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from rareindex_connectors import CatalogItem

from .text import Tokens, fold, tokenize

__all__ = ["TIE", "Candidate", "CardSet", "NumberedCards", "Outcome", "Refusal", "norm_number"]

TIE = 1.0
"""Two candidates whose scores differ by less than this are equally good: ``ambiguous``."""
FILLERS = frozenset({"set", "the", "and", "&", "of", "series"})
"""Words a set name gains or loses in titles (``Base`` / ``Base Set``, ``Sun & Moon``)."""
CONDITION_WORDS = frozenset({"nm", "lp", "mp", "hp", "dmg", "ex", "vg", "gd", "mint", "psa"})
"""Condition shorthand that must never be read as a set code."""

FUZZY_WORD = 80.0
"""A name's word matches a title's word at this rapidfuzz ratio (one typo in five letters)."""
FUZZY_MIN_LENGTH = 5

_NUMBER = re.compile(r"^([a-z]{0,6})0*(\d{1,4})([a-z]{0,2})$")
_FRACTION = re.compile(r"^([a-z]{0,6}\d{1,4}[a-z]?)/([a-z]{0,6})(\d{1,4})$")
_ALNUM_NUMBER = re.compile(r"^(?:[a-z]{1,6}\d{1,4}[a-z]?|\d{1,4}[a-z])$")
_DIGITS = re.compile(r"^\d{1,4}$")
_HASHED = re.compile(
    r"(?:#|\bno\.?\s?|\bnumber\s|\bnum\.?\s?|\bcard\s#?)\s*([a-z]{0,6}\d{1,4}[a-z]?)\b"
)
_YEAR = re.compile(r"^(18[5-9]\d|19\d\d|20[0-3]\d)$")
_PARTS = re.compile(r"[-.]")
_PARENTHESIZED = re.compile(r"[(\[]\s*([A-Za-z0-9\-]{2,8})\s*[)\]]")

EVIDENCE = {
    "number": 3.0,
    "bare_number": 2.0,
    "total": 2.0,
    "counted_total": 1.5,
    "set_name": 3.0,
    "set_code": 2.5,
    "set_words": 1.5,
    "year": 1.0,
    "subject": 2.0,
    "subject_fuzzy": 1.5,
    "subject_word": 1.0,
}
"""What each kind of evidence is worth to a candidate's score."""


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


def _stem(word: str) -> str:
    return word[:-1] if len(word) >= 5 and word.endswith("s") and not word.endswith("ss") else word


def match_words(words: Iterable[str]) -> tuple[str, ...]:
    """Words as names are compared: hyphens and dots split (``Charizard-GX``, ``LV.X``),
    apostrophes dropped (``Farfetch'd``), ``&``/``and`` gone; ``a/b`` fractions kept whole."""
    out: list[str] = []
    for word in words:
        if "/" in word:
            out.append(word)
            continue
        for part in _PARTS.split(word.replace("'", "")):
            if part and part not in ("&", "and"):
                out.append(part)
    return tuple(out)


@dataclass(slots=True)
class CardSet:
    """One set of the catalog, as titles may name it."""

    name: str
    words: tuple[str, ...]
    """Its name's words, fillers out, plurals folded: what a title must contain to name it."""
    code: str | None
    total: int | None
    """The printed total the catalog states (``printed_total``, or its own ``N/T`` numbers)."""
    series_words: tuple[str, ...]
    counted: frozenset[int] = frozenset()
    """When the catalog states no total: how many numbered cards the set has and its highest
    plain number — what a title's ``T`` usually is. Weaker evidence, and no ground to refuse."""


@dataclass(frozen=True, slots=True)
class Card:
    """A numbered catalog item, ready for comparison."""

    item: CatalogItem
    key: str
    number: str | None
    card_set: CardSet | None
    year: int | None
    subject: tuple[str, ...]
    subject_compact: str
    required: frozenset[str]
    explained: frozenset[str]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why one candidate was ruled out."""

    item: CatalogItem
    reason: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate that passed every hard constraint, with its evidence."""

    card: Card
    score: float
    evidence: tuple[str, ...]

    @property
    def item(self) -> CatalogItem:
        return self.card.item


@dataclass(slots=True)
class Outcome:
    """What :meth:`NumberedCards.resolve` found for one title."""

    best: Candidate | None = None
    tied: list[Candidate] = field(default_factory=list)
    """The candidates within :data:`TIE` of the best, when there is no single best."""
    accepted: list[Candidate] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    skipped: int = 0
    """Candidates refused without a :class:`Refusal` (their total or year; not explaining)."""

    @property
    def considered(self) -> int:
        return len(self.accepted) + len(self.refused) + self.skipped


@dataclass(slots=True)
class _Title:
    """A title read for numbered matching."""

    tokens: Tokens
    words: tuple[str, ...]
    set_words: tuple[str, ...]
    word_set: frozenset[str]
    numbers: dict[str, str]
    """Normalized number -> ``strong`` or ``bare``."""
    totals: dict[str, set[int]]
    """Normalized number -> printed totals written beside it (``7/123``)."""
    named: list[tuple[int, int, list[CardSet]]]
    """Whole set names found, maximal: (start, end, sets), positions in ``set_words``."""
    phrases: list[frozenset[str]]
    """The catalog's distinguishing phrases (parallels, editions, languages) in the title."""


class NumberedCards:
    """Every numbered catalog item, indexed by number and by set (see the module docstring)."""

    def __init__(self, items: Iterable[tuple[CatalogItem, str]] | Iterable[CatalogItem]):
        self.by_number: dict[str, list[Card]] = defaultdict(list)
        self.by_set_subject: dict[tuple[int, str], list[Card]] = defaultdict(list)
        self.sets: dict[tuple[str, str], CardSet] = {}
        self._names: dict[tuple[str, ...], list[CardSet]] = defaultdict(list)
        self._longest = 1
        self._subject_vocabulary: set[str] = set()
        self._phrases: dict[tuple[str, ...], frozenset[str]] = {}
        self._count = 0
        pending: list[tuple[CatalogItem, str]] = []
        for entry in items:
            item, key = entry if isinstance(entry, tuple) else (entry, entry.external_id)
            if item.category == "tcg_card":
                pending.append((item, key))
        self._build_sets(item for item, _ in pending)
        for item, key in pending:
            self._add(item, key)
        self._count_sets()
        self._all_codes = frozenset(s.code for s in self.sets.values() if s.code)
        self._codes: dict[str, list[CardSet]] = defaultdict(list)
        for card_set in self.sets.values():
            code = card_set.code
            if code and code not in self._subject_vocabulary and code not in CONDITION_WORDS:
                self._codes[code].append(card_set)
        shared: dict[str, int] = defaultdict(int)
        for card_set in self.sets.values():
            for word in set(card_set.words):
                shared[word] += 1
        self._weight = {word: 1.0 / n for word, n in shared.items()}

    def __len__(self) -> int:
        return self._count

    def without_codes(self, title: str) -> str:
        """``title`` with the set codes written in parentheses cut out: ``Natu 87/214 (LOT)``
        names Lost Thunder, it is no lot."""

        def cut(match: re.Match[str]) -> str:
            code = re.sub(r"[^a-z0-9]", "", fold(match[1]))
            return " " if code in self._all_codes else match[0]

        return _PARENTHESIZED.sub(cut, title)

    # --- building --------------------------------------------------------------------------

    def _build_sets(self, items: Iterable[CatalogItem]) -> None:
        totals: dict[tuple[str, str], set[int]] = defaultdict(set)
        for item in items:
            if not item.set_name:
                continue
            key = (item.category, fold(item.set_name))
            card_set = self.sets.get(key)
            if card_set is None:
                words = tuple(
                    _stem(w) for w in match_words(tokenize(item.set_name).words) if w not in FILLERS
                )
                code = item.identifiers.set_code
                card_set = CardSet(
                    name=item.set_name,
                    words=words or tuple(fold(item.set_name).split()),
                    code=re.sub(r"[^a-z0-9]", "", fold(code)) or None if code else None,
                    total=item.printed_total,
                    series_words=tuple(
                        _stem(w)
                        for w in match_words(tokenize(item.series).words)
                        if w not in FILLERS
                    )
                    if item.series
                    else (),
                )
                self.sets[key] = card_set
                if card_set.words:
                    self._names[card_set.words].append(card_set)
                    self._longest = max(self._longest, len(card_set.words))
            if item.printed_total:
                card_set.total = card_set.total or item.printed_total
            elif item.number and "/" in item.number:
                denominator = item.number.rsplit("/", 1)[1]
                digits = re.sub(r"\D", "", denominator)
                if digits:
                    totals[key].add(int(digits))
        for key, found in totals.items():
            if self.sets[key].total is None and len(found) == 1:
                self.sets[key].total = found.pop()

    def _count_sets(self) -> None:
        numbered: dict[int, list[int]] = defaultdict(list)
        for cards in self.by_number.values():
            for card in cards:
                if card.card_set is not None and card.card_set.total is None and card.number:
                    plain = card.number.isdigit()
                    numbered[id(card.card_set)].append(int(card.number) if plain else 0)
        for card_set in self.sets.values():
            found = numbered.get(id(card_set))
            if found:
                card_set.counted = frozenset({len(found), max(found)} - {0})

    def _add(self, item: CatalogItem, key: str) -> None:
        number = item.number.split("/", 1)[0] if item.number else None
        subject = match_words(tokenize(item.subject or "").words) if item.subject else ()
        card_set = self.sets.get((item.category, fold(item.set_name))) if item.set_name else None
        required: set[str] = set()
        for text in (item.parallel, item.edition):
            words = match_words(tokenize(text).words) if text else ()
            required.update(words)
            if words:
                self._phrases.setdefault(words, frozenset(words))
        language = fold(item.language or "English")
        if language != "english":
            required.add(language)
            self._phrases.setdefault((language,), frozenset({language}))
        explained = set(required) | set(subject) | {language}
        card = Card(
            item=item,
            key=key,
            number=norm_number(number),
            card_set=card_set,
            year=item.year,
            subject=subject,
            subject_compact="".join(subject),
            required=frozenset(required),
            explained=frozenset(explained),
        )
        self._subject_vocabulary.update(subject)
        self._count += 1
        if card.number:
            self.by_number[card.number].append(card)
        if card_set is not None and subject:
            self.by_set_subject[id(card_set), subject[0]].append(card)

    # --- reading a title ---------------------------------------------------------------------

    def read(self, title: str, tokens: Tokens | None = None) -> _Title:
        """Read ``title`` into what matching needs: words, numbers, totals, named sets."""
        tokens = tokens or tokenize(title)
        words = match_words(tokens.words)
        hashed = {norm_number(m) for m in _HASHED.findall(fold(title))}
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
            if _ALNUM_NUMBER.match(word) or (_DIGITS.match(word) and norm_number(word) in hashed):
                number = norm_number(word)
                if number:
                    numbers[number] = "strong"
            elif _DIGITS.match(word) and not _YEAR.match(word):
                number = norm_number(word)
                if number:
                    numbers.setdefault(number, "bare")
        set_words = tuple(_stem(w) for w in words if w not in FILLERS)
        return _Title(
            tokens=tokens,
            words=words,
            set_words=set_words,
            word_set=frozenset(words) | frozenset(set_words),
            numbers=numbers,
            totals=totals,
            named=self._named_sets(set_words),
            phrases=self._phrases_in(words),
        )

    def _named_sets(self, words: tuple[str, ...]) -> list[tuple[int, int, list[CardSet]]]:
        found: list[tuple[int, int, list[CardSet]]] = []
        for start in range(len(words)):
            for length in range(min(self._longest, len(words) - start), 0, -1):
                sets = self._names.get(words[start : start + length])
                if sets:
                    found.append((start, start + length, sets))
                    break
        return [
            (a, b, s)
            for a, b, s in found
            if not any(a2 <= a and b <= b2 and (b2 - a2) > (b - a) for a2, b2, _ in found)
        ]

    # --- resolving ---------------------------------------------------------------------------

    def resolve(
        self, title: str, tokens: Tokens | None = None, *, explain: bool = False
    ) -> Outcome:
        """Weigh every candidate for ``title`` (see the module docstring). Without ``explain``,
        candidates refused by their printed total or year are only counted, not described."""
        read = self.read(title, tokens)
        outcome = Outcome()
        strong = [n for n, kind in read.numbers.items() if kind == "strong"]
        chosen = strong or list(read.numbers)
        seen: set[int] = set()
        pool: list[Card] = []
        for number in chosen:
            for card in self.by_number.get(number, ()):
                if id(card) not in seen:
                    seen.add(id(card))
                    pool.append(card)
        if not strong:  # no number to trust: the set and the name must carry it
            for card_set in self._sets_evidenced(read):
                for word in read.words:
                    for card in self.by_set_subject.get((id(card_set), word), ()):
                        if id(card) not in seen:
                            seen.add(id(card))
                            pool.append(card)
        years = read.tokens.years
        for card in pool:
            if not explain:  # the cheap refusals first: most candidates end here
                written = read.totals.get(card.number or "")
                total = card.card_set.total if card.card_set else None
                if (written and total is not None and total not in written) or (
                    years and card.year is not None and card.year not in years
                ):
                    outcome.skipped += 1
                    continue
            verdict = self._weigh(card, read)
            if isinstance(verdict, Refusal):
                outcome.refused.append(verdict)
            else:
                outcome.accepted.append(verdict)
        if not outcome.accepted:
            return outcome
        outcome.accepted.sort(key=lambda c: c.score, reverse=True)
        top = outcome.accepted[0]
        rivals = [c for c in outcome.accepted if top.score - c.score < TIE]
        if len(rivals) > 1:
            outcome.tied = rivals
        else:
            outcome.best = top
        return outcome

    def _sets_evidenced(self, read: _Title) -> list[CardSet]:
        sets = [s for _, _, found in read.named for s in found]
        for word in read.word_set:
            sets.extend(self._codes.get(word, ()))
        return list({id(s): s for s in sets}.values())

    def _weigh(self, card: Card, read: _Title) -> Candidate | Refusal:
        item = card.item
        evidence: list[str] = []
        score = 0.0
        kind = read.numbers.get(card.number or "")
        if kind is not None:
            evidence.append("number" if kind == "strong" else "bare_number")
            score += EVIDENCE[evidence[-1]]
        card_set = card.card_set
        written = read.totals.get(card.number or "")
        if written:
            if card_set is None or card_set.total is None:
                if card_set is not None and card_set.counted & written:
                    evidence.append("counted_total")
                    score += EVIDENCE["counted_total"]
            elif card_set.total in written:
                evidence.append("total")
                score += EVIDENCE["total"]
            else:
                return Refusal(
                    item, "wrong_total", f"{sorted(written)} is not the set's {card_set.total}"
                )
        years = read.tokens.years
        if years and card.year is not None:
            if card.year not in years:
                return Refusal(item, "wrong_year", f"title {list(years)}, card {card.year}")
            evidence.append("year")
            score += EVIDENCE["year"]
        missing = card.required - read.word_set
        if missing:
            return Refusal(item, "missing_words", " ".join(sorted(missing)))
        for phrase in read.phrases:
            if not phrase <= card.explained:
                return Refusal(item, "sibling_phrase", " ".join(sorted(phrase)))
        if card_set is not None:
            set_verdict = self._set_evidence(card, card_set, read)
            if isinstance(set_verdict, Refusal):
                return set_verdict
            if set_verdict is not None:
                evidence.append(set_verdict[0])
                score += set_verdict[1]
        subject = self._subject(card, read)
        if subject is None:
            return Refusal(item, "wrong_subject", item.subject or "")
        evidence.append(subject[0])
        score += subject[1]
        if kind is None and not any(e.startswith("set_") for e in evidence):
            return Refusal(item, "no_number", "neither its number nor its set is in the title")
        return Candidate(card, round(score, 3), tuple(evidence))

    def _phrases_in(self, words: Sequence[str]) -> list[frozenset[str]]:
        if not self._phrases:
            return []
        hits = []
        for start in range(len(words)):
            for length in range(1, min(6, len(words) - start) + 1):
                phrase = self._phrases.get(tuple(words[start : start + length]))
                if phrase is not None:
                    hits.append(phrase)
        return hits

    def _subject(self, card: Card, read: _Title) -> tuple[str, float] | None:
        subject = card.subject
        if not subject:
            return "subject", EVIDENCE["subject"]
        words = read.words
        n = len(subject)
        bonus = EVIDENCE["subject_word"] * n
        first = subject[0]
        for i in range(len(words) - n + 1):
            if words[i] == first and words[i : i + n] == subject:
                return "subject", EVIDENCE["subject"] + bonus
        if _compact_in(card.subject_compact, words):
            return "subject", EVIDENCE["subject"] + bonus
        # each word of the name in the title, or within a typo or two of one of its words
        used: set[int] = set()
        for word in subject:
            hit = _find_word(word, words, used)
            if hit is None:
                if len(word) == 1 and not word.isascii():
                    continue  # δ: often left out, and then it explains nothing
                return None
            used.add(hit)
        bonus = EVIDENCE["subject_word"] * len(used)
        return "subject_fuzzy", EVIDENCE["subject_fuzzy"] + bonus

    def _set_evidence(
        self, card: Card, card_set: CardSet, read: _Title
    ) -> tuple[str, float] | Refusal | None:
        named_here = False
        other: CardSet | None = None
        subject_words = set(card.subject)
        for _, _, sets in read.named:
            if any(s is card_set for s in sets):
                named_here = True
                continue
            words = sets[0].words
            if set(words) <= set(card_set.words) or set(words) <= subject_words:
                continue  # a part of this set's name, or of the card's own name
            if words == card_set.series_words or (card.number and words == (card.number,)):
                continue
            other = sets[0]
        if named_here:
            return "set_name", EVIDENCE["set_name"]
        if card_set.code and card_set.code in read.word_set and card_set.code in self._codes:
            return "set_code", EVIDENCE["set_code"]
        if other is not None:
            return Refusal(card.item, "wrong_set", f"the title names {other.name!r}")
        if card_set.words:
            weights = self._weight
            total = sum(weights.get(w, 1.0) for w in card_set.words)
            present = sum(weights.get(w, 1.0) for w in card_set.words if w in read.word_set)
            coverage = present / total if total else 0.0
            if coverage >= 0.5:
                return "set_words", round(EVIDENCE["set_words"] * coverage, 3)
        return None


def _compact_in(compact: str, words: Sequence[str]) -> bool:
    """Whether the name, spaces removed, is a run of whole title words (``LVX`` = ``LV.X``)."""
    if not compact:
        return False
    for i, word in enumerate(words):
        if not compact.startswith(word):
            continue
        joined = word
        j = i + 1
        while len(joined) < len(compact) and j < len(words):
            joined += words[j]
            j += 1
        if joined == compact:
            return True
    return False


def _find_word(word: str, words: Sequence[str], used: set[int]) -> int | None:
    for i, candidate in enumerate(words):
        if i not in used and candidate == word:
            return i
    if len(word) < FUZZY_MIN_LENGTH:
        return None  # Natu / Xatu, Onix / Onyx: a short name is spelled right or not at all
    choices = {i: w for i, w in enumerate(words) if i not in used and abs(len(w) - len(word)) <= 1}
    best = process.extractOne(word, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_WORD)
    return None if best is None else int(best[2])


def explain_refusal(refusal: Refusal) -> str:
    """One line for ``--explain``: the reason and its detail."""
    return f"{refusal.reason}: {refusal.detail}" if refusal.detail else refusal.reason
