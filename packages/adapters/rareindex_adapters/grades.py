"""Grades on each grader's scale, found in a title next to their grader token
(docs/domain.md#grade-scales).

:func:`find_grades` is the part of :func:`.titles.lift_grading` that knows the scales: it finds
every grader token, reads the grade beside it (``PSA 10``, ``PSA GEM MT 10``, ``BGS 9.5``,
``9.8 CGC``, ``PCGS MS65``, ``MS-65 RD … NGC``), and marks each mention affirmative, negated
(``NOT PSA``, ``crossed from BGS 9.5``) or speculative (``PSA 10?``, ``candidate``, ``comp``).

Scales are data: PSA 1-10 with halves up to 8.5 (no 9.5) and qualifiers OC ST PD OF MK MC; BGS
halves 1-10 (Black Label only on a 10); CGC card halves plus comic steps (0.5, 1.8, 9.2 … 9.9) and
Pristine / Signature Series / Qualified / Restored labels; SGC halves (Pristine gold label on a 10);
coins on the Sheldon scale with ``+`` from 45 to 68, ``Details`` and ``Genuine``. A grade must be
1-3 digits right beside its token, so ``#12``, ``/99``, years, certs and item ids never are one.

Example:
    >>> scan = find_grades("PSA 10 crossed from BGS 9.5")
    >>> [g.grade for g in scan.gradings], scan.negated
    (['10'], True)
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, cast

from rareindex_connectors.records import Grader, Grading

__all__ = ["GradeScan", "find_grades"]

# --- data: graders and their scales -------------------------------------------------------------

Scale = Literal["psa", "bgs", "cgc", "sgc", "other", "sheldon"]

# (tokens, grader, scale): each token a regex starting with its first letter. Short tokens that
# are also words must be upper case: (?-i:...) around the whole token.
_UPPER_ONLY = ("TAG", "HGA", "ISA", "GMA", "KSA", "MNT", "AGS")
_GRADERS: tuple[tuple[tuple[str, ...], Grader, Scale], ...] = (
    ((r"PSA(?:\s*/\s*DNA|\s+DNA)?",), "PSA", "psa"),
    (("BGS", "Beckett"), "BGS", "bgs"),
    (("CGC",), "CGC", "cgc"),
    (("SGC",), "SGC", "sgc"),
    (("PCGS",), "PCGS", "sheldon"),
    (("NGC",), "NGC", "sheldon"),
    (("ANACS", "ICG"), "OTHER", "sheldon"),
    (("CSG", "BVG", "CBCS", "PGX", *(f"(?-i:{t})" for t in _UPPER_ONLY)), "OTHER", "other"),
)
# The characters a token can start with: the tokens' first letters in both cases and the letters
# re's IGNORECASE also takes for them (test_titles checks the set against re on every character).
_GRADER_FIRST = "ABCGHIKMNPSTabcghikmnpst\u0130\u0131\u017f\u212a"


def _after_first(token: str) -> str:
    """A token matched from its second character, a look-behind checking its first (in the
    token's own case rule): the pattern consumes the first character from ``_GRADER_FIRST``."""
    if token.startswith("(?-i:"):
        return f"(?-i:(?<={token[5]}){token[6:]}"
    return f"(?<={token[0]}){token[1:]}"


# Every grader's token in one pattern (one pass over a title instead of one per grader): the
# alternative that matched (``lastgroup`` g<i>) names the grader. The pattern starts with the set
# of first characters, so re scans for one of them instead of trying the pattern at every
# position; the look-behind every token shares (no word character or slash before it) is then
# tested once, before the alternatives.
_GRADER_RE = re.compile(
    rf"[{_GRADER_FIRST}](?<![\w/](?s:.))(?i:"
    + "|".join(
        f"(?P<g{i}>" + "|".join(map(_after_first, tokens)) + ")(?![a-z])"
        for i, (tokens, _, _) in enumerate(_GRADERS)
    )
    + ")"
)
_GRADER_OF: dict[str, tuple[Grader, Scale]] = {
    f"g{i}": (grader, scale) for i, (_, grader, scale) in enumerate(_GRADERS)
}


def _halves(low: str, high: str) -> frozenset[Decimal]:
    lo, hi = int(Decimal(low) * 2), int(Decimal(high) * 2)
    return frozenset(Decimal(n) / 2 for n in range(lo, hi + 1))


_CGC_COMICS = frozenset(Decimal(g) for g in ("0.5", "1.8", "9.2", "9.4", "9.6", "9.8", "9.9"))
_VALID: dict[Scale, frozenset[Decimal]] = {
    "psa": _halves("1", "8.5") | {Decimal(9), Decimal(10)},  # no PSA 9.5
    "bgs": _halves("1", "10"),
    "cgc": _halves("1", "10") | _CGC_COMICS,
    "sgc": _halves("1", "10"),
    "other": _halves("1", "10"),
}
# Label words that make a separate variant, per grader; any other label word is just consumed.
_LABELS: dict[str, tuple[tuple[str, str], ...]] = {
    "BGS": ((r"black\s*label", "Black Label"),),
    "CGC": (
        (r"pristine", "Pristine"),
        (r"perfect", "Perfect"),
        (r"signature\s*series|\bss\b|yellow\s*label", "Signature Series"),
        (r"qualified|green\s*label", "Qualified"),
        (r"restored|purple\s*label", "Restored"),
    ),
    "SGC": ((r"pristine|gold\s*label", "Pristine"),),
}
_LABEL_RES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    grader: tuple((re.compile(rx, re.IGNORECASE), name) for rx, name in labels)
    for grader, labels in _LABELS.items()
}
_ALTERED = re.compile(r"alter|^aa$", re.IGNORECASE)
_QUALIFIER_NOISE = re.compile(r"[\s()]")
_FILLER = (
    r"gem[\s\-]*(?:mint|mt)|mint\+?|mt|nm[\s\-/]*(?:mt|mint|m)\+?|nm\+?|ex[\s\-/]*(?:mt|mint)|ex"
    r"|vg[\s\-/]*ex|vg|good|fair|poor|graded|grade|pristine|perfect|black\s*label|gold\s*label"
    r"|signature\s*series|ss|yellow\s*label|qualified|green\s*label|restored|purple\s*label"
    r"|universal|blue\s*label|white\s*pages|(?:ow/w|off[\s\-]*white)\s*pages"
)
_SEP = r"[\s:\-–]*"
# PSA qualifiers, upper case only, and not "ST. Louis".
_QUALIFIER = r"\s*\(?\s*(?-i:OC|ST|PD|OF|MK|MC)(?![\w.])(?!\s+(?i:louis))\s*\)?"
_CARD_GRADE = re.compile(
    rf"""(?P<pre>(?:{_SEP}(?:{_FILLER})(?![\w+]))*){_SEP}
    (?:(?P<num>(?<![\d#/.])\d{{1,3}}(?:\.\d)?)(?![\d/]|\.\d)
      |(?P<auth>auth(?:entic)?(?:[\s\-]+altered)?|(?-i:AA))(?!\w)
      |(?P<label_only>(?<=\s)black\s*label))
    (?P<qual>{_QUALIFIER})?
    (?P<post>(?:{_SEP}(?:{_FILLER})(?![\w+]))*)
    (?P<qual2>{_QUALIFIER})?
    (?:[\s,\-–]*(?:auto(?:graph)?|sig(?:nature)?)\s*(?:grade\s*)?
       (?P<auto>10|[1-9](?:\.5)?)(?![\d/.]))?""",
    re.IGNORECASE | re.VERBOSE,
)
_POSTFIX_DECIMAL = re.compile(r"(?<![\d#/.])(\d{1,2}\.\d)[\s:\-–]*$")

