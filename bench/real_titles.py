"""Labelled listing titles for the real Pokémon TCG catalog, written as marketplaces write them.

    titles = real_titles(items, count=3000, seed=7)   # items: list(read_pokemon_tcg(path))

Every :class:`RealTitle` records the card id it names (``expected``; ``None`` when it names no
single card), the card it was built from (``source``) and the habits it uses (``habits``, keys of
:data:`HABITS`). The same catalog, count and seed give the same titles.

**The mix** (exact quotas, then shuffled): 3.4% each of ``wrong_year``, ``lot``, ``proxy``,
``sealed`` and ``ambiguous`` titles (expected ``None``), the rest (83%) name one card. A named
title that the catalog cannot pin to one card (see below) also becomes ``ambiguous``.

**Which cards**: 30% from the WOTC-era sets (1999-2003), 8% with a letter in the number
(``TG12``, ``SV49``, ``H23``, ``SWSH020``), 4% with a possessive name (``Brock's Onix``), the rest
uniformly. Cards whose catalog number is not the number they print are never the target (but stay
in the catalog as confusers): the ``88a``/``98b`` alternates and the cards they alternate with,
Celebrations: Classic Collection (``15_A1``), Unown ``A``, ``!`` and ``?``.

**A named title** picks, for its card:

- a number form: ``N/T`` with ``T`` the set's printed total (``zero_padded`` ``008/064``: half the
  time when ``T`` has 3 digits, 1 in 10 otherwise), ``N of T``, ``#N``, ``No. N``, ``N`` alone
  (right after the name, never beside a year or a set name that starts with a digit), or none;
  letter numbers as printed (``TG12/TG30``, ``SV49/SV94`` when every card of the set has the
  prefix; ``H23``, ``#SWSH020`` otherwise); Black Star promos never print a total;
- the year: present 2/3 of the time;
- the set: full name, name + ``Set`` (one-word names: ``Base Set``), the ptcgo code (``BS``,
  ``(LOT)``), series + name (``Sun & Moon Lost Thunder``), or none (only with ``N/T``/``N of T``);
- marks: edition (``1st Edition``, ``Shadowless``, ``Unlimited``; the 1999-2000 sets that had
  them), rarity words from the card's rarity (``Holo Rare``, ``Common``, ``Reverse Holo`` for
  non-holo cards of 2002 on, Neo aside), ``Pokemon``/``Pokémon``/``PKMN``/``TCG``, ``WOTC``
  (WOTC sets), ``English``;
- the name: exact, ALL CAPS or lower case (sometimes the whole title), one typo in a word of >= 6
  letters (swap, drop or double an inner letter; never another card's name), punctuation variants
  (``Farfetchd``, ``Mr Mime``, ``Nidoran F``, ``Pokemon``, ``Charizard GX``, ``Umbreon Gold
  Star``), possessives (``Brocks Onix``, ``Brock Onix``);
- extras: a grade (``PSA 10 GEM MINT``, ``BGS 9.5``, ``CGC 9``), sometimes with a cert number
  (``PSA 9 #12345678``), or a raw condition (``NM``, ``LP``, ``HP/Damaged``), or a negated grade
  (``not PSA``: it still names the card); hype words (``L@@K``, ``MUST SEE``, ``INVEST``) and
  emoji; one of four block orders, or ``shuffled`` (name, number and set not in a natural order).

**Honest answers.** A title's evidence is its card's name, number, total, set and year, as far as
the title shows them, and what its marks imply (an edition mark: a set that had editions; ``WOTC``:
a WOTC set; rarity words: a card of that rarity, ``Reverse Holo`` also a holo rare). Every catalog
card that fits all of it counts: its folded name (case, accents and punctuation aside) is the
card's or the name as the title shows it (``Umbreon`` fits a title that drops the ``★`` of
``Umbreon ★``), and it has the same number (leading zeros and case aside), total, set (a ptcgo code
fits every set that shares it: ``HIF``) and year. When more than one card fits, the generator adds
evidence (the year, the set, the total, a number) until one does; if none is left to add,
``expected`` is ``None`` and the habit ``ambiguous``. ``wrong_year`` titles are complete titles
whose year is 2-6 years off, and no card fits them. ``ambiguous`` titles leave out the set
(``Charizard #4``) or the number (``Unown Neo Discovery``) so that at least two cards fit. ``lot``
(``Lot of 50 Pokemon cards incl Charizard``, ``Bulk 100x commons``, ``x4`` copies, two cards, a
complete set), ``proxy`` (proxies, customs, orica) and ``sealed`` (booster boxes, packs, ETBs,
blisters) name no single card.
"""

