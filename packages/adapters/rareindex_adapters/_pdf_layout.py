"""Reading a prices-realised page's layout: words into lines, a header line into columns, and a
row's trailing words into amount phrases placed under those columns. Private to ``pdf``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._amounts import is_currency_marker
from ._pdf_words import Word

__all__ = [
    "LOT",
    "PRICE_KINDS",
    "STATUS",
    "Column",
    "Word",
    "amount_like",
    "column_for",
    "header",
    "is_dash",
    "lines",
    "phrases",
]

PRICE_KINDS = ("hammer", "premium", "realised")
LOT = re.compile(r"[A-Za-z]?\d{1,6}[A-Za-z]{0,2}")
_AMOUNT_COLUMNS = frozenset({*PRICE_KINDS, "estimate", "other"})
_LOT_WORDS = frozenset({"lot", "lots", "lot#", "lot-no", "los", "lote", "lotto"})
_KEYWORDS: tuple[tuple[str, frozenset[str]], ...] = (
    ("estimate", frozenset({"estimate", "estimates", "est", "schätzung", "schatzung"})),
    ("hammer", frozenset({"hammer", "zuschlag"})),
    ("premium", frozenset({"premium", "bp", "commission", "aufgeld"})),
    ("realised", frozenset({"realised", "realized", "total", "result", "ergebnis", "price"})),
    ("title", frozenset({"description", "title", "item", "beschreibung", "désignation"})),
)
STATUS = {"passed": "passed", "pass": "passed", "unsold": "passed", "bought-in": "passed"}
STATUS |= {"b.i.": "passed", "b/i": "passed", "withdrawn": "withdrawn", "w/d": "withdrawn"}
_NUMERIC = re.compile(r"[^\s\d]{0,3}\d[\d.,'’\-–/]*[^\s\d]{0,2}")
_DASHES = frozenset({"-", "–", "—", "n/a"})


@dataclass(frozen=True, slots=True)
class Column:
    """A header label's span: ``kind`` is lot, title, hammer, premium, realised, estimate or
    other."""

    kind: str
    x0: float
    x1: float


def lines(words: list[Word]) -> list[list[Word]]:
    """A page's words grouped into lines (same baseline, within 40% of a line's height)."""
    words = sorted(words, key=lambda w: (w.top, w.x0))
    found: list[list[Word]] = []
    for word in words:
        if found and abs(word.top - found[-1][0].top) <= max(2.0, 0.4 * word.height):
            found[-1].append(word)
        else:
            found.append([word])
    return [sorted(line, key=lambda w: w.x0) for line in found]


def _kind(label: str) -> str:
    words = {w.strip(".:#()").lower() for w in label.split()}
    for kind, keywords in _KEYWORDS:
        if words & keywords:
            return kind
    return "other"


def _is_lot_word(text: str) -> bool:
    return text.strip(".:#").lower() in _LOT_WORDS


def header(line: list[Word]) -> list[Column] | None:
    """The columns a header line names, or ``None`` when the line is not a header."""
    if any(char.isdigit() for word in line for char in word.text):
        return None  # a header has no numbers; a row titled "Lot of 3 … total" has
    groups: list[list[Word]] = []
    for word in line:
        previous = groups[-1][-1] if groups else None
        if (
            previous is not None
            and word.x0 - previous.x1 < 0.6 * word.height  # one space apart: the same label
            and not _is_lot_word(word.text)
            and not _is_lot_word(previous.text)
        ):
            groups[-1].append(word)
        else:
            groups.append([word])
    columns: list[Column] = []
    seen: set[str] = set()
    for group in groups:
        text = " ".join(w.text for w in group)
        kind = "lot" if _is_lot_word(text) else _kind(text)
        kind = "other" if kind in seen else kind
        seen.add(kind)
        columns.append(Column(kind, group[0].x0, group[-1].x1))
    if "lot" not in seen or not seen & set(PRICE_KINDS):
        return None
    return columns


def amount_like(text: str) -> bool:
    """Whether a word can belong to the amounts at the end of a row (or to a title's "PSA 8")."""
    low = text.lower()
    return (
        bool(_NUMERIC.fullmatch(text))
        or is_currency_marker(text)
        or low in STATUS
        or low in _DASHES
    )


def phrases(zone: list[Word]) -> list[list[Word]]:
    """Trailing words grouped into amounts: a currency word joins the number it is closer to."""
    found: list[list[Word]] = []
    pending: list[Word] = []
    for i, word in enumerate(zone):
        if not is_currency_marker(word.text):
            found.append([*pending, word])
            pending = []
            continue
        before = found[-1][-1] if found and not pending else None
        after = (
            zone[i + 1] if i + 1 < len(zone) and not is_currency_marker(zone[i + 1].text) else None
        )
        if before is not None and (after is None or word.x0 - before.x1 <= after.x0 - word.x1):
            found[-1].append(word)
        else:
            pending.append(word)
    if pending:
        found.append(pending)
    return found


def _overlap(a0: float, a1: float, column: Column) -> float:
    return min(a1, column.x1) - max(a0, column.x0)


def column_for(phrase: list[Word], columns: list[Column]) -> Column | None:
    """The amount column ``phrase`` sits under (most horizontal overlap), if any."""
    best = max(columns, key=lambda c: _overlap(phrase[0].x0, phrase[-1].x1, c))
    if _overlap(phrase[0].x0, phrase[-1].x1, best) <= 0 or best.kind not in _AMOUNT_COLUMNS:
        return None
    return best


def is_dash(text: str) -> bool:
    """A printed placeholder for an empty cell (``-``, ``—``, ``n/a``)."""
    return text.lower() in _DASHES