_SHELDON_NUMBERS = frozenset({1, 2, 3, 4, 6, 8, 10, 12, 15, 20, 25, 30, 35, 40, 45, 50, 53, 55, 58})
_SHELDON_NUMBERS |= frozenset(range(60, 71))
_COIN_VALID: dict[str, frozenset[int]] = {
    "PO": frozenset({1}), "FR": frozenset({2}), "AG": frozenset({3}), "G": frozenset({4, 6}),
    "VG": frozenset({8, 10}), "F": frozenset({12, 15}), "VF": frozenset({20, 25, 30, 35}),
    "XF": frozenset({40, 45}), "AU": frozenset({50, 53, 55, 58}), "MS": frozenset(range(60, 71)),
    "PR": _SHELDON_NUMBERS, "SP": _SHELDON_NUMBERS,
}  # fmt: skip
_COIN_PREFIX = {"PF": "PR", "EF": "XF", "UNC": "MS"}
_DESIGNATIONS: tuple[tuple[str, str], ...] = (
    (r"DCAM|UCAM|ultra\s*cameo|deep\s*cameo", "DCAM"),
    (r"CAM|cameo", "CAM"),
    (r"DMPL|deep\s*mirror\s*prooflike", "DMPL"),
    (r"PL|prooflike", "PL"),
    (r"RD|RB|BN|FBL|FB|FS|FH|[56]FS", ""),  # "" = the token itself, upper-cased
)
_DESIG_RX = "|".join(rx for rx, _ in _DESIGNATIONS)
_DESIG_TOKEN = re.compile(_DESIG_RX, re.IGNORECASE)
_DESIG_RES = tuple((re.compile(rx, re.IGNORECASE), canon) for rx, canon in _DESIGNATIONS)
_SHELDON = re.compile(
    rf"""(?<![\w#/])
    (?:(?P<prefix>MS|PR|PF|SP|AU|XF|EF|VF|VG|AG|FR|PO|G|F)[\s\-]?(?P<num>\d{{1,2}})(?P<plus>\+)?
         (?![\d/.])(?:\s*(?P<det_n>details))?
      |(?P<det_prefix>MS|UNC|AU|XF|EF|VF|VG|F|G|AG|PR|PF)\s+(?P<det>details)
      |(?P<genuine>genuine))
    (?P<desig>(?:\s*(?:{_DESIG_RX})(?![\w]))*)(?![\w])""",
    re.IGNORECASE | re.VERBOSE,
)