from __future__ import annotations

import itertools
import random
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rareindex_connectors.records import CatalogItem

__all__ = ["HABITS", "RealTitle", "real_titles"]

HABITS: dict[str, str] = {
    "n_over_t": "number as N/T (4/102, TG12/TG30)",
    "zero_padded": "N/T zero-padded (008/064)",
    "n_of_t": "number as N of T",
    "hash_n": "number as #N",
    "no_n": "number as No. N",
    "bare_n": "number alone after the name",
    "letter_number": "a number with letters (TG12, SV49, H23)",
    "no_number": "no number (name + set pin the card)",
    "year": "the release year",
    "no_year": "no year",
    "wrong_year": "a year 2-6 off (names no card)",
    "set_name": "the set's full name",
    "set_word": "one-word set name + Set (Base Set)",
    "set_code": "the set's ptcgo code (BS, (LOT))",
    "set_series": "series + set (Sun & Moon Lost Thunder)",
    "set_omitted": "no set",
    "edition": "1st Edition / Shadowless / Unlimited",
    "rarity": "rarity words (Holo Rare, Common, Reverse Holo)",
    "pokemon_word": "Pokemon / Pokémon / PKMN / TCG",
    "wotc": "WOTC",
    "english": "English",
    "caps": "ALL CAPS name (or title)",
    "lower": "lower-case name (or title)",
    "typo": "one typo in the name",
    "punctuation": "punctuation variant of the name",
    "possessive": "possessive written without the apostrophe",
    "grade": "a grade (PSA 10 GEM MINT, BGS 9.5)",
    "cert": "a cert number after the grade",
    "condition": "a raw condition (NM, LP, HP/Damaged)",
    "not_graded": "a negated grade (not PSA)",
    "hype": "hype words (L@@K, MUST SEE)",
    "emoji": "emoji",
    "shuffled": "name, number and set blocks reordered",
    "lot": "a lot, bulk or several copies",
    "proxy": "a proxy, custom or orica",
    "sealed": "sealed product",
    "ambiguous": "several cards fit the title",
}
STRATA = {"wotc": 30, "letter": 8, "possessive": 4, "any": 58}
"""Where target cards come from, by weight (see :attr:`Catalog.strata`)."""
NEGATIVE_SHARE = 0.034
"""Of the titles, each of wrong_year, lot, proxy, sealed and ambiguous."""

WOTC_SERIES = {"Base", "Gym", "Neo", "E-Card"}
WOTC_SETS = {"Southern Islands", "Legendary Collection", "Best of Game"}
EDITION_SETS = {"Base", "Jungle", "Fossil", "Team Rocket", "Gym Heroes", "Gym Challenge",
                "Neo Genesis"}  # fmt: skip
NOT_TARGET_SETS = {"Celebrations: Classic Collection"}
PLAIN_NUMBER = re.compile(r"([A-Za-z]*)(\d+)")
SYMBOLS = {"♀": " f ", "♂": " m ", "★": " star ", "δ": " delta ", "◇": " prism "}


def fold(text: str) -> str:
    """Case, accents, apostrophes and punctuation folded away: ``Farfetch'd`` -> ``farfetchd``."""
    for symbol, word in SYMBOLS.items():
        text = text.replace(symbol, word)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"['’]", "", text)
    return " ".join(re.sub(r"[^\w]+|_", " ", text).split())


def number_key(number: str) -> str:
    """``TG05`` -> ``tg5``, ``004`` -> ``4``: the number as compared."""
    m = PLAIN_NUMBER.fullmatch(number)
    return f"{m[1].lower()}{int(m[2])}" if m else number.lower()


@dataclass(frozen=True, slots=True)
class RealTitle:
    """One labelled title."""

    title: str
    expected: str | None
    """The card id the title names, or ``None`` when it names no single card."""
    habits: tuple[str, ...]
    source: str | None = None
    """The card the title was built from (also for negatives), for reading misses."""


