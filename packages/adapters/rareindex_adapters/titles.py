"""Grades, raw condition and red flags lifted out of a listing title (docs/domain.md).

:func:`lift_grading` reads a title the way a careful buyer would:

* a **grade** is a grader token with a grade on that grader's scale right beside it, found by
  :func:`.grades.find_grades` (``PSA 10``, ``BGS 9.5``, ``9.8 CGC``, ``PCGS MS65``). ``#12``,
  ``/99``, years, certificate and item ids are never grades. A value off the scale (``PSA 9.5``,
  ``BGS 11``) gives no grade and ``invalid_grade``.
* a grade the title **negates or speculates on** (``NOT PSA``, ``PSA 10?``, ``PSA 10 candidate``,
  ``comp``, ``crossed from BGS 9.5``) does not describe this item: it gives no grade, the flag
  ``negated_grade``/``speculative_grade``, and ``negated=True``. Another, affirmative grade in the
  same title still counts (``PSA 10 crossed from BGS 9.5`` is a PSA 10, flagged).
* two different affirmative grades give no grade and ``multiple_grades``
  (docs/certificates.md#1-attribution-rules, rule 5).
* ``condition`` is read for raw items only (``None`` when a grade was found) and normalized to one
  of :data:`CONDITIONS`; grade label words (``PSA 10 GEM MINT``) are never read as a condition,
  nor are ``US Mint``, ``mint mark`` or Pokémon ``120 HP``.
* lots, reprints, customs, redemptions, sealed product and best-offer asks are flagged from the
  rules in ``_FLAG_RULES`` (docs/domain.md#title-noise-and-red-flags). ``Topps Tribute`` is a
  product line, not a tribute reprint; ``Lot #245:`` is an auction lot number, not a lot.

* the **edition** a card title names (``1st Edition``, ``Shadowless``, ``Unlimited``; see
  :data:`EDITIONS`), for a catalog that does not tell its print runs apart: it becomes part of
  the variant, so a 1st Edition copy is never priced with an Unlimited one.

``grading=None`` therefore means "no trustworthy grade", not "raw": a consumer building the raw
series must also drop titles with ``negated`` or any grade flag.

Grade strings: card grades without a trailing ``.0`` (``"10"``, ``"9.5"``, ``"9.8"``),
``"AUTH"``/``"AA"``; coins as ``MS65``, ``PR69``, ``XF45+``, ``AU Details``, ``GENUINE`` (``PF``
read as ``PR``, ``EF`` as ``XF``). Coin designations (``RD``, ``DCAM``; ``Ultra Cameo`` = ``DCAM``)
go in ``qualifier``, like PSA's ``OC``/``MK``. SGC's old 100-point grades (``SGC 96``) are kept
as written and flagged ``legacy_scale``: no confirmed conversion table exists yet.

Example:
    >>> facts = lift_grading("2018 Prizm Luka Doncic #280 PSA 8 OC NM-MT")
    >>> facts.grading.grader, facts.grading.grade, facts.grading.qualifier
    ('PSA', '8', 'OC')
    >>> lift_grading("Charizard Base Set 4/102 PSA 10 candidate NM").flags
    ('speculative_grade',)
    >>> lift_grading("Charizard Base Set 4/102 PSA 10 candidate NM").condition
    'NM'
    >>> lift_grading("Charizard 4/102 Base Set 1st Ed Holo PSA 9").edition
    '1st Edition'
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from rareindex_connectors.records import Grading

from ._ascii_twin import LoweredPrefilter, ascii_twin, printable_ascii
from .grades import GradeScan, find_grades

__all__ = ["CONDITIONS", "EDITIONS", "TitleFacts", "TitleFlag", "edition_of", "lift_grading"]


class TitleFlag(StrEnum):
    """What a title says about the item besides its grade: a closed vocabulary."""

    LOT = "lot"
    REPRINT = "reprint"
    CUSTOM = "custom"
    REDEMPTION = "redemption"
    SEALED = "sealed"
    BEST_OFFER = "best_offer"
    NEGATED_GRADE = "negated_grade"
    SPECULATIVE_GRADE = "speculative_grade"
    MULTIPLE_GRADES = "multiple_grades"
    INVALID_GRADE = "invalid_grade"
    OTHER_GRADER = "other_grader"
    LEGACY_SCALE = "legacy_scale"


@dataclass(frozen=True, slots=True)
class TitleFacts:
    """What :func:`lift_grading` found. ``flags`` are :class:`TitleFlag` values, in enum order."""

    grading: Grading | None = None
    condition: str | None = None
    is_lot: bool = False
    negated: bool = False
    flags: tuple[str, ...] = ()
    edition: str | None = None
    """The print run the title names, one of :data:`EDITIONS` (``1st Ed`` -> ``1st Edition``)."""


# --- data: flags and conditions -----------------------------------------------------------------

# One rule a row. A rule that starts at a word boundary is written ``\b…`` (a look-behind of
# its own goes after the ``\b``): the rules of a flag are compiled into one pattern that tests
# the boundary once per position, so inside a word the title is passed over at once.
_FLAG_RULES: tuple[tuple[TitleFlag, str], ...] = (
    (TitleFlag.LOT, r"\blot\b(?!\s*#)(?!\s*\d+\s*[:\-–])"),
    (TitleFlag.LOT, r"\b(?:qty|quantity)\s*[:x]?\s*(?:[2-9]|[1-9]\d+)\b"),
    (TitleFlag.LOT, r"\b(?<!booster\s)bundle\b"),
    (TitleFlag.LOT, r"\bset\s+of\s+\d+"),
    (TitleFlag.LOT, r"\b(?:complete|team|master)\s+set\b"),
    # x10, 10x; not the X of a card name (Pokémon LV.X 121/123)
    (TitleFlag.LOT, r"\b(?<![/#.])x\s?(?:[2-9]|[1-9]\d+)\b"),
    (TitleFlag.LOT, r"\b(?<![/#.])(?:[2-9]|[1-9]\d+)\s?x\b"),
    (TitleFlag.LOT, r"^\s*\(\s*(?:[2-9]|[1-9]\d{1,2})\s*\)"),
    (
        TitleFlag.LOT,
        r"\b(?<![/#.])(?:[2-9]|[1-9]\d{1,3})\)?\s*(?:cards|card|pcs|pieces|ct|count)\b",
    ),
    (TitleFlag.REPRINT, r"\bre-?prints?\b"),
    (TitleFlag.REPRINT, r"\b(?-i:RP\b)"),
    (TitleFlag.REPRINT, r"\bR/P\b"),
    (TitleFlag.REPRINT, r"\b(?<!topps\s)tribute\b"),
    (TitleFlag.REPRINT, r"\breplica\b"),
    (TitleFlag.REPRINT, r"\bnot\s+(?:real|authentic|original|genuine)\b"),
    (TitleFlag.REPRINT, r"\bunofficial\b"),
    (TitleFlag.REPRINT, r"\bnovelty\b"),
    (TitleFlag.REPRINT, r"\bcounterfeit\b"),
    (TitleFlag.CUSTOM, r"\bcustom(?:s|ized)?\b"),
    (TitleFlag.CUSTOM, r"\baceo\b"),
    (TitleFlag.CUSTOM, r"\bprox(?:y|ies)\b"),
    (TitleFlag.CUSTOM, r"\bfan[\s\-]*(?:made|art)\b"),
    (TitleFlag.CUSTOM, r"\borica\b"),
    (TitleFlag.CUSTOM, r"\bhand[\s\-]*made\b"),
    (TitleFlag.CUSTOM, r"\baltered\s+art\b"),
    (TitleFlag.REDEMPTION, r"\bredemptions?\b"),
    (TitleFlag.SEALED, r"\b(?:factory[\s\-]+)?sealed\b"),
    (TitleFlag.SEALED, r"\bunopened\b"),
    (TitleFlag.SEALED, r"\bETB\b"),
    (TitleFlag.SEALED, r"\belite\s+trainer\s+box\b"),
    (
        TitleFlag.SEALED,
        r"\b(?:booster|hobby|blaster|mega|hanger|wax|display|jumbo)\s+(?:box|pack|case)",
    ),
    (TitleFlag.SEALED, r"\bbooster\s+bundle\b"),
    (TitleFlag.SEALED, r"\bblaster\b"),
    (TitleFlag.BEST_OFFER, r"\bOBO\b"),
    (TitleFlag.BEST_OFFER, r"\bB/O\b"),
    (TitleFlag.BEST_OFFER, r"\bbest\s+offer\b"),
    (TitleFlag.BEST_OFFER, r"\bmake\s+(?:an?\s+)?offer\b"),
    (TitleFlag.BEST_OFFER, r"\boffers?\s+(?:welcome|accepted)\b"),
)


# The characters a flag's word-boundary rules can start with (case aside): a word starting with
# another one is passed over without trying each rule. A rule added above must start with one of
# its flag's (tests/unit/adapters/test_titles.py checks every rule against these).
_FLAG_STARTS: dict[TitleFlag, str] = {
    TitleFlag.LOT: "lqbsctmx0-9",
    TitleFlag.REPRINT: "rtnuc",
    TitleFlag.CUSTOM: "capfoh",
    TitleFlag.REDEMPTION: "r",
    TitleFlag.SEALED: "fsuebhmwdj",
    TitleFlag.BEST_OFFER: "obm",
}


def _flag_parts(rules: list[str], starts: str) -> tuple[list[str], list[str]]:
    """A flag's rules at a word boundary as one alternative, behind a test of the next character
    against ``starts`` (no ``\\b``: the caller puts one before it), and its other rules."""
    at_word = [rx.removeprefix(r"\b") for rx in rules if rx.startswith(r"\b")]
    others = [f"(?:{rx})" for rx in rules if not rx.startswith(r"\b")]
    guarded = [rf"(?=[{starts}])(?:" + "|".join(f"(?:{rx})" for rx in at_word) + ")"]
    return guarded if at_word else [], others


def _flag_pattern(parts: list[tuple[list[str], list[str]]]) -> re.Pattern[str]:
    """Rules as one pattern: every word-boundary alternative behind one ``\\b``, then the rest."""
    guarded = [g for at_word, _ in parts for g in at_word]
    others = [o for _, rest in parts for o in rest]
    head = [r"\b(?:" + "|".join(guarded) + ")"] if guarded else []
    return re.compile("|".join(head + others), re.IGNORECASE)


_FLAG_PARTS = {
    flag: _flag_parts([rx for f, rx in _FLAG_RULES if f == flag], _FLAG_STARTS[flag])
    for flag in dict.fromkeys(flag for flag, _ in _FLAG_RULES)
}
# A flag is set when any of its rules matches: a title is searched once per flag, and before
# that once for all flags together (most titles have none: one search instead of six).
_FLAG_RES = tuple((flag, _flag_pattern([parts])) for flag, parts in _FLAG_PARTS.items())
_ANY_FLAG_RE = _flag_pattern(list(_FLAG_PARTS.values()))
_FLAG_ORDER = {flag.value: i for i, flag in enumerate(TitleFlag)}

# (normalized condition, regex): at one position the first row wins, so longer forms come first.
_CONDITION_RULES: tuple[tuple[str, str], ...] = (
    ("Gem Mint", r"gem[\s\-]*(?:mint|mt)"),
    ("NM-MT", r"nm[\s\-/]*(?:mt|mint|m)\+?|near[\s\-]+mint[\s\-/]+mint"),
    ("NM", r"nm\+?|near[\s\-]*mint\+?(?:\s+or\s+better)?"),
    ("EX-MT", r"ex[\s\-/]*(?:mt|mint)|excellent[\s\-/]+mint"),
    ("EX", r"excellent|exc"),
    ("VG-EX", r"vg[\s\-/]*ex|very\s+good[\s\-/]+excellent"),
    ("VG", r"very\s+good|vg"),
    ("LP", r"lp|light(?:ly)?[\s\-]+play(?:ed)?"),
    ("MP", r"mp|moderately[\s\-]+play(?:ed)?|mod[\s\-]+play(?:ed)?"),
    ("HP", r"(?<!\d)(?<!\d\s)hp|heavily[\s\-]+play(?:ed)?|heavy[\s\-]+play(?:ed)?"),
    ("DMG", r"dmg|damaged"),
    ("Mint", r"mint"),
    ("Good", r"good\s+(?:condition|cond\.?|shape)"),
    ("Fair", r"fair\s+(?:condition|cond\.?|shape)"),
    ("Poor", r"poor(?:\s+(?:condition|cond\.?|shape))?"),
)
# (edition, regex): the most specific first; a 1st Edition card is also shadowless.
_EDITION_RULES: tuple[tuple[str, str], ...] = (
    ("1st Edition", r"\b(?:1st|first)[\s\-]*ed(?:ition|\.|\b)"),
    ("Shadowless", r"\bshadowless\b"),
    ("Unlimited", r"\bunlimited\b"),
)
EDITIONS: tuple[str, ...] = tuple(name for name, _ in _EDITION_RULES)
"""Every value :attr:`TitleFacts.edition` can take."""
_EDITION_RES = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in _EDITION_RULES)
# Any edition at all, in one search (most titles name none); then the first rule that matches.
# Every rule starts at a word boundary with one of these characters (test_titles checks them).
_EDITION_STARTS = "1fsu"
_ANY_EDITION_RE = re.compile(
    rf"\b(?=[{_EDITION_STARTS}])(?:"
    + "|".join(f"(?:{rx})" for rx in (rule.removeprefix(r"\b") for _, rule in _EDITION_RULES))
    + ")",
    re.IGNORECASE,
)

CONDITIONS: tuple[str, ...] = tuple(name for name, _ in _CONDITION_RULES)
"""Every value :attr:`TitleFacts.condition` can take."""

_CONDITION_STARTS = "gnevlmhdfp"  # the first letters of the rules above
_CONDITION_RE = re.compile(
    f"(?<![\\w])(?=[{_CONDITION_STARTS}])(?:"
    + "|".join(f"(?P<c{i}>{rx})" for i, (_, rx) in enumerate(_CONDITION_RULES))
    + ")(?![\\w])",
    re.IGNORECASE,
)
# Phrases with "mint" in them that are no condition (a mint is also where coins are struck).
_NOT_CONDITION = re.compile(
    r"\b(?:u\.?\s?s\.?|royal|royal\s+canadian|franklin|perth|paris|national|danbury|the)\s+mint\b"
    r"|\bmint\s+(?:marks?|sets?|state|years?|rolls?|proof\s+sets?)\b|\bmintage\b",
    re.IGNORECASE,
)

_MINT = re.compile("mint", re.IGNORECASE)  # in every phrase of _NOT_CONDITION


def _without_mint_phrases(text: str) -> str:
    """``text`` with the ``mint`` phrases that are no condition blanked (searched only in a text
    that has a ``mint`` at all)."""
    return _NOT_CONDITION.sub(" ", text) if _MINT.search(text) else text


# The searches every title goes through, also compiled for printable ASCII titles (_ascii_twin);
# the flags' as a prefilter on the lowered title (a third of the CPU of the search above).
_ANY_FLAG_ASCII = LoweredPrefilter(rx for _, rx in _FLAG_RULES)
_ANY_EDITION_ASCII = ascii_twin(_ANY_EDITION_RE)
_CONDITION_ASCII = ascii_twin(_CONDITION_RE)


@functools.lru_cache(maxsize=16_384)
def lift_grading(title: str) -> TitleFacts:
    """Grade, raw condition and flags of one listing title. Pure; never raises on odd input.

    Its answers are immutable and remembered (the 16,384 titles last asked): a title is read by its
    connector, by the quality rules and by the resolver, and the second and third reads are free.
    """
    scan = find_grades(unicodedata.normalize("NFKC", title))
    grading = scan.gradings[0] if len(scan.gradings) == 1 else None
    plain = printable_ascii(scan.masked)
    flagged = _ANY_FLAG_ASCII.admits(scan.masked) if plain else _ANY_FLAG_RE.search(scan.masked)
    if flagged or scan.flags or scan.negated or scan.speculative or len(scan.gradings) > 1:
        flag_names = _flags(scan, grading, flagged=bool(flagged))
    else:
        flag_names = ()  # most titles: no flag at all
    condition = None
    condition_re = _CONDITION_ASCII if plain else _CONDITION_RE
    if grading is None and (cm := condition_re.search(_without_mint_phrases(scan.masked))):
        condition = CONDITIONS[int(next(k for k, v in cm.groupdict().items() if v)[1:])]
    return TitleFacts(
        grading=grading,
        condition=condition,
        is_lot=TitleFlag.LOT in flag_names,
        negated=scan.negated or scan.speculative,
        flags=flag_names,
        edition=edition_of(scan.masked),
    )


def _flags(scan: GradeScan, grading: Grading | None, *, flagged: bool) -> tuple[str, ...]:
    """The title's flags, in enum order: the grade scan's and, where the prefilter let the title
    through (``flagged``), the rules'."""
    flags = set(scan.flags)
    if scan.negated:
        flags.add(TitleFlag.NEGATED_GRADE)
    if scan.speculative:
        flags.add(TitleFlag.SPECULATIVE_GRADE)
    if len(scan.gradings) > 1:
        flags.add(TitleFlag.MULTIPLE_GRADES)
    if grading is None or grading.grader != "OTHER":
        flags.discard(TitleFlag.OTHER_GRADER)
    if flagged:
        flags.update(flag for flag, rx in _FLAG_RES if rx.search(scan.masked))
    return tuple(str(f) for f in sorted(flags, key=_FLAG_ORDER.__getitem__))


def edition_of(title: str) -> str | None:
    """The edition a title names, one of :data:`EDITIONS`, or ``None``.

    >>> edition_of("1999 Base Set Charizard First Edition Holo"), edition_of("Charizard 4/102")
    ('1st Edition', None)
    """
    if not (_ANY_EDITION_ASCII if printable_ascii(title) else _ANY_EDITION_RE).search(title):
        return None
    return next((name for name, rx in _EDITION_RES if rx.search(title)), None)
