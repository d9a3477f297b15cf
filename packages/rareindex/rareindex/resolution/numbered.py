"""Numbered cards as real listings title them: number, name, set and year weighed together.

Real card titles rarely follow a catalog's spelling. They print the number over the set's
printed total (``7/123``) or as ``#87``, ``No. 87``, ``008/064``, ``TG12/TG30``; they leave out
the year a third of the time; they name the set by its words (``Base Set`` for ``Base``), its
code (``BS``, ``(LOT)``) or its series (``Sun & Moon Lost Thunder``), or not at all. This module
resolves such titles against every ``tcg_card`` of a catalog, using only the catalog's own fields
(set names, codes, series, printed totals, numbers, names, rarities, years; see
:mod:`.cardsets`), so a catalog of any numbered game works without hand-written aliases. How a
title is read — its numbers, totals and the sets it names — is :mod:`.card_titles`.

For each candidate sharing a number with the title (or, in a title without a number, sharing
the set and the name), the evidence is (points in :data:`EVIDENCE`):

* **number** — ``N/T``, ``N of T``, ``#N``, ``No. N`` or a number with letters (``SV107``)
  count fully, a bare ``N`` less; leading zeros and case never matter; a set code is no number;
* **printed total** — ``T`` equal to the set's printed total is evidence for the set; a
  different ``T`` refuses (``wrong_total``);
* **set** — its whole name in the title, its code, or most of its words; a title that names
  *another* set — not this one, not its series, not part of this set's or this card's name —
  refuses (``wrong_set``);
* **year** — optional; when the title has years, the set's must be one of them (``wrong_year``);
* **name** — always required (``wrong_subject``): the subject's words in order, possessives and
  plurals aside (``Erikas`` = ``Erika's``), or each word within a typo (rapidfuzz ratio ≥
  :data:`FUZZY_WORD`, words of :data:`FUZZY_MIN_LENGTH` letters or more). A longer name that
  explains more of the title ranks higher (``Dark Charizard`` over ``Charizard``);
* **rarity** — the words of the card's rarity in the title (``Holo``, ``Uncommon``) tell a holo
  from its non-holo twin; the holo of a finish (``Reverse Holo``) is no rarity, and words of
  the card's name or set (``GX``, ``White``) count for those, not for the rarity;
* the catalog item's parallel, edition and language words must be in the title, and a sibling's
  distinguishing phrase (``1st Edition``, ``Reverse Holo``) rules it out (``missing_words``,
  ``sibling_phrase``).

The best-supported candidate wins only when no other comes within :data:`TIE` of it; otherwise
the title stays unmatched as ``ambiguous``, the candidates named. Every refusal is recorded with
its reason, for ``rareindex resolve --explain``.

Example:
    >>> from rareindex_connectors.records import CatalogItem
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

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from rareindex_connectors.records import CatalogItem

from .card_titles import CardTitle, flags_without, norm_number, read_title
from .cardsets import CardSet, CardSets, stem, text_words
from .text import Tokens, fold

__all__ = ["EVIDENCE", "TIE", "Candidate", "NumberedCards", "Outcome", "Refusal"]

TIE = 0.5
"""Two candidates whose scores differ by less than this are equally good: ``ambiguous``."""
FUZZY_WORD = 80.0
"""A name's word matches a title's word at this rapidfuzz ratio (one typo in five letters)."""
FUZZY_MIN_LENGTH = 5
"""Shorter words must be spelled right: ``Natu`` is not ``Xatu``."""
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
    "rarity_word": 0.5,
}
"""What each kind of evidence is worth (``set_words`` scaled by the share of the name found;
``subject_word`` per word of the name, ``rarity_word`` per word of the rarity, two at most)."""


def _same(title_word: str, name_word: str) -> bool:
    """Equal, or one is the other with an ``s`` (``Erikas``, ``Kogas``: a possessive without
    its apostrophe; a plural)."""
    if title_word == name_word:
        return True
    if title_word.endswith("s"):
        return title_word[:-1] == name_word
    return name_word.endswith("s") and name_word[:-1] == title_word


@dataclass(frozen=True, slots=True)
class Card:
    """A numbered catalog item, ready for comparison."""

    item: CatalogItem
    key: str
    number: str | None
    card_set: CardSet | None
    year: int | None
    subject: tuple[str, ...]
    core: tuple[str, ...]
    """The name without the marks titles leave out (``δ``, ``☆``)."""
    weight: int
    """How many words of the name say something: the core's, but the brand's
    (``Pokémon Reversal``)."""
    subject_compact: str
    rarity: frozenset[str]
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


class NumberedCards:
    """Every numbered catalog item, indexed by number and by set (see the module docstring)."""

    def __init__(self, items: Iterable[tuple[CatalogItem, str]] | Iterable[CatalogItem]):
        pending: list[tuple[CatalogItem, str]] = []
        for entry in items:
            item, key = entry if isinstance(entry, tuple) else (entry, entry.external_id)
            if item.category == "tcg_card":
                pending.append((item, key))
        self.sets = CardSets(item for item, _ in pending)
        self.by_number: dict[str, list[Card]] = defaultdict(list)
        self._by_set: dict[int, list[Card]] = defaultdict(list)
        self._phrases: dict[tuple[str, ...], frozenset[str]] = {}
        self._brand = frozenset(
            w for item, _ in pending if item.brand for w in text_words(item.brand)
        )
        vocabulary: set[str] = set()
        for item, key in pending:
            card = self._card(item, key)
            vocabulary.update(card.subject)
            if card.number:
                self.by_number[card.number].append(card)
            if card.card_set is not None:
                self._by_set[id(card.card_set)].append(card)
        self.sets.finish(vocabulary, self._numbers_by_set())
        self._count = len(pending)

    def __len__(self) -> int:
        return self._count

    def _numbers_by_set(self) -> dict[int, list[str]]:
        """The card numbers of each set (by ``id``), for the sets that state no total."""
        return {
            set_id: [c.number for c in cards if c.number] for set_id, cards in self._by_set.items()
        }

    def _card(self, item: CatalogItem, key: str) -> Card:
        number = item.number.split("/", 1)[0] if item.number else None
        subject = text_words(item.subject) if item.subject else ()
        required: set[str] = set()
        for text in (item.parallel, item.edition):
            words = text_words(text) if text else ()
            required.update(words)
            if words:
                self._phrases.setdefault(words, frozenset(words))
        language = fold(item.language or "English")
        if language != "english":
            required.add(language)
            self._phrases.setdefault((language,), frozenset({language}))
        rarity = frozenset(text_words(item.rarity)) if item.rarity else frozenset()
        card_set = self.sets.get(item)
        # Rare Holo GX, Black White Rare: the GX of Reshiram-GX, the White of White Flare
        rarity -= set(subject) | set(card_set.words if card_set else ())
        return Card(
            item=item,
            key=key,
            number=norm_number(number),
            card_set=card_set,
            year=item.year,
            subject=subject,
            core=(core := tuple(w for w in subject if len(w) > 1 or w.isascii()) or subject),
            weight=max(1, sum(w not in self._brand for w in core)),
            subject_compact="".join(subject),
            rarity=rarity,
            required=frozenset(required),
            explained=frozenset(required | set(subject) | {language}),
        )

    def flags_without(self, title: str, item: CatalogItem) -> tuple[str, ...]:
        """The title flags of ``title`` read without ``item``'s name and its set's code (see
        :func:`.card_titles.flags_without`)."""
        card_set = self.sets.get(item)
        subject = text_words(item.subject) if item.subject else ()
        return flags_without(title, subject, card_set.code if card_set else None)

    def read(self, title: str, tokens: Tokens | None = None) -> CardTitle:
        """Read ``title`` against this catalog (see :func:`.card_titles.read_title`)."""
        return read_title(title, self.sets, self._phrases, tokens)

    # --- resolving ---------------------------------------------------------------------------

    def resolve(
        self, title: str, tokens: Tokens | None = None, *, explain: bool = False
    ) -> Outcome:
        """Weigh every candidate for ``title`` (see the module docstring). Without ``explain``,
        candidates refused by their printed total or year are only counted, not described."""
        read = self.read(title, tokens)
        outcome = Outcome()
        pool, fallback = self._pool(read)
        self._weigh_all(pool, read, outcome, explain)
        if not outcome.accepted and fallback:
            self._weigh_all(fallback, read, outcome, explain)
        if explain:
            outcome.refused.extend(self._other_numbers(read, pool))
            outcome.refused.sort(key=lambda r: -self._relevance(r.item, read))
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

    def _weigh_all(
        self, pool: list[Card], read: CardTitle, outcome: Outcome, explain: bool
    ) -> None:
        for card in pool:
            if not explain and _contradicted(card, read):  # cheap: most candidates end here
                outcome.skipped += 1
                continue
            verdict = self._weigh(card, read)
            if isinstance(verdict, Refusal):
                outcome.refused.append(verdict)
            else:
                outcome.accepted.append(verdict)

    def _relevance(self, item: CatalogItem, read: CardTitle) -> int:
        """How close a refused item came: its name in the title counts most, then its set."""
        card_set = self.sets.get(item)
        name = text_words(item.subject) if item.subject else ()
        named = card_set is not None and any(s is card_set for s in (*read.named, *read.coded))
        return 2 * bool(name and set(name) <= read.forms) + named

    def _other_numbers(self, read: CardTitle, pool: list[Card]) -> list[Refusal]:
        """For ``--explain``: the cards of the sets the title names that bear its name under
        another number than the title's."""
        if not read.numbers:
            return []
        seen = {id(c) for c in pool}
        written = ", ".join(sorted(read.numbers))
        refusals = []
        for card_set in {id(s): s for s in (*read.named, *read.coded)}.values():
            for card in self._by_set.get(id(card_set), ()):
                if id(card) not in seen and card.core and set(card.core) <= read.forms:
                    detail = f"the title's {written}, card {card.item.number}"
                    refusals.append(Refusal(card.item, "wrong_number", detail))
        return refusals

    def _pool(self, read: CardTitle) -> tuple[list[Card], list[Card]]:
        """The candidates, and those to weigh when none of them holds: every card with one of
        the title's numbers; without a number to trust, the cards of the sets the title names
        whose name starts with one of its words — then every other card of those sets (the
        name may be misspelt)."""
        strong = [n for n, kind in read.numbers.items() if kind == "strong"]
        pool = {id(c): c for n in (strong or read.numbers) for c in self.by_number.get(n, ())}
        if strong:
            return list(pool.values()), []
        sets = {id(s): s for s in (*read.named, *read.coded)}
        for card_set in self.sets.partly_named(read.word_set):
            sets.setdefault(id(card_set), card_set)
        fallback: dict[int, Card] = {}
        for set_id in sets:
            for card in self._by_set.get(set_id, ()):
                if card.subject and card.subject[0] in read.forms:
                    pool.setdefault(id(card), card)
                elif id(card) not in pool:
                    fallback[id(card)] = card
        return list(pool.values()), [c for k, c in fallback.items() if k not in pool]

    def _weigh(self, card: Card, read: CardTitle) -> Candidate | Refusal:
        item = card.item
        evidence: list[str] = []
        score = 0.0
        kind = read.numbers.get(card.number or "")
        if kind is not None:
            evidence.append("number" if kind == "strong" else "bare_number")
            score += EVIDENCE[evidence[-1]]
        contradiction = _contradicted(card, read)
        if contradiction is not None:
            return Refusal(item, *contradiction)
        card_set = card.card_set
        written = read.totals.get(card.number or "")
        if written and card_set is not None:
            if card_set.total in written:
                evidence.append("total")
                score += EVIDENCE["total"]
            elif card_set.counted & written:
                evidence.append("counted_total")
                score += EVIDENCE["counted_total"]
        if read.tokens.years and card.year is not None:
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
        subject = _subject(card, read.words, read.forms, self._brand)
        if subject is None:
            return Refusal(item, "wrong_subject", item.subject or "")
        evidence.append(subject[0])
        score += subject[1]
        rarity = card.rarity & read.rarity_words
        if rarity:
            evidence.append("rarity")
            score += EVIDENCE["rarity_word"] * min(len(rarity), 2)
        if kind is None and not any(e.startswith("set_") for e in evidence):
            return Refusal(item, "no_number", "neither its number nor its set is in the title")
        return Candidate(card, round(score, 3), tuple(evidence))

    def _set_evidence(
        self, card: Card, card_set: CardSet, read: CardTitle
    ) -> tuple[str, float] | Refusal | None:
        if any(s is card_set for s in read.named):
            return "set_name", EVIDENCE["set_name"]
        if any(s is card_set for s in read.coded):
            return "set_code", EVIDENCE["set_code"]
        own = set(card_set.words)
        subject = set(card.subject) | {stem(w) for w in card.subject}
        for other in read.named:
            words = other.words
            if set(words) <= own or set(words) <= subject or card_set.is_family(words):
                continue  # a part of this set's or this card's name, or this set's series
            if card.number and words == (card.number,):
                continue  # the set "151" and card number 151
            return Refusal(card.item, "wrong_set", f"the title names {other.name!r}")
        for other in read.coded:
            code = other.code or ""
            if code in subject or card_set.is_family((code,)):
                continue
            return Refusal(card.item, "wrong_set", f"the title names {other.name!r} by its code")
        # the set's words the title holds besides the card's name and the year
        coverage = self.sets.partly(card_set, read.word_set - subject - read.year_words)
        if coverage:
            return "set_words", round(EVIDENCE["set_words"] * coverage, 3)
        return None