@dataclass(frozen=True, slots=True)
class SetFacts:
    name: str
    year: int | None
    series: str | None
    total: int | None
    code: str | None
    prefix: str | None
    """The letters every card number of the set starts with (``TG``), if they all share some."""

    @property
    def promo(self) -> bool:
        return "Promos" in self.name

    @property
    def wotc(self) -> bool:
        return self.series in WOTC_SERIES or self.name in WOTC_SETS


@dataclass(slots=True)
class Plan:
    """What a named title shows of its card; the evidence is derived from it."""

    card: CatalogItem
    number: str = "n_over_t"
    padded: bool = False
    set_form: str = "set_name"
    year: int | None = None
    name: str = ""
    habits: list[str] = field(default_factory=list)
    marks: dict[str, str] = field(default_factory=dict)
    """Edition, rarity, grade, … blocks, chosen with the plan."""
    keep: list[Callable[[CatalogItem], bool]] = field(default_factory=list)
    """What the marks say about the card (``1st Edition``: a set that had one)."""


class Catalog:
    """The catalog as the generator asks it: which cards fit some evidence."""

    def __init__(self, items: Sequence[CatalogItem]):
        self.items = list(items)
        self.by_name: dict[str, list[CatalogItem]] = defaultdict(list)
        numbers: dict[str, list[str]] = defaultdict(list)
        first: dict[str, CatalogItem] = {}
        for item in self.items:
            self.by_name[fold(item.subject or "")].append(item)
            numbers[item.set_name or ""].append(item.number or "")
            first.setdefault(item.set_name or "", item)
        self.sets: dict[str, SetFacts] = {}
        self.codes: dict[str, set[str]] = defaultdict(set)
        for name, item in first.items():
            prefixes = {(PLAIN_NUMBER.fullmatch(n) or [None, None])[1] for n in numbers[name]}
            prefix = prefixes.pop() if len(prefixes) == 1 else None
            code = item.identifiers.set_code
            self.sets[name] = SetFacts(
                name, item.year, item.series, item.printed_total, code, prefix or None
            )
            if code:
                self.codes[code].add(name)
        groups: dict[tuple[str, str, str], int] = defaultdict(int)
        for item in self.items:
            groups[
                item.set_name or "", item.subject or "", re.sub(r"\D", "", item.number or "")
            ] += 1
        self.targets = [
            i
            for i in self.items
            if PLAIN_NUMBER.fullmatch(i.number or "")
            and i.set_name not in NOT_TARGET_SETS
            and groups[i.set_name or "", i.subject or "", re.sub(r"\D", "", i.number or "")] == 1
            and i.subject
        ]
        self.strata = {
            "wotc": [i for i in self.targets if self.sets[i.set_name or ""].wotc],
            "letter": [i for i in self.targets if not (i.number or "").isdigit()],
            "possessive": [i for i in self.targets if "'s " in (i.subject or "")],
            "any": self.targets,
        }

    def fits(
        self,
        names: Sequence[str],
        number: str | None,
        total: int | None,
        sets: set[str] | None,
        year: int | None,
        keep: Sequence[Callable[[CatalogItem], bool]] = (),
    ) -> list[CatalogItem]:
        """Every card that fits the evidence and whose folded name is one of ``names`` (the
        card's own name, and the name as the title shows it)."""
        runs = {fold(name) for name in names}
        out: dict[str, CatalogItem] = {}
        for run in runs:
            for item in self.by_name.get(run, ()):
                if number is not None and number_key(item.number or "") != number:
                    continue
                if total is not None and item.printed_total != total:
                    continue
                if sets is not None and item.set_name not in sets:
                    continue
                if year is not None and item.year != year:
                    continue
                if not all(f(item) for f in keep):
                    continue
                out[item.external_id] = item
        return list(out.values())


def real_titles(items: Sequence[CatalogItem], count: int, seed: int = 7) -> list[RealTitle]:
    """``count`` labelled titles for ``items`` (see the module)."""
    return Generator(Catalog(items), seed).titles(count)


