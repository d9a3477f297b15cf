"""Entity resolution: a title (plus any identifiers) -> the catalog asset it names, or none.

Order of evidence:

1. **Identifiers** — UPC/EAN/JAN/ISBN, PCGS number, set code + collector number: a direct lookup.
2. **Canonical key** — the title's year, set (the longest set name found), number, subject,
   parallel, edition, language, print run and mint mark all agree with exactly one item of the
   block ``(category, year, set)``.
3. **Fuzzy** — as 2, but the subject matched only approximately (a typo): rapidfuzz
   ``partial_ratio`` over the folded title, accepted at 90 and above.
4. **Numbered cards** — when 2 and 3 find nothing for a card title, :mod:`.numbered` weighs
   number, printed total, set (name, code or words), year and name together, the way real
   listings write them (``Celebi 7/123 Mysterious Treasures``, ``Natu #87 Lost Thunder``).

A title flagged as a lot, reprint, custom or sealed product (:data:`NOT_ONE_ITEM`) matches no
step after the identifiers: it is ``not_one_item``, unless the flag goes away once the matched
item's name and set code are read out of it (``Iron Bundle``, ``(LOT)``).

Hard constraints never bend: the year, the card number and the print run must agree, a sibling's
distinguishing phrase in the title (``Sapphire``, ``Reverse Holo``, ``Jr.``, ``Japanese``) rules a
candidate out, and two equally good candidates leave the title **unmatched** (``ambiguous``)
rather than forcing a pick. The grade is read separately and becomes the variant, never part of
the asset. :meth:`Resolver.explain` says, for any title, which candidates were weighed and why
each was refused.

Example:
    >>> from rareindex_connectors.records import CatalogItem
    >>> zard = CatalogItem(external_id="pk1", title="1999 Pokémon Base Set Charizard 4/102 Holo",
    ...     category="tcg_card", year=1999, set_name="Base Set", number="4/102",
    ...     subject="Charizard", parallel="Holo")
    >>> r = Resolver.from_catalog([zard])
    >>> d = r.resolve("🔥 1999 Pokemon Base Set CHARIZARD 4/102 Holo PSA 9 MINT")
    >>> d.catalog_id, d.method, d.grading.grade
    ('pk1', 'canonical_key', '9')
    >>> r.resolve("Charizard 4/130 Base Set 2 Holo 1999").reject_reason
    'no_candidate'
    >>> r.resolve("Lot of 50 Pokemon cards incl Charizard").reject_reason
    'not_one_item'
    >>> r.resolve("x3 1999 Pokemon Base Set Charizard 4/102 Holo").reject_reason
    'not_one_item'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from rapidfuzz import fuzz

from rareindex_adapters import edition_of, lift_grading
from rareindex_connectors.records import CatalogItem, Grading, Identifiers

from .index import CatalogIndex, Entry
from .numbered import NumberedCards, Outcome
from .text import Tokens, tokenize

__all__ = ["THRESHOLD", "Decision", "Explanation", "MatchMethod", "RejectReason", "Resolver"]

MatchMethod = Literal["identifier", "canonical_key", "fuzzy"]
RejectReason = Literal[
    "no_year",
    "no_candidate",
    "ambiguous",
    "below_threshold",
    "identifier_conflict",
    "not_one_item",
]
NOT_ONE_ITEM = frozenset({"lot", "reprint", "custom", "sealed", "redemption"})
"""Title flags that say the listing is not one copy of one catalog item."""
THRESHOLD = 0.85
"""Decisions below this confidence stay unmatched."""
FUZZY_SUBJECT = 90.0


@dataclass(frozen=True, slots=True)
class Decision:
    """What resolution decided for one title. ``catalog_id`` is ``None`` when unmatched."""

    catalog_id: str | None
    asset_key: str | None
    method: MatchMethod | None
    confidence: float
    reject_reason: RejectReason | None = None
    grading: Grading | None = None
    flags: tuple[str, ...] = ()
    candidates: tuple[str, ...] = field(default=(), repr=False)
    """Catalog ids considered in the final round (for the operator's tooling)."""
    print_mark: str | None = None
    """The edition the title names (``1st Edition``, ``Shadowless``, ``Unlimited``) when the
    matched catalog item has none of its own: part of the variant, not of the asset."""

    @property
    def matched(self) -> bool:
        return self.catalog_id is not None


@dataclass(frozen=True, slots=True)
class Explanation:
    """A decision with what led to it: every candidate weighed by the numbered-card path."""

    decision: Decision
    path: str
    """Which step decided: ``identifier``, ``canonical_key`` or ``numbered``."""
    considered: tuple[tuple[str, str, str], ...]
    """(catalog id, verdict, detail) per candidate: ``accepted`` with its evidence and score,
    or the reason it was refused (``wrong_total``, ``wrong_year``, ``wrong_set``, …)."""
    tokens: Tokens | None = field(default=None, repr=False, compare=False)


class Resolver:
    """Resolves titles against one catalog. Build once, resolve many (thread-safe reads)."""

    def __init__(self, index: CatalogIndex):
        self.index = index
        self.numbered = NumberedCards((e.item, e.key) for e in index.entries)

    @classmethod
    def from_catalog(cls, items: Iterable[CatalogItem]) -> Resolver:
        return cls(CatalogIndex(items))

    def resolve_many(self, titles: Sequence[str]) -> list[Decision]:
        return [self.resolve(t) for t in titles]

    def resolve(
        self,
        title: str,
        *,
        category: str | None = None,
        identifiers: Identifiers | None = None,
    ) -> Decision:
        """The decision for one title (see the module docstring)."""
        return self._decide(title, category, identifiers, explain=False).decision

    def _with_print_mark(self, title: str, explained: Explanation) -> Explanation:
        """A match on an item that has no edition keeps the one the title names."""
        decision = explained.decision
        entry = self.index.by_key.get(decision.asset_key or "")
        if entry is None or entry.item.edition:
            return explained
        mark = edition_of(title)
        if mark is None:
            return explained
        return replace(explained, decision=replace(decision, print_mark=mark))

    def explain(
        self,
        title: str,
        *,
        category: str | None = None,
        identifiers: Identifiers | None = None,
    ) -> Explanation:
        """The decision for one title and every candidate weighed on the way to it."""
        return self._decide(title, category, identifiers, explain=True)

    def _decide(
        self,
        title: str,
        category: str | None,
        identifiers: Identifiers | None,
        *,
        explain: bool,
    ) -> Explanation:
        explained = self._weigh(title, category, identifiers, explain=explain)
        if explained.decision.matched:
            return self._with_print_mark(title, explained)
        return explained

    def _weigh(
        self,
        title: str,
        category: str | None,
        identifiers: Identifiers | None,
        *,
        explain: bool,
    ) -> Explanation:
        keyed = self._canonical(title, category, identifiers)
        decision = keyed.decision
        negative = bool(NOT_ONE_ITEM & set(decision.flags))
        not_one = Explanation(
            Decision(None, None, None, 0.0, "not_one_item", decision.grading, decision.flags),
            keyed.path,
            (),
        )
        if keyed.path == "identifier":
            return keyed
        if decision.matched:
            entry = self.index.by_key.get(decision.asset_key or "")
            if not negative or entry is None:
                return keyed
            flags = self.numbered.flags_without(title, entry.item)
            if NOT_ONE_ITEM & set(flags):
                return not_one
            return replace(keyed, decision=replace(decision, flags=flags))
        if category not in (None, "tcg_card") or not len(self.numbered):
            return not_one if negative else keyed
        outcome = self.numbered.resolve(title, keyed.tokens, explain=explain)
        if negative:
            # Iron Bundle, (LOT): the word that looked like a lot may be the card's name or
            # its set's code; the title is one card only if it reads so without them.
            if outcome.best is None:
                return replace(not_one, path="numbered")
            flags = self.numbered.flags_without(title, outcome.best.item)
            if NOT_ONE_ITEM & set(flags):
                return replace(not_one, path="numbered")
            decision = Decision(None, None, None, 0.0, None, decision.grading, flags)
        if not outcome.considered:
            return keyed
        numbered = _numbered_decision(outcome, decision.grading, decision.flags)
        considered: tuple[tuple[str, str, str], ...] = ()
        if explain:
            considered = tuple(
                (c.item.external_id, "accepted", f"score {c.score}: {', '.join(c.evidence)}")
                for c in outcome.accepted
            ) + tuple((r.item.external_id, r.reason, r.detail) for r in outcome.refused)
        return Explanation(numbered, "numbered", considered)

    def _canonical(
        self, title: str, category: str | None, identifiers: Identifiers | None
    ) -> Explanation:
        """Steps 1-3: identifiers, then the canonical key and its fuzzy subject."""
        facts = lift_grading(title)
        flags = tuple(str(f) for f in facts.flags)
        grading = facts.grading
        if identifiers is not None:
            decided = self._by_identifier(identifiers, category)
            if decided is not None:
                entries, method = decided
                if len(entries) == 1:
                    decided_id = _decision(entries[0], method, 0.99, grading, flags)
                    return Explanation(decided_id, "identifier", ())
                conflict = Decision(None, None, None, 0.0, "identifier_conflict", grading, flags)
                return Explanation(conflict, "identifier", ())
        tokens = tokenize(title)

        def keyed(decision: Decision) -> Explanation:
            return Explanation(decision, "canonical_key", (), tokens)

        def refused(
            reason: RejectReason, confidence: float = 0.0, ids: tuple[str, ...] = ()
        ) -> Explanation:
            return keyed(Decision(None, None, None, confidence, reason, grading, flags, ids))

        if tokens.years:
            candidates = self._candidates(tokens, category)
        else:  # only a TCG set + collector number (4/102) implies the year
            candidates = self._collector_numbered(tokens, category)
            if not candidates:
                return refused("no_year")
        scored: list[tuple[float, int, Entry, MatchMethod]] = []
        for entry in candidates:
            verdict = self._check(entry, tokens, year_known=bool(tokens.years))
            if verdict is not None:
                confidence, method = verdict
                scored.append(
                    (confidence, len(entry.required) + len(entry.subject_words), entry, method)
                )
        if not scored:
            return refused("no_candidate")
        scored.sort(key=lambda s: (s[1], s[0]), reverse=True)
        best = scored[0]
        ids = tuple(s[2].item.external_id for s in scored)
        if len(scored) > 1 and scored[1][1] == best[1]:
            return refused("ambiguous", best[0], ids)
        if best[0] < THRESHOLD:
            return refused("below_threshold", best[0], ids)
        return keyed(_decision(best[2], best[3], best[0], grading, flags, ids))

    def _by_identifier(
        self, ids: Identifiers, category: str | None
    ) -> tuple[list[Entry], MatchMethod] | None:
        for name in ("upc", "ean", "jan", "isbn", "pcgs_number"):
            value = getattr(ids, name)
            if value:
                found = self.index.by_identifier.get((name, str(value)))
                if found:
                    return _in_category(found, category), "identifier"
        if ids.set_code and ids.collector_number:
            key = f"{ids.set_code.casefold()}|{ids.collector_number}"
            found = self.index.by_identifier.get(("set_number", key))
            if found:
                return _in_category(found, category), "identifier"
        return None

    def _candidates(self, tokens: Tokens, category: str | None) -> list[Entry]:
        index = self.index
        seen: dict[str, Entry] = {}
        for set_words in index.find_sets(tokens.words):
            for cat in index.sets[set_words]:
                if category is not None and cat != category:
                    continue
                for year in tokens.years:
                    for entry in index.blocks.get((cat, year, set_words), ()):
                        seen.setdefault(entry.key, entry)
        if not seen:  # no set name found as written: fall back to year + number
            for year in tokens.years:
                for number in tokens.numbers:
                    for entry in index.by_number.get((year, number), ()):
                        if category is None or entry.category == category:
                            seen.setdefault(entry.key, entry)
        return list(seen.values())

    def _collector_numbered(self, tokens: Tokens, category: str | None) -> list[Entry]:
        if category not in (None, "tcg_card"):
            return []
        found: list[Entry] = []
        for set_words in self.index.find_sets(tokens.words):
            for number in tokens.numbers:
                found.extend(self.index.by_set_number.get((set_words, number), ()))
        return found

    def _check(
        self, entry: Entry, tokens: Tokens, *, year_known: bool = True
    ) -> tuple[float, MatchMethod] | None:
        """Hard constraints, then the subject; ``None`` when ``entry`` is ruled out."""
        if year_known and entry.year not in tokens.years:
            return None
        if entry.number and entry.number not in tokens.numbers:
            return None
        words = set(tokens.words)
        if not entry.required <= words:
            return None
        if tokens.mint_marks != ({entry.mint_mark} if entry.mint_mark else set()):
            return None
        serials = tokens.fractions - {entry.number_denominator}
        if entry.print_run:
            if entry.print_run not in tokens.fractions:
                return None
        elif serials:
            return None
        for phrase in self.index.phrases_in(entry.category, tokens.words):
            if not phrase <= entry.explained:
                return None
        exact = 0.97 if year_known else 0.92
        if not entry.needs_subject:
            return exact, "canonical_key"
        if _contains(tokens.words, entry.subject_words):
            return exact, "canonical_key"
        score = fuzz.partial_ratio(" ".join(entry.subject_words), tokens.text)
        if score >= FUZZY_SUBJECT:
            # 90..100 maps to 0.86..0.96 (a year-less title loses 0.05 and falls below threshold)
            return 0.86 + (score - FUZZY_SUBJECT) / 100 - (0.97 - exact), "fuzzy"
        return None


def _contains(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    first = phrase[0]
    return any(words[i] == first and words[i : i + n] == phrase for i in range(len(words) - n + 1))


def _numbered_decision(
    outcome: Outcome, grading: Grading | None, flags: tuple[str, ...]
) -> Decision:
    if outcome.best is not None:
        best = outcome.best
        method: MatchMethod = "fuzzy" if "subject_fuzzy" in best.evidence else "canonical_key"
        confidence = min(0.97, 0.8 + 0.015 * best.score)
        ids = tuple(c.item.external_id for c in outcome.accepted)
        decision = Decision(
            catalog_id=best.item.external_id,
            asset_key=best.card.key,
            method=method,
            confidence=round(confidence, 4),
            grading=grading,
            flags=flags,
            candidates=ids,
        )
        if confidence >= THRESHOLD:
            return decision
        return replace(
            decision, catalog_id=None, asset_key=None, method=None, reject_reason="below_threshold"
        )
    if outcome.tied:
        ids = tuple(c.item.external_id for c in outcome.tied)
        return Decision(None, None, None, 0.0, "ambiguous", grading, flags, ids)
    ids = tuple(r.item.external_id for r in outcome.refused)
    return Decision(None, None, None, 0.0, "no_candidate", grading, flags, ids)


def _in_category(entries: list[Entry], category: str | None) -> list[Entry]:
    return [e for e in entries if category is None or e.category == category] or entries


def _decision(
    entry: Entry,
    method: MatchMethod,
    confidence: float,
    grading: Grading | None,
    flags: tuple[str, ...],
    candidates: tuple[str, ...] = (),
) -> Decision:
    return Decision(
        catalog_id=entry.item.external_id,
        asset_key=entry.key,
        method=method,
        confidence=round(confidence, 4),
        grading=grading,
        flags=flags,
        candidates=candidates,
    )