# --- data: cues that a grade does not describe this item ----------------------------------------

# Each cue's words after a word boundary, and the letters they start with: the look-ahead passes
# over any other word at once (tests/unit/adapters/test_titles.py checks the letters).
_NEGATION_CUES = (
    r"(?:not|non|no|never)[\s\-]+(?:(?:a|an|graded|slabbed|by|in|real)\s+){0,2}"
    r"|cross(?:ed)?[\s\-]*(?:over)?\s+from\s+|crossover\s+from\s+"
    r"|(?:cracked|regraded|upgraded)\s+(?:out\s+)?(?:of|from)\s+"
)
_NEGATION_STARTS = "ncru"
_NEGATION_BEFORE = re.compile(
    rf"\b(?=[{_NEGATION_STARTS}])(?:{_NEGATION_CUES})$",
    re.IGNORECASE,
)
_SPECULATION_CUES = (
    r"potential|possible|possibly|future|likely|probable|easy|sure|guaranteed|comps?"
    r"|(?:could|should|would|will)\s+be(?:\s+an?)?|looks?\s+like(?:\s+an?)?|ready\s+for"
    r"|send\s+(?:it\s+)?to|submit\s+to"
)
_SPECULATION_STARTS = "pflesgcwr"
_SPECULATION_BEFORE = re.compile(
    rf"\b(?=[{_SPECULATION_STARTS}])(?:{_SPECULATION_CUES})\s+$",
    re.IGNORECASE,
)
_SPECULATION_AFTER = re.compile(
    r"^\s*(?:\(\s*)?(?:\?|(?:candidate|contender|comps?|worthy|ready|potential|quality|material)\b)",
    re.IGNORECASE,
)

# --- parsing ------------------------------------------------------------------------------------

Status = Literal["ok", "negated", "speculative"]


@dataclass(slots=True)
class _Mention:
    grader: Grader
    start: int  # where the grade (or the token, when bare) starts
    end: int
    grading: Grading | None
    status: Status = "ok"
    sheldon: bool = False


