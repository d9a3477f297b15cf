"""How good is a fetched document? The router escalates to the next engine below 0.6.

Two scorers: :func:`document_score`, a heuristic on the body alone, and :class:`FieldScorer`,
which a connector builds from its parser: the weighted share of expected fields found.

Example:
    >>> scorer = FieldScorer({"title": 2, "price.amount": 1}, extract=lambda r: r.json())
    >>> from rareindex_connectors import FetchResult
    >>> scorer(FetchResult(url="u", status=200, content=b'{"title": "x"}', engine="api"))
    0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._context import FetchResult, ResponseKind
from .errors import ParseError

__all__ = ["FieldScorer", "Scorer", "document_score"]

ESCALATE_BELOW = 0.6

Scorer = Callable[[FetchResult], float | None]
"""How well a result serves its parser, 0..1; None: "not mine to judge", the document heuristic
decides (a connector's ``score`` answers for the pages it parses)."""


def document_score(result: FetchResult, expect: ResponseKind) -> float:
    """1.0 for a plausible document of the expected kind, less for thin ones, 0 for empty."""
    body = result.content.strip()
    if not body:
        return 0.0
    if expect == "binary":
        return 1.0
    if expect == "json":
        # Shape only: the connector parses the body anyway, so a full parse here would be paid
        # twice per page. Broken JSON inside a well-shaped body fails closed in the parser.
        first, last = body[:1], body[-1:]
        if (first, last) not in {(b"{", b"}"), (b"[", b"]")}:
            return 0.0
        empty = len(body) < 16 and len(body.replace(b" ", b"")) <= 2  # {} or [ ]
        return 0.5 if empty else 1.0
    text = body[:65536].lower()
    if b"<html" in text or b"<body" in text or b"<title" in text:
        return 1.0 if len(body) >= 256 else 0.6
    return 1.0 if len(body) >= 64 else 0.5


def _lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, Mapping):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


class FieldScorer:
    """Weighted share of ``expected`` dotted field paths present (not None, not empty) in
    what ``extract`` pulls out of a result. A parse failure scores 0."""

    def __init__(self, expected: Mapping[str, float], extract: Callable[[FetchResult], Any]):
        if not expected or any(w <= 0 for w in expected.values()):
            raise ValueError("expected fields need positive weights")
        self.expected = dict(expected)
        self.extract = extract

    def __call__(self, result: FetchResult) -> float:
        try:
            data = self.extract(result)
        except (ParseError, ValueError, KeyError, TypeError):
            return 0.0
        total = sum(self.expected.values())
        found = sum(
            weight
            for path, weight in self.expected.items()
            if _lookup(data, path) not in (None, "", [], {})
        )
        return found / total
