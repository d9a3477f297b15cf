"""Certificate numbers in a listing title, and whether a verified certificate disagrees with it.

The reading itself — :func:`extract_certs`, :class:`CertMention` and the attribution rules of
docs/certificates.md#1-attribution-rules — lives in the connector SDK
(:mod:`rareindex_adapters.certs`), where the connectors that read a cert from a title
use the same rule; this module re-exports it for the index.

:func:`title_mismatch` is the other half of the provenance rules
(docs/certificates.md#4-the-mismatch-signal): does a verified certificate's subject or year disagree
with a listing title?

Example:
    >>> [m] = extract_certs("2018 Prizm Luka Doncic #280 PSA 10 GEM MINT #12345678")
    >>> m.number, m.grader, m.attribution
    ('12345678', 'PSA', 'attributed')
    >>> title_years("2020-21 Prizm LaMelo Ball #278 PSA 10") == {2020, 2021}
    True
"""

from __future__ import annotations

import re
import unicodedata

from rareindex_adapters import certs as _rule
from rareindex_adapters.certs import *  # noqa: F403  (the rule's names, re-exported)

__all__ = ["title_mismatch", "title_years"]
__all__ += _rule.__all__

_YEAR = re.compile(r"(?<![\w#/$.\-])((?:18|19|20)[0-9][0-9])(?:-([0-9][0-9]))?(?![\w/.]|-[0-9])")
_STOPWORDS = frozenset({"the", "and", "of", "jr", "sr", "ii", "iii"})


# --- the mismatch signal --------------------------------------------------------------------


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().casefold()


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", _fold(text)) if len(w) > 2} - _STOPWORDS


def title_years(title: str) -> set[int]:
    """The years a title states (``2018``, ``(1991)``, ``1937-D``; ``2020-21`` gives both), never
    a card number (``#2000``), a serial (``/2000``), a price or part of a longer number."""
    years: set[int] = set()
    for match in _YEAR.finditer(unicodedata.normalize("NFKC", title)):
        first = int(match[1])
        years.add(first)
        if match[2]:
            years.add(first // 100 * 100 + int(match[2]))
    return years


def title_mismatch(title: str, subject: str | None, year: int | None) -> str | None:
    """``"subject"``, ``"year"``, ``"subject,year"`` when a verified certificate's subject or year
    disagrees with the listing ``title``; None when both agree (or the title does not say).

    The subject disagrees when fewer than half of its words (3+ letters, accents folded) appear in
    the title; the year when the title states years and none is the certificate's. Lenient on
    purpose: ``MICHAEL JORDAN`` agrees with ``Jordan``; a false alarm costs a reviewer's time.
    """
    codes = []
    if subject and (words := _words(subject)) and 2 * len(words & _words(title)) < len(words):
        codes.append("subject")
    if year is not None and (years := title_years(title)) and year not in years:
        codes.append("year")
    return ",".join(codes) or None