@functools.lru_cache(maxsize=4096)
def _grading(*fields: tuple[str, str | None]) -> Grading:
    """``Grading(**dict(fields))``, built once for each distinct set of fields: a handful of
    grades (PSA 10, BGS 9.5 …) come back in title after title, and a Grading is frozen, so one
    instance serves them all (the same keywords, hence the same model, as building it anew)."""
    return Grading(**dict(fields))


def _grade_str(value: Decimal) -> str:
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


# The groups of a _CARD_GRADE match that a card grade is read from (one ``Match.group`` call).
_CARD_GROUPS = ("pre", "post", "auth", "label_only", "num", "qual", "qual2", "auto")


def _card_grading(
    grader: Grader, scale: Scale, m: re.Match[str], flags: set[str]
) -> Grading | None:
    grading, raised = _card_reading(grader, scale, *m.group(*_CARD_GROUPS))
    if raised:
        flags.update(raised)
    return grading


@functools.lru_cache(maxsize=4096)
def _card_reading(
    grader: Grader,
    scale: Scale,
    pre: str | None,
    post: str | None,
    auth: str | None,
    label_only: str | None,
    num: str | None,
    qual: str | None,
    qual2: str | None,
    auto: str | None,
) -> tuple[Grading | None, tuple[str, ...]]:
    """What a card grade's words (the groups of a ``_CARD_GRADE`` match) read as: the grading,
    or None, and the flags they raise. A function of those words alone, so it is remembered: the
    same few grades (``PSA 10 GEM MT``) come back title after title, and reading one took about
    4 us of the ~23 us a title with one cost (the fake web's titles)."""
    words = f"{pre or ''} {post or ''}"
    label = next((name for rx, name in _LABEL_RES.get(grader, ()) if rx.search(words)), None)
    raised: tuple[str, ...] = ()
    if auth:
        grade = "AA" if _ALTERED.search(auth) else "AUTH"
    elif label_only:
        if grader != "BGS":
            return None, ()
        grade, label = "10", "Black Label"
    else:
        value = Decimal(cast(str, num))  # the caller reads a grade only with one of the three
        if scale == "sgc" and value >= 20 and value == value.to_integral_value() and value <= 100:
            raised = ("legacy_scale",)  # SGC's old 100-point scale: kept as it is written
        elif value not in _VALID[scale]:
            return None, ("invalid_grade",)
        grade = _grade_str(value)
    if label in {"Black Label", "Pristine", "Perfect"} and grade != "10":
        label = None  # these labels exist only on a 10
    qual = qual or qual2
    qualifier = _QUALIFIER_NOISE.sub("", qual) if qual and grader == "PSA" else None
    if grader == "OTHER":
        raised += ("other_grader",)
    grading = _grading(
        ("grader", grader),
        ("grade", grade),
        ("qualifier", qualifier),
        ("label_type", label),
        ("autograph_grade", auto),
    )
    return grading, raised


def _coin_grading(grader: Grader, m: re.Match[str]) -> Grading | None:
    if m["genuine"]:
        grade = "GENUINE"
    elif m["det"] or m["det_n"]:
        prefix = (m["det_prefix"] or m["prefix"]).upper()
        grade = f"{_COIN_PREFIX.get(prefix, prefix)} Details"
    else:
        prefix = _COIN_PREFIX.get(m["prefix"].upper(), m["prefix"].upper())
        number = int(m["num"])
        if number not in _COIN_VALID[prefix] or (m["plus"] and not 45 <= number <= 68):
            return None
        grade = f"{prefix}{number}{m['plus'] or ''}"
    designations: list[str] = []
    for token in _DESIG_TOKEN.findall(m["desig"] or ""):
        canon = next(c for rx, c in _DESIG_RES if rx.fullmatch(token))
        designations.append(canon or token.upper())
    qualifier = " ".join(dict.fromkeys(designations)) or None
    return _grading(("grader", grader), ("grade", grade), ("qualifier", qualifier))