def _contradicted(card: Card, read: CardTitle) -> tuple[str, str] | None:
    """``(reason, detail)`` when the title's printed total or year rules ``card`` out: the
    cheapest refusals, tried first on every candidate."""
    written = read.totals.get(card.number or "")
    total = card.card_set.total if card.card_set else None
    if written and total is not None and total not in written:
        return "wrong_total", f"{sorted(written)} is not the set's {total}"
    years = read.tokens.years
    if years and card.year is not None and card.year not in years:
        return "wrong_year", f"title {list(years)}, card {card.year}"
    return None


def _subject(
    card: Card, words: Sequence[str], forms: frozenset[str], brand: frozenset[str]
) -> tuple[str, float] | None:
    """How the card's name is in the title: in order, as one run of letters (``LVX``), or word
    by word within a typo; ``None`` when it is not. Words of the brand explain nothing."""
    if not card.subject:
        return "subject", EVIDENCE["subject"]
    core = card.core
    n = len(core)
    bonus = EVIDENCE["subject_word"] * card.weight
    if all(v in forms or (v.endswith("s") and v[:-1] in forms) for v in core):
        for i in range(len(words) - n + 1):
            if all(_same(words[i + k], core[k]) for k in range(n)):
                return "subject", EVIDENCE["subject"] + bonus
    if _compact_in(card.subject_compact, words):
        return "subject", EVIDENCE["subject"] + bonus
    used: set[int] = set()
    told = 0
    for word in card.subject:
        hit = _find_word(word, words, used)
        if hit is None:
            if len(word) == 1 and not word.isascii():
                continue  # δ: often left out, and then it explains nothing
            return None
        used.add(hit)
        told += word not in brand
    return "subject_fuzzy", EVIDENCE["subject_fuzzy"] + EVIDENCE["subject_word"] * max(told, 1)


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
        if i not in used and _same(candidate, word):
            return i
    if len(word) < FUZZY_MIN_LENGTH:
        return None  # Natu / Xatu, Onix / Onyx: a short name is spelled right or not at all
    indices: list[int] = []
    choices: list[str] = []
    for i, candidate in enumerate(words):
        if i in used:
            continue
        for form in (candidate, candidate[:-1]) if candidate.endswith("s") else (candidate,):
            if abs(len(form) - len(word)) <= 1:  # the form as written, or without its 's
                indices.append(i)
                choices.append(form)
    best = process.extractOne(word, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_WORD)
    return None if best is None else indices[best[2]]