class Generator:
    def __init__(self, catalog: Catalog, seed: int):
        self.catalog = catalog
        self.rng = random.Random(f"real-titles/{seed}")

    def titles(self, count: int) -> list[RealTitle]:
        each = round(count * NEGATIVE_SHARE)
        kinds = ["wrong_year", "lot", "proxy", "sealed", "ambiguous"]
        plan = [k for k in kinds for _ in range(each)][:count]
        plan += ["named"] * (count - len(plan))
        self.rng.shuffle(plan)
        make = {
            "named": self.named,
            "wrong_year": self.wrong_year,
            "ambiguous": self.ambiguous,
            "lot": self.lot,
            "proxy": self.proxy,
            "sealed": self.sealed,
        }
        return [make[kind]() for kind in plan]

    # -- cards ---------------------------------------------------------------------------------

    def card(self) -> CatalogItem:
        stratum = self.rng.choices(tuple(STRATA), weights=tuple(STRATA.values()))[0]
        return self.rng.choice(self.catalog.strata[stratum])

    def facts(self, card: CatalogItem) -> SetFacts:
        return self.catalog.sets[card.set_name or ""]

    # -- the plan of a named title ---------------------------------------------------------------

    def plan(self, card: CatalogItem) -> Plan:
        rng, facts = self.rng, self.facts(card)
        p = Plan(card)
        number = card.number or ""
        whole_prefix = bool(facts.prefix) and not facts.promo
        if facts.promo or (not number.isdigit() and not whole_prefix):
            forms, weights = ("hash_n", "no_n", "bare_n", "no_number"), (40, 15, 35, 10)
        else:
            forms = ("n_over_t", "n_of_t", "hash_n", "no_n", "bare_n", "no_number")
            weights = (52, 7, 15, 7, 9, 10) if number.isdigit() else (60, 0, 20, 0, 20, 0)
        p.number = rng.choices(forms, weights=weights)[0]
        if p.number == "n_over_t" and number.isdigit():
            p.padded = rng.random() < (0.5 if (facts.total or 0) >= 100 else 0.1)
        word = len(facts.name.split()) == 1
        series = (
            facts.series
            and facts.series not in ("Other", "POP", "NP", "Base")
            and not facts.name.startswith((facts.series, "HS"))
        )
        roll = rng.random()
        if roll < 0.12 and p.number in ("n_over_t", "n_of_t"):
            p.set_form = "set_omitted"
        elif roll < 0.30 and facts.code:
            p.set_form = "set_code"
        elif roll < 0.45 and series:
            p.set_form = "set_series"
        elif word and rng.random() < (0.85 if facts.name == "Base" else 0.6):
            p.set_form = "set_word"
        if p.number == "bare_n" and (
            facts.name[:1].isdigit() or (card.subject or "")[-1:].isdigit()
        ):
            p.number = "hash_n"
        if card.year and rng.random() < 2 / 3:
            p.year = card.year
        self.marks(p)
        return p

    def evidence(self, p: Plan, year: int | None = None) -> list[CatalogItem]:
        card, facts = p.card, self.facts(p.card)
        number = None if p.number == "no_number" else number_key(card.number or "")
        total = card.printed_total if p.number in ("n_over_t", "n_of_t") else None
        sets: set[str] | None
        if p.set_form == "set_omitted":
            sets = None
        elif p.set_form == "set_code":
            sets = self.catalog.codes[facts.code or ""]
        else:
            sets = {facts.name}
        names = [card.subject or "", p.name] if p.name else [card.subject or ""]
        year = p.year if year is None else year
        return self.catalog.fits(names, number, total, sets, year, p.keep)

    def settle(self, p: Plan) -> bool:
        """Add evidence until exactly one card fits; whether one does."""
        card, facts = p.card, self.facts(p.card)
        while True:
            fits = self.evidence(p)
            if card not in fits:
                raise AssertionError(f"{card.external_id} does not fit its own title")
            if len(fits) == 1:
                return True
            if p.year is None and card.year:
                p.year = card.year
            elif p.set_form == "set_omitted":
                p.set_form = "set_name"
            elif p.number == "no_number":
                p.number = "hash_n"
            elif (
                p.number in ("hash_n", "no_n", "bare_n")
                and not facts.promo
                and ((card.number or "").isdigit() or facts.prefix)
            ):
                p.number = "n_over_t"
            else:
                return False

    # -- named, wrong year, ambiguous ----------------------------------------------------------

    def named(self) -> RealTitle:
        card = self.card()
        p = self.plan(card)
        self.style_name(p)
        unique = self.settle(p)
        title, habits = self.render(p)
        if not unique:
            return RealTitle(title, None, (*habits, "ambiguous"), card.external_id)
        return RealTitle(title, card.external_id, habits, card.external_id)

    def wrong_year(self) -> RealTitle:
        while True:
            card = self.card()
            if not card.year or re.search(r"\d{4}", card.set_name or ""):
                continue
            p = self.plan(card)
            if p.set_form == "set_omitted":
                p.set_form = "set_name"
            if p.number in ("no_number", "bare_n"):
                p.number = "hash_n"
            p.year = card.year
            self.style_name(p)
            if not self.settle(p):
                continue
            offset = self.rng.choice((-6, -5, -4, -3, -2, 2, 3, 4, 5, 6))
            wrong = card.year + offset
            if not 1996 <= wrong <= 2026 or self.evidence(p, year=wrong):
                continue
            p.year = wrong
            title, habits = self.render(p)
            habits = tuple("wrong_year" if h == "year" else h for h in habits)
            return RealTitle(title, None, habits, card.external_id)

    def ambiguous(self) -> RealTitle:
        while True:
            card = self.card()
            p = self.plan(card)
            if self.rng.random() < 0.7:
                p.set_form = "set_omitted"
                p.number = self.rng.choice(("hash_n", "no_n", "bare_n", "no_number"))
                if (card.subject or "")[-1:].isdigit() and p.number == "bare_n":
                    p.number = "hash_n"
            else:
                p.number = "no_number"
                if p.set_form == "set_omitted":
                    p.set_form = "set_name"
            if self.rng.random() < 0.5:
                p.year = None
            self.style_name(p)
            if len(self.evidence(p)) < 2:
                continue
            title, habits = self.render(p)
            return RealTitle(title, None, (*habits, "ambiguous"), card.external_id)

    # -- names -----------------------------------------------------------------------------------

    def style_name(self, p: Plan) -> None:
        rng, name = self.rng, p.card.subject or ""
        if "'s" in name and "_" not in name and rng.random() < 0.8:
            name = re.sub(r"'s\b", rng.choice(("s", "s", "")), name)
            p.habits.append("possessive")
        variant = self.punctuate(name) if rng.random() < 0.7 else None
        if variant and variant != name:
            name = variant
            p.habits.append("punctuation")
        if rng.random() < 0.12:
            typo = self.typo(name)
            if typo:
                name = typo
                p.habits.append("typo")
        p.name = name

    def punctuate(self, name: str) -> str | None:
        rng = self.rng
        rules: list[tuple[str, str]] = []
        for char, choices in (
            ("♀", (" F", " Female", " (F)")),
            ("♂", (" M", " Male", " (M)")),
            ("★", (" Gold Star", " Star", "")),
            ("δ", (" Delta Species", " Delta", "")),
            ("◇", (" Prism Star", " Prism", "")),
        ):
            if char in name:
                rules.append((f" {char}" if f" {char}" in name else char, rng.choice(choices)))
        for old, new in (("é", "e"), ("'", ""), (". ", " "), ("-", " "), ("[", ""), ("]", "")):
            if old in name:
                rules.append((old, new))
        if not rules:
            return None
        picked = [r for r in rules if rng.random() < 0.7] or [rng.choice(rules)]
        for old, new in picked:
            name = name.replace(old, new)
        return " ".join(name.split())

    def typo(self, name: str) -> str | None:
        rng, words = self.rng, name.split(" ")
        long = [i for i, w in enumerate(words) if w.isalpha() and len(w) >= 6]
        if not long:
            return None
        i = rng.choice(long)
        w = words[i]
        for _ in range(5):
            kind, at = rng.choice(("swap", "drop", "double")), rng.randrange(1, len(w) - 2)
            if kind == "swap" and w[at] != w[at + 1]:
                new = w[:at] + w[at + 1] + w[at] + w[at + 2 :]
            elif kind == "drop":
                new = w[:at] + w[at + 1 :]
            else:
                new = w[: at + 1] + w[at] + w[at + 1 :]
            candidate = " ".join([*words[:i], new, *words[i + 1 :]])
            if fold(candidate) != fold(name) and fold(candidate) not in self.catalog.by_name:
                return candidate
        return None

    # -- rendering -----------------------------------------------------------------------------

    def render(self, p: Plan) -> tuple[str, tuple[str, ...]]:
        rng, card, facts = self.rng, p.card, self.facts(p.card)
        habits = list(p.habits)
        name, number, total = p.name, card.number or "", facts.total
        roll = rng.random()
        if roll < 0.07:
            name, whole_case = name.upper(), "upper" if rng.random() < 0.4 else None
            habits.append("caps")
        elif roll < 0.12:
            name, whole_case = name.lower(), "lower" if rng.random() < 0.3 else None
            habits.append("lower")
        else:
            whole_case = None
        blocks: dict[str, str] = {"name": name}
        if not number.isdigit():
            habits.append("letter_number")
        if p.number == "n_over_t":
            if number.isdigit():
                n, t = (number.zfill(3), str(total).zfill(3)) if p.padded else (number, total)
                if p.padded:
                    habits.append("zero_padded")
            else:
                n, t = number, f"{facts.prefix}{total}"
            blocks["number"] = f"{n}/{t}"
        elif p.number == "n_of_t":
            blocks["number"] = f"{number} of {total}"
        elif p.number == "hash_n":
            blocks["number"] = f"#{number}"
        elif p.number == "no_n":
            blocks["number"] = f"No. {number}"
        elif p.number == "bare_n":
            blocks["name"] = f"{name} {number}"
        habits.append(p.number)
        set_name = facts.name
        if set_name.startswith("HS—") and rng.random() < 0.5:
            set_name = set_name.replace("HS—", rng.choice(("HS ", "HGSS ", "")))
        if p.set_form == "set_name":
            blocks["set"] = set_name
        elif p.set_form == "set_word":
            blocks["set"] = f"{set_name} Set"
        elif p.set_form == "set_code":
            code = facts.code or ""
            blocks["set"] = f"({code})" if rng.random() < 0.4 else code
        elif p.set_form == "set_series":
            blocks["set"] = f"{facts.series} {set_name}"
        habits.append(p.set_form)
        if p.year is not None:
            blocks["year"] = str(p.year)
            habits.append("year")
        else:
            habits.append("no_year")
        blocks.update(p.marks)
        order = self.order(blocks, p, habits)
        words = [blocks[k] for k in order if blocks.get(k)]
        if rng.random() < 0.10:
            hype = rng.sample(("L@@K", "RARE", "MUST SEE", "INVEST", "GOAT", "WOW", "GRAIL"), 2)
            words = [hype[0], *words, hype[1]] if rng.random() < 0.3 else [*words, *hype]
            habits.append("hype")
        if rng.random() < 0.08:
            emoji = rng.choice(("🔥", "💎", "⚡", "✨", "🔥🔥🔥"))
            words = [emoji, *words, emoji] if rng.random() < 0.6 else [*words, emoji]
            habits.append("emoji")
        title = " ".join(words)
        if whole_case == "upper":
            title = title.upper()
        elif whole_case == "lower":
            title = title.lower()
        return title, tuple(dict.fromkeys(habits))

    def marks(self, p: Plan) -> None:
        """Edition, rarity, brand, grade: the blocks besides name, number, set and year."""
        rng, card, facts = self.rng, p.card, self.facts(p.card)
        blocks, habits, sets = p.marks, p.habits, self.catalog.sets
        if facts.name in EDITION_SETS and rng.random() < 0.6:
            marks = ["1st Edition", "1st Ed", "Unlimited"] + ["Shadowless"] * (facts.name == "Base")
            blocks["edition"] = rng.choice(marks)
            habits.append("edition")
            edition = {"Base"} if blocks["edition"] == "Shadowless" else EDITION_SETS
            p.keep.append(lambda item: item.set_name in edition)
        words = rarity_words(card, facts)
        if words and rng.random() < 0.35:
            word = blocks["rarity"] = rng.choice(words)
            habits.append("rarity")
            p.keep.append(lambda item: rarity_fits(word, item, sets[item.set_name or ""]))
        if rng.random() < 0.3:
            blocks["pokemon"] = rng.choice(("Pokemon", "Pokémon", "PKMN", "TCG", "Pokemon TCG"))
            habits.append("pokemon_word")
        if facts.wotc and rng.random() < 0.3:
            blocks["wotc"] = rng.choice(("WOTC", "WotC", "Wizards"))
            habits.append("wotc")
            p.keep.append(lambda item: sets[item.set_name or ""].wotc)
        if rng.random() < 0.06:
            blocks["english"] = rng.choice(("English", "ENG", "EN"))
            habits.append("english")
        roll = rng.random()
        if roll < 0.30:
            blocks["grade"] = grade(rng)
            habits.append("grade")
            if rng.random() < 0.2:
                cert = str(rng.randrange(10_000_000, 99_999_999))
                blocks["grade"] += rng.choice((f" #{cert}", f" Cert {cert}", f" cert# {cert}"))
                habits.append("cert")
        elif roll < 0.42:
            blocks["grade"] = rng.choice(
                ("NM", "NM/M", "Near Mint", "LP", "Lightly Played", "MP", "HP/Damaged", "DMG")
            )
            habits.append("condition")
        elif roll < 0.48:
            blocks["grade"] = rng.choice(
                ("not PSA", "NOT PSA BGS CGC", "Raw (not graded)", "not graded", "no PSA")
            )
            habits.append("not_graded")

    def order(self, blocks: dict[str, str], p: Plan, habits: list[str]) -> list[str]:
        rng = self.rng
        templates = (
            ["year", "pokemon", "name", "number", "set", "rarity", "edition", "wotc", "english",
             "grade"],
            ["pokemon", "name", "number", "set", "year", "rarity", "edition", "english", "wotc",
             "grade"],
            ["year", "pokemon", "set", "name", "number", "edition", "rarity", "wotc", "english",
             "grade"],
            ["grade", "year", "set", "name", "number", "rarity", "edition", "pokemon", "wotc",
             "english"],
        )  # fmt: skip
        order = list(rng.choice(templates))
        if rng.random() >= 0.10:
            shown = [k for k in order if blocks.get(k)]
            at = shown.index("year") if "year" in shown else 0
            if p.number == "bare_n" and at and shown[at - 1] == "name":  # "Charizard 4 1999"
                order = ["year", *(k for k in order if k != "year")]
            return order
        core = [
            k
            for k in ("name", "number", "set", "year", "rarity", "edition", "grade")
            if k in blocks
        ]
        for _ in range(20):
            rng.shuffle(core)
            if self.readable(core, p) and not natural(core):
                habits.append("shuffled")
                rest = [k for k in order if k not in core]
                return [*rest[:1], *core, *rest[1:]]
        return order

    def readable(self, core: list[str], p: Plan) -> bool:
        """No bare number (kept with the name) beside a year; no number right after the set."""
        for a, b in itertools.pairwise(core):
            if p.number == "bare_n" and a == "name" and b == "year":
                return False
            if a == "set" and b == "number" and p.number == "n_of_t":
                return False
        return True

    # -- titles that name no card --------------------------------------------------------------

    def lot(self) -> RealTitle:
        rng = self.rng
        card, other = self.card(), self.card()
        facts = self.facts(card)
        n = rng.choice((10, 20, 25, 50, 100, 200, 500))
        one = f"{card.subject} {card.number}/{facts.total}"
        two = f"{other.subject} {other.number}/{self.facts(other).total}"
        title = rng.choice(
            (
                f"Lot of {n} Pokemon cards incl {card.subject}",
                f"Pokemon Card Lot {n} cards incl {card.subject} {other.subject} holos",
                f"Bulk {n}x commons uncommons {facts.name}",
                f"{n}x Pokemon bulk commons lot",
                f"{one} {facts.name} x{rng.choice((2, 3, 4, 10))}",
                f"{one} + {two} lot",
                f"{facts.name} complete set {facts.total}/{facts.total}",
                f"Pokemon mystery lot {n} cards guaranteed {card.subject}",
            )
        )
        return self.negative(title, "lot", card)

    def proxy(self) -> RealTitle:
        rng = self.rng
        card = self.card()
        facts = self.facts(card)
        title = rng.choice(
            (
                f"{card.subject} {card.number}/{facts.total} {facts.name} Proxy Card",
                f"Custom {card.subject} Orica Holo Card",
                f"{card.subject} Gold Metal Custom Card (fan made)",
                f"{card.subject} Full Art Orica not official",
                f"{card.subject} {facts.name} Replica Proxy",
                f"Fan Art {card.subject} Custom Card Holo",
            )
        )
        return self.negative(title, "proxy", card)

    def sealed(self) -> RealTitle:
        rng = self.rng
        card = self.card()
        facts = self.facts(card)
        year = f" {facts.year}" if facts.year and rng.random() < 0.4 else ""
        title = rng.choice(
            (
                f"{facts.name} Booster Box Sealed{year}",
                f"{facts.name} Booster Pack Sealed{year}",
                f"{facts.name} Elite Trainer Box ETB Sealed",
                f"{facts.name} Booster Bundle Sealed",
                f"{facts.name} 3 Pack Blister {card.subject} Promo Sealed",
                f"{facts.name} Theme Deck {card.subject} Sealed",
                f"Pokemon TCG {card.subject} Premium Collection Box Sealed",
            )
        )
        return self.negative(title, "sealed", card)

    def negative(self, title: str, kind: str, card: CatalogItem) -> RealTitle:
        habits = [kind]
        if self.rng.random() < 0.15 and not title.startswith("Pokemon"):
            title = f"Pokemon {title}"
            habits.append("pokemon_word")
        if self.rng.random() < 0.08:
            title = title.upper()
            habits.append("caps")
        if self.rng.random() < 0.10:
            title = f"{title} {self.rng.choice(('L@@K', 'MUST SEE', 'INVEST'))}"
            habits.append("hype")
        if self.rng.random() < 0.08:
            title = f"🔥 {title} 🔥"
            habits.append("emoji")
        return RealTitle(title, None, tuple(habits), card.external_id)


