"""A piece of input an adapter could not use, and why: returned beside the results, never dropped.

Adapters that read many entries (feed items, PDF rows, sitemap values) keep going past one bad entry
and hand the bad ones back as :class:`Rejected`, with the same closed-vocabulary reason a
:class:`ParseError` would carry. A caller that wants to fail on the first one calls ``to_error()``.

Example:
    >>> r = Rejected(ParseReason.MISSING_FIELD, "entry has no date", where="entry 3",
    ...              field="published")
    >>> str(r.to_error())
    'missing_field at published: entry 3: entry has no date'
"""

from __future__ import annotations

from dataclasses import dataclass

from rareindex_connectors.errors import ParseError, ParseReason

__all__ = ["Rejected", "bare_message"]

_SNIPPET_CHARS = 200


def bare_message(error: ParseError) -> str:
    """The message of ``error`` without its ``"reason at field: "`` prefix, to re-raise it with
    more context (a field path, a snippet) without repeating the prefix."""
    message = str(error)
    for prefix in (f"{error.reason.value} at {error.field}: ", f"{error.reason.value}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


@dataclass(frozen=True, slots=True)
class Rejected:
    """One entry an adapter could not read.

    Attributes:
        reason: a :class:`ParseReason` (closed vocabulary, safe as a metric label).
        message: what was wrong, for the operator.
        where: which entry (``"entry 3"``, ``"page 2, line 14"``, ``"https://x.example/a"``).
        field: the field to blame, when one is (``"published"``, ``"lastmod"``).
        snippet: at most 200 characters of the offending input.
    """

    reason: ParseReason
    message: str
    where: str | None = None
    field: str | None = None
    snippet: str | None = None

    def __post_init__(self) -> None:
        if self.snippet is not None and len(self.snippet) > _SNIPPET_CHARS:
            object.__setattr__(self, "snippet", self.snippet[:_SNIPPET_CHARS])

    @classmethod
    def from_error(cls, error: ParseError, *, where: str | None = None) -> Rejected:
        """Keep a :class:`ParseError` raised while reading one entry."""
        return cls(
            error.reason, bare_message(error), where=where, field=error.field, snippet=error.snippet
        )

    def to_error(self) -> ParseError:
        """This rejection as the :class:`ParseError` a strict caller would raise."""
        message = f"{self.where}: {self.message}" if self.where else self.message
        return ParseError(self.reason, message, field=self.field, snippet=self.snippet)
