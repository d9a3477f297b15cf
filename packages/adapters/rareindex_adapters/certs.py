"""Certificate numbers in a listing title (and its item specifics), attributed to a grader by
the rules of docs/certificates.md#1-attribution-rules.

:func:`extract_certs` is pure: a title (and optionally the listing's item specifics) in, a list of
:class:`CertMention` out. How a number becomes a mention:

1. **Shape.** A cert is one token of 7-10 digits, optionally ``-NNN`` (``12345678``,
   ``0012345678``, ``4321000-001``), optionally after ``#`` or glued to ``Cert#``. Anything else is
   never a cert: ``#`` + 1-4 digits is a card number, ``23/99`` and ``/99`` are serial numbering,
   four digits are a year, 12 digits an item id, 12-13 digits a UPC/EAN.
2. **Attribution.** A number within 4 tokens of a grader mention (``PSA|BGS|BECKETT|CGC|SGC|PCGS|
   NGC`` and the grade after it: ``PSA 10 GEM MINT``) belongs to the nearest one (a tie goes to
   the mention before the number: titles write grader, grade, cert). A number beside ``Cert#`` /
   ``cert`` belongs to the title's nearest grader mention at any distance.
3. **Negation and speculation.** When that mention does not describe this item (``NOT PSA``,
   ``crossed from BGS``, ``PSA 10?``, ``PSA 10 candidate``, ``BGS 9.5 comp``) the number is kept
   with ``grader=None`` and attribution ``negated``.
4. **Bare numbers.** No grader mention near and no ``Cert#``: attribution ``ambiguous``, with
   :attr:`CertMention.candidates` in order of prior probability by shape — never settled here.
5. **Two graders.** A title naming two graders still pairs each number with its nearest mention,
   and every mention of that title carries the flag ``two_graders``.

Item specifics (``Professional Grader`` + ``Certification Number``) are the seller's structured
statement and attribute their number outright; a title that gives the same number to another
grader makes it ``ambiguous`` (flag ``conflict``). A grader's lookup URL in a title
(``psacard.com/cert/12345678``) is the strongest signal of all.

Flags, a closed vocabulary: ``title``, ``specifics``, ``lookup_url``, ``cert_label``,
``two_graders``, ``negated``, ``speculative``, ``conflict``.

The index (``rareindex.certs``) and the connectors that read a cert from a title
(``card-market``) both read it here: one rule.

Example:
    >>> from rareindex_adapters import extract_certs
    >>> [m] = extract_certs("2018 Prizm Luka Doncic #280 PSA 10 GEM MINT #12345678")
    >>> m.number, m.grader, m.attribution
    ('12345678', 'PSA', 'attributed')
    >>> extract_certs("Charizard 4/102 NOT PSA 12345678")[0].attribution
    'negated'
    >>> extract_certs("Charizard 4/102 slab 0012345678")[0].candidates
    ('BGS', 'CGC', 'PSA')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from rareindex_connectors.records import Grader

__all__ = [
    "GRADERS",
    "NEAR",
    "Attribution",
    "CertMention",
    "candidates_for",
    "cert_key",
    "extract_certs",
    "parse_cert_number",
    "parse_grader",
]

GRADERS: tuple[str, ...] = tuple(g for g in get_args(Grader) if g != "OTHER")
"""The graders whose certificates RareIndex attributes, in :data:`Grader`'s order (every grader
but ``OTHER``; ``BECKETT`` is read as ``BGS``)."""

_GRADER_NAME = "|".join((*GRADERS, "BECKETT"))
"""A grader's token in a title: the graders and ``BECKETT`` (Beckett's name for its BGS slabs)."""

Attribution = Literal["attributed", "ambiguous", "negated"]

NEAR = 4
"""How many tokens from a grader mention a number may sit and still be its cert
(docs/certificates.md#1-attribution-rules)."""

_CERT = r"[0-9]{7,10}(?:-[0-9]{3})?"
r"""ASCII digits only: ``\d`` would also take Arabic-Indic and other scripts' digits, and no
grader numbers its certificates in them."""
_NUMBER = re.compile(rf"^#?({_CERT})$")
_LABELLED_NUMBER = re.compile(rf"^cert(?:ification)?(?:no\.?|#|:)*#?({_CERT})$", re.IGNORECASE)
_CERT_LABEL = re.compile(r"^cert(?:ification)?(?:no\.?|#|:)*$", re.IGNORECASE)
_GRADER_TOKEN = re.compile(
    rf"^({_GRADER_NAME})(?:/?DNA)?(?:[-:]?[0-9]{{1,2}}(?:\.[0-9])?)?\??$", re.IGNORECASE
)
_GRADE_VALUE = re.compile(
    r"^(?:[0-9]{1,2}(?:\.[0-9])?|(?:MS|PR|PF|SP|AU|XF|EF|VF|VG|AG|FR|PO|G|F)-?[0-9]{1,2}\+?)\??$",
    re.IGNORECASE,
)
_GRADE_WORD = re.compile(
    r"^(?:gem|mint\+?|mt|gem-?(?:mint|mt)|nm(?:[-/](?:mt|mint|m))?\+?|ex(?:[-/](?:mt|mint|nm))?\+?"
    r"|vg(?:[-/]ex)?\+?|good\+?|fair|poor|fr|pr|pristine|black|label|gold|perfect|auth(?:entic)?"
    r"|altered|dna|[du]?cam|cameo|ultra|deep|rd|rb|bn|d?mpl|pl|fbl?|fs|fh|oc|st|pd|of|mk|mc"
    r"|signature|series|ss|universal|qualified|restored|shield)\??$",
    re.IGNORECASE,
)
_STRIP = "\"'()[]{},;:.!*"
_NEGATORS = frozenset({"not", "non", "no", "never"})
_NEGATION_FILLER = frozenset({"a", "an", "graded", "slabbed", "by", "in", "real", "or", "and", "/"})
_FROM = frozenset({"from", "of"})
_FORMER = frozenset({"crossed", "cross", "crossover", "cracked", "regraded", "upgraded", "out"})
_SPECULATION_BEFORE = frozenset(
    {
        "potential", "possible", "possibly", "future", "likely", "probable", "easy", "sure",
        "guaranteed", "comp", "comps",
    }
)  # fmt: skip
_SPECULATION_PAIRS = frozenset(
    {
        ("could", "be"), ("should", "be"), ("would", "be"), ("will", "be"), ("looks", "like"),
        ("look", "like"), ("ready", "for"), ("send", "to"), ("submit", "to"),
    }
)  # fmt: skip
_SPECULATION_AFTER = frozenset(
    {
        "?", "candidate", "contender", "comp", "comps", "worthy", "ready", "potential",
        "quality", "material",
    }
)  # fmt: skip
_GRADER_NAMES = (
    ("professional sports authenticator", "PSA"),
    ("beckett", "BGS"),
    ("certified guaranty", "CGC"),
    ("sportscard guaranty", "SGC"),
    ("professional coin grading", "PCGS"),
    ("numismatic guaranty", "NGC"),
)
_GRADER_WORD = re.compile(rf"\b({_GRADER_NAME})\b", re.IGNORECASE)
_LOOKUP_URLS = (
    (re.compile(rf"psacard\.com/cert/({_CERT})\b", re.IGNORECASE), "PSA"),
    (re.compile(rf"cgc(?:cards|comics)\.com/certlookup/({_CERT})\b", re.IGNORECASE), "CGC"),
    (re.compile(rf"pcgs\.com/cert/({_CERT})\b", re.IGNORECASE), "PCGS"),
    (re.compile(rf"ngccoin\.com/certlookup/({_CERT})\b", re.IGNORECASE), "NGC"),
)
# The characters a word _GRADER_TOKEN or _CERT_LABEL matches can start with: their first letters
# in either case, and the long s (U+017F), which re's IGNORECASE takes for an s (test_certs checks
# both sets against re on every character).
_GRADER_FIRST = frozenset("PBCSNpbcsn\u017f")
_LABEL_FIRST = frozenset("Cc")
_LOOKUP_HINT = re.compile(r"\.com/cert", re.IGNORECASE)  # in each lookup URL: one search, not four
_DIGITS = "0123456789"
_SPECIFIC_GRADER_KEYS = frozenset({"professional grader", "grader", "grading company"})
_SPECIFIC_CERT_KEYS = frozenset(
    {"certification number", "cert number", "certification", "certification #", "cert #", "cert"}
)


@dataclass(frozen=True, slots=True)
class CertMention:
    """One certificate number seen on a listing, and whose it is.

    Attributes:
        number: as written (``4321000-001``, ``0012345678``); :attr:`key` is the stored form.
        grader: the grader it is attributed to; ``None`` unless ``attribution == "attributed"``.
        attribution: ``attributed``, ``ambiguous`` (no grader token; see ``candidates``) or
            ``negated`` (the nearest grader mention is negated or speculative).
        candidates: for ``ambiguous``, the graders whose cert shape fits, most likely first.
        flags: where it was seen and what was odd (module docstring), sorted.
    """

    number: str
    grader: str | None
    attribution: Attribution
    candidates: tuple[str, ...] = ()
    flags: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        """The number without ``#`` or dash: the form graders' lookups agree on."""
        return cert_key(self.number)


def cert_key(number: str) -> str:
    """``"#4321000-001"`` -> ``"4321000001"`` (leading zeros kept: BGS prints them)."""
    return number.strip().lstrip("#").replace("-", "")


def parse_cert_number(text: str) -> str | None:
    """``text`` when it is one cert-shaped number (``#`` allowed), without the ``#``; else None."""
    match = _NUMBER.match(text.strip())
    return match[1] if match else None


def parse_grader(text: str) -> str | None:
    """A grader from a token or a name: ``"psa"``, ``"Beckett"``, ``"Certified Guaranty Company
    (CGC)"`` -> ``PSA``, ``BGS``, ``CGC``; None when no grader is named."""
    if match := _GRADER_WORD.search(text):
        name = match[1].upper()
        return "BGS" if name == "BECKETT" else name
    folded = text.casefold()
    return next((grader for name, grader in _GRADER_NAMES if name in folded), None)


def candidates_for(number: str) -> tuple[str, ...]:
    """Graders whose cert shape fits ``number``, most likely first (the reported ranges overlap,
    so this orders verification and never settles a grader: docs/domain.md#certificate-formats)."""
    digits = cert_key(number)
    if "-" in number:
        return ("NGC", "CGC")
    if len(digits) == 10:
        return ("BGS", "CGC", "PSA") if digits.startswith("00") else ("CGC", "BGS", "PSA")
    return {7: ("SGC", "PSA"), 8: ("PSA", "PCGS"), 9: ("PSA",)}.get(len(digits), ())


# --- the title's tokens ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Mention:
    """A grader token and the grade words after it: tokens ``start..end`` (inclusive)."""

    grader: str
    start: int
    end: int
    status: Literal["ok", "negated", "speculative"]


def _clean(token: str) -> str:
    return token.strip(_STRIP)


def _is_grade(token: str) -> bool:
    cleaned = _clean(token)
    return bool(_GRADE_VALUE.match(cleaned) or _GRADE_WORD.match(cleaned))


def _status(words: list[str], raw: list[str], start: int, end: int) -> str:
    """Whether the mention ``start..end`` is negated, speculated on, or affirmative."""
    i = start - 1
    while i >= 0 and (words[i] in _NEGATION_FILLER or _GRADER_TOKEN.match(words[i])):
        i -= 1  # "NOT PSA BGS", "not a graded PSA"
    if i >= 0 and words[i] in _NEGATORS:
        return "negated"
    if start >= 2 and words[start - 1] in _FROM and words[start - 2] in _FORMER:
        return "negated"  # "crossed from BGS 9.5", "cracked out of PSA 8"
    if start >= 1 and words[start - 1] in _SPECULATION_BEFORE:
        return "speculative"
    if start >= 2 and (words[start - 2], words[start - 1]) in _SPECULATION_PAIRS:
        return "speculative"
    if any(t.rstrip(_STRIP).endswith("?") for t in raw[start : end + 1]):
        return "speculative"  # "PSA 10?"
    after = raw[end + 1].strip("()[],;:") if end + 1 < len(raw) else ""
    if after.casefold().rstrip("?!.") in _SPECULATION_AFTER or after.startswith("?"):
        return "speculative"
    return "ok"


def _mentions(raw: list[str], words: list[str]) -> list[_Mention]:
    found = []
    for j, word in enumerate(words):
        if word[:1] not in _GRADER_FIRST:  # most words: one test instead of a failed match
            continue
        match = _GRADER_TOKEN.match(word)
        if not match:
            continue
        end = j
        while end + 1 < len(raw) and end - j < NEAR and _is_grade(raw[end + 1]):
            end += 1
        grader = "BGS" if match[1].upper() == "BECKETT" else match[1].upper()
        found.append(_Mention(grader, j, end, _status(words, raw, j, end)))  # type: ignore[arg-type]
    return found


def _distance(mention: _Mention, i: int) -> tuple[int, int]:
    """Tokens between a number at ``i`` and a mention; ties go to the mention before it."""
    if i > mention.end:
        return (i - mention.end, 0)
    return (mention.start - i, 1)


def _from_mention(number: str, mention: _Mention, flags: set[str]) -> CertMention:
    if mention.status == "ok":
        return CertMention(number, mention.grader, "attributed", (), tuple(sorted(flags)))
    flags.add(mention.status)
    return CertMention(number, None, "negated", (), tuple(sorted(flags)))


def _ambiguous(number: str, flags: set[str]) -> CertMention:
    return CertMention(number, None, "ambiguous", candidates_for(number), tuple(sorted(flags)))


def _tokens(title: str) -> tuple[list[str], list[str]]:
    """The title's whitespace tokens, and the same stripped of punctuation and case-folded."""
    raw = title.split()
    return raw, [_clean(t).casefold() for t in raw]


def _title_mentions(
    raw: list[str], words: list[str], mentions: list[_Mention]
) -> list[CertMention]:
    two = len({m.grader for m in mentions}) > 1
    labels = [i for i, w in enumerate(words) if w[:1] in _LABEL_FIRST and _CERT_LABEL.match(w)]
    found: list[CertMention] = []
    for i, word in enumerate(words):
        if word[-1:] not in _DIGITS:  # both patterns end with a digit: most words are passed over
            continue
        match = _LABELLED_NUMBER.match(word) or _NUMBER.match(word)
        if not match:
            continue
        number = match[1]
        flags = {"title"} | ({"two_graders"} if two else set())
        if match.re is _LABELLED_NUMBER or any(0 < i - c <= NEAR or c - i == 1 for c in labels):
            flags.add("cert_label")
        ranked = sorted(mentions, key=lambda m: _distance(m, i))
        near = [m for m in ranked if _distance(m, i)[0] <= NEAR]
        if near:
            found.append(_from_mention(number, near[0], flags))
        elif "cert_label" in flags and ranked:
            found.append(_from_mention(number, ranked[0], flags))
        else:
            found.append(_ambiguous(number, flags))
    title = " ".join(raw)
    for pattern, grader in _LOOKUP_URLS if _LOOKUP_HINT.search(title) else ():
        for url in pattern.finditer(title):
            found.append(CertMention(url[1], grader, "attributed", (), ("lookup_url", "title")))
    return found


# --- item specifics -------------------------------------------------------------------------


def _specifics_mention(specifics: Mapping[str, str]) -> CertMention | None:
    by_key = {str(k).strip().casefold(): str(v or "") for k, v in specifics.items()}
    number = next(
        (n for k, v in by_key.items() if k in _SPECIFIC_CERT_KEYS and (n := parse_cert_number(v))),
        None,
    )
    if number is None:
        return None
    grader = next(
        (g for k, v in by_key.items() if k in _SPECIFIC_GRADER_KEYS and (g := parse_grader(v))),
        None,
    )
    if grader is None:
        return _ambiguous(number, {"specifics"})
    return CertMention(number, grader, "attributed", (), ("specifics",))


def _merge(mentions: list[CertMention]) -> CertMention:
    """One mention per number: the title's and the specifics' readings reconciled."""
    flags = set().union(*(m.flags for m in mentions))
    number = next((m.number for m in mentions if "-" in m.number), mentions[0].number)
    graders = {m.grader for m in mentions if m.attribution == "attributed"}
    if any(m.attribution == "negated" for m in mentions):
        if graders:
            flags.add("conflict")
        return CertMention(number, None, "negated", (), tuple(sorted(flags)))
    if len(graders) > 1:
        flags.add("conflict")
        order = [g for m in mentions if (g := m.grader)]
        return CertMention(
            number, None, "ambiguous", tuple(dict.fromkeys(order)), tuple(sorted(flags))
        )
    if graders:
        return CertMention(number, graders.pop(), "attributed", (), tuple(sorted(flags)))
    return _ambiguous(number, flags)


def extract_certs(title: str, specifics: Mapping[str, str] | None = None) -> list[CertMention]:
    """Every cert number in ``title`` (and the item ``specifics``), attributed per
    docs/certificates.md#1-attribution-rules.

    One mention per number (the stored form, :attr:`CertMention.key`), in title order, the
    specifics' number last when the title does not show it.
    """
    raw, words = _tokens(unicodedata.normalize("NFKC", title))
    graders = _mentions(raw, words)
    mentions = _title_mentions(raw, words, graders)
    stated = _specifics_mention(specifics) if specifics else None
    if stated is not None:
        named = [m for m in graders if m.grader == stated.grader]
        if named and all(m.status != "ok" for m in named):
            # the title says "NOT PSA" / "PSA 10?" of the very grader the specifics name
            stated = CertMention(stated.number, None, "negated", (), ("conflict", "specifics"))
        mentions.append(stated)
    by_key: dict[str, list[CertMention]] = {}
    for mention in mentions:
        by_key.setdefault(mention.key, []).append(mention)
    return [_merge(group) for group in by_key.values()]