def natural(core: list[str]) -> bool:
    """Whether name, number and set sit side by side in a usual order."""
    seq = [k for k in core if k in ("name", "number", "set")]
    joined = " ".join(seq)
    spots = [core.index(k) for k in seq]
    adjacent = spots == list(range(spots[0], spots[0] + len(spots))) if spots else True
    return adjacent and joined in ("name number set", "set name number", "name set", "set name",
                                   "name number", "name")  # fmt: skip


def rarity_fits(word: str, card: CatalogItem, facts: SetFacts) -> bool:
    """Whether a title's rarity words fit ``card``: ``Reverse Holo`` fits a holo rare too (modern
    sets print those in reverse holo as well)."""
    if word == "Reverse Holo" and card.rarity == "Rare Holo":
        return "Reverse Holo" in rarity_words(card.model_copy(update={"rarity": "Rare"}), facts)
    return word in rarity_words(card, facts)


def rarity_words(card: CatalogItem, facts: SetFacts) -> list[str]:
    rarity = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", card.rarity or "")
    if not rarity:
        return []
    if rarity in ("Common", "Uncommon", "Rare"):
        words = [rarity] if rarity != "Rare" else ["Rare", "Non-Holo Rare"]
        if (facts.year or 0) >= 2002 and not facts.promo and facts.series != "Neo":
            words.append("Reverse Holo")
        return words
    if rarity.startswith("Rare Holo"):
        return ["Holo Rare", "Rare Holo", "Holo"]
    mapped = {
        "Rare Secret": "Secret Rare",
        "Rare Ultra": "Ultra Rare",
        "Rare Rainbow": "Rainbow Rare",
    }
    return [mapped.get(rarity, rarity)]


def grade(rng: random.Random) -> str:
    grader = rng.choice(("PSA", "PSA", "PSA", "BGS", "CGC", "SGC", "Beckett"))
    if grader == "PSA":
        value = rng.choice(("10", "10", "9", "9", "8", "7"))
        label = {"10": "GEM MINT", "9": "MINT", "8": "NM-MT", "7": "NM"}[value]
        return f"PSA {value} {label}" if rng.random() < 0.5 else f"PSA {value}"
    value = rng.choice(("10", "9.5", "9.5", "9", "8.5"))
    return f"{grader} {value}" + (" GEM MINT" if value == "9.5" and rng.random() < 0.4 else "")