def _mentions(text: str, flags: set[str]) -> list[_Mention]:
    found: list[_Mention] = []
    for tok in _GRADER_RE.finditer(text):
        grader, scale = _GRADER_OF[tok.lastgroup or ""]
        start, end, grading = tok.start(), tok.end(), None
        if scale == "sheldon":
            sm = _SHELDON.match(text, end + len(text[end:]) - len(text[end:].lstrip(" :-")))
            if sm and (g := _coin_grading(grader, sm)):
                end, grading = sm.end(), g
            elif sm:
                flags.add("invalid_grade")  # "PCGS MS72": a grade, off the scale
            if grader == "OTHER" and grading:
                flags.add("other_grader")
        else:
            cm = _CARD_GRADE.match(text, end)
            if cm and (cm["num"] or cm["auth"] or cm["label_only"]):
                end, grading = cm.end(), _card_grading(grader, scale, cm, flags)
            elif pm := _POSTFIX_DECIMAL.search(text[:start]):  # "9.8 CGC"
                value = Decimal(pm[1])
                if value in _VALID[scale]:
                    start = pm.start(1)
                    grading = _grading(("grader", grader), ("grade", _grade_str(value)))
        found.append(_Mention(grader, start, end, grading, sheldon=scale == "sheldon"))
    found.sort(key=lambda m: m.start)
    for m in found:
        if _NEGATION_BEFORE.search(text[max(0, m.start - 40) : m.start]):
            m.status = "negated"
        elif _SPECULATION_BEFORE.search(text[max(0, m.start - 30) : m.start]) or (
            _SPECULATION_AFTER.match(text[m.end : m.end + 20])
        ):
            m.status = "speculative"
    return found


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in spans:
        text = f"{text[:start]}{' ' * (end - start)}{text[end:]}"
    return text


def _loose_coin_grades(mentions: list[_Mention], masked: str) -> tuple[list[Grading], str]:
    """Attribute Sheldon grades elsewhere in the title (``MS65 … PCGS``) to the one coin grader."""
    bare = [m for m in mentions if m.sheldon and m.status == "ok" and m.grading is None]
    if len({m.grader for m in bare}) != 1:
        return [], masked
    gradings, spans = [], []
    for sm in _SHELDON.finditer(masked):
        if g := _coin_grading(bare[0].grader, sm):
            gradings.append(g)
            spans.append((sm.start(), sm.end()))
    return gradings, _mask(masked, spans)


@dataclass(frozen=True, slots=True)
class GradeScan:
    """What :func:`find_grades` found in one (NFKC-normalized) title.

    Attributes:
        gradings: the distinct affirmative grades (more than one: the title is ambiguous).
        negated: some grade is negated (``NOT PSA``, ``crossed from``).
        speculative: some grade is speculated on (``PSA 10?``, ``candidate``, ``comp``).
        flags: ``invalid_grade``, ``legacy_scale``, ``other_grader`` (:class:`.titles.TitleFlag`).
        masked: the title with every grade mention blanked out, for the condition and flag rules.
    """

    gradings: tuple[Grading, ...]
    negated: bool
    speculative: bool
    flags: frozenset[str]
    masked: str


_NO_FLAGS: frozenset[str] = frozenset()


def find_grades(text: str) -> GradeScan:
    """Every grade mention in ``text``, sorted into affirmative, negated and speculative."""
    flags: set[str] = set()
    mentions = _mentions(text, flags)
    if not mentions:  # no grader named: nothing found, nothing masked (most raw listings)
        return GradeScan(
            gradings=(), negated=False, speculative=False, flags=_NO_FLAGS, masked=text
        )
    masked = _mask(text, [(m.start, m.end) for m in mentions])
    loose, masked = _loose_coin_grades(mentions, masked)
    found: list[Grading] = []
    negated = speculative = False
    for m in mentions:
        if m.status == "ok":
            if m.grading:
                found.append(m.grading)
        elif m.status == "negated":
            negated = True
        else:
            speculative = True
    gradings = tuple(dict.fromkeys(found + loose))
    if flags and not any(g.grader == "OTHER" for g in gradings):
        flags.discard("other_grader")
    return GradeScan(
        gradings=gradings,
        negated=negated,
        speculative=speculative,
        flags=frozenset(flags) if flags else _NO_FLAGS,
        masked=masked,
    )
