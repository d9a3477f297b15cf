"""A regular expression compiled a second time with ``re.ASCII``, for printable ASCII text.

On a text of printable ASCII characters only (U+0020 to U+007E: :func:`printable_ascii`),
``\\w``, ``\\d``, ``\\s``, ``\\b`` and ``IGNORECASE`` take the same characters whether the pattern
is compiled for Unicode or with ``re.ASCII``: what Unicode adds (the long s as an s, the Kelvin
sign as a k, U+001C-U+001F as white space, letters and digits of other scripts) is never
printable ASCII. So both compilations find the same matches there, and the ASCII one skips
Unicode's character tables at every position it tries (a quarter less CPU for the title flags'
search). Any other text keeps the pattern as written. Private to ``titles``.

:class:`LoweredPrefilter` goes further for a search that only lets a text through to exact rules
(most titles have no flag): the rules, case-insensitive, become one case-sensitive pattern over
the text lowered, with their look-arounds left out and the rules at a word start grouped by their
first letter. re skips an alternative whose first character is a plain literal or set that the
text's next character is not; it cannot for a case-insensitive literal or a look-behind, so the
rules as written enter every alternative at every word boundary. It admits every text in which
one of the rules matches, and sometimes one where none does: the caller still runs the rules.

Example:
    >>> import re
    >>> pattern = re.compile(r"\\bnm\\b", re.IGNORECASE)
    >>> twin = ascii_twin(pattern)
    >>> text = "PSA 8 NM"
    >>> (twin if printable_ascii(text) else pattern).search(text).span()
    (6, 8)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["LoweredPrefilter", "ascii_twin", "printable_ascii"]


def printable_ascii(text: str) -> bool:
    """Whether every character of ``text`` is printable ASCII (U+0020 to U+007E)."""
    return text.isascii() and text.isprintable()


def ascii_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` compiled with ``re.ASCII``: the same matches on printable ASCII text."""
    return re.compile(pattern.pattern, (pattern.flags & ~re.UNICODE) | re.ASCII)


class LoweredPrefilter:
    """Lets a printable ASCII text through to case-insensitive rules: :meth:`admits` is true for
    every text in which one of the rules finds a match, and maybe for a few more.

    Each rule loses its look-arounds (an assertion left out only widens a match) and is lowered
    outside its escapes: on lowered printable ASCII, a lowered literal or set takes what the
    case-insensitive one took, and a case-sensitive part (``(?-i:RP)``) takes ``rp`` too, which
    only widens it. A leading group of alternatives is spread over its tail (``(?:a|b)c`` is
    ``ac|bc``, ``(?:a)?b`` is ``ab|b``); the rules that then start with ``\\b`` and a plain letter
    are grouped by that letter, under one ``\\b``; the others are searched apart.

    >>> rules = [r"\\blot\\b(?!\\s*#)", r"\\b(?<!booster\\s)bundle\\b", r"^\\(\\d"]
    >>> flags = LoweredPrefilter(rules)
    >>> [flags.admits(t) for t in ("Lot of 3", "Lot #4", "Booster BUNDLE", "(3) Mew", "Charizard")]
    [True, True, True, True, False]

    Raises:
        ValueError: a rule sets inline flags (``(?x)``, ``(?i:``) other than ``(?-i:``.
    """

    def __init__(self, rules: Iterable[str]) -> None:
        by_letter: dict[str, list[str]] = {}
        at_word: list[str] = []
        anywhere: list[str] = []
        for rule in rules:
            plain = _lowered("".join(_without_lookarounds(_pieces(rule))))
            if not plain.startswith(r"\b"):
                anywhere.append(plain)
                continue
            for rest in _spread(_pieces(plain.removeprefix(r"\b"))):
                if _starts_with_one_letter(rest):
                    by_letter.setdefault(rest[0], []).append("".join(rest[1:]))
                else:
                    at_word.append("".join(rest))
        at_word += [f"{c}(?:{'|'.join(tails)})" for c, tails in sorted(by_letter.items())]
        self._searches = tuple(
            re.compile(pattern, re.ASCII).search
            for pattern in ([rf"\b(?:{'|'.join(at_word)})"] if at_word else []) + anywhere
        )

    def admits(self, text: str) -> bool:
        """Whether one of the rules may match ``text``, a printable ASCII text."""
        lowered = text.lower()
        for search in self._searches:  # noqa: SIM110 - any() over a generator costs a third more
            if search(lowered):
                return True
        return False


def _starts_with_one_letter(pieces: list[str]) -> bool:
    """Whether the first piece is a plain lower-case letter, not repeated."""
    first = pieces[0] if pieces else ""
    repeated = len(pieces) > 1 and pieces[1][:1] in {"?", "*", "+", "{"}
    return len(first) == 1 and "a" <= first <= "z" and not repeated


def _pieces(rule: str) -> list[str]:
    """``rule`` cut into its atoms: an escape, a whole set (``[^a-z]``), a ``(?…`` opening, a
    counted repeat (``{1,3}``), or one character."""
    pieces: list[str] = []
    i = 0
    while i < len(rule):
        ch = rule[i]
        if ch == "\\":
            end = i + 2
        elif ch == "[":
            end = i + 1 + (rule[i + 1 : i + 2] == "^")
            end += rule[end : end + 1] == "]"  # a literal ] first in a set
            while rule[end] != "]":
                end += 2 if rule[end] == "\\" else 1
            end += 1
        elif ch == "(" and rule.startswith("(?", i):
            end = next(
                i + len(head)
                for head in ("(?<=", "(?<!", "(?P<", "(?:", "(?=", "(?!", "(?-i:", "(?")
                if rule.startswith(head, i)
            )
        elif ch == "{" and (m := re.match(r"\{\d*(?:,\d*)?\}", rule[i:])):
            end = i + m.end()
        else:
            end = i + 1
        pieces.append(rule[i:end])
        i = end
    return pieces


def _without_lookarounds(pieces: list[str]) -> list[str]:
    """The pieces without their ``(?=…)``, ``(?!…)``, ``(?<=…)`` and ``(?<!…)`` groups."""
    out: list[str] = []
    depth, skipping_from = 0, 0  # skipping_from > 0: inside a look-around opened at that depth
    for piece in pieces:
        if piece.startswith("("):
            depth += 1
            if not skipping_from and piece in ("(?=", "(?!", "(?<=", "(?<!"):
                skipping_from = depth
        if not skipping_from:
            out.append(piece)
        if piece == ")":
            if skipping_from == depth:
                skipping_from = 0
            depth -= 1
    return out


def _spread(pieces: list[str]) -> list[list[str]]:
    """A leading ``(?:…)`` group of alternatives spread over what follows it, as alternatives
    (pieces each); a rule that starts otherwise, or with a repeated group, as it is."""
    if not pieces or pieces[0] != "(?:":
        return [pieces]
    depth, cut, branches = 0, 1, []
    for k, piece in enumerate(pieces):
        depth += piece.startswith("(")
        depth -= piece == ")"
        if depth == 1 and piece == "|":
            branches.append(pieces[cut:k])
            cut = k + 1
        if depth == 0:
            branches.append(pieces[cut:k])
            tail = pieces[k + 1 :]
            break
    else:  # pragma: no cover - an unbalanced rule does not compile
        return [pieces]
    if tail[:1] == ["?"]:
        return [*(b + tail[1:] for b in branches), tail[1:]]
    if tail[:1] and (tail[0] in {"*", "+"} or tail[0].startswith("{")):
        return [pieces]
    return [b + tail for b in branches]


def _lowered(rule: str) -> str:
    """``rule`` lowered outside its escapes, for a case-sensitive search of lowered text."""
    if re.search(r"\(\?[aiLmsux]|\(\?-[^i]", rule):
        raise ValueError(f"inline flags are not supported in a prefilter rule: {rule!r}")
    out: list[str] = []
    escaped = False
    for ch in rule:
        out.append(ch if escaped else ch.lower())
        escaped = not escaped and ch == "\\"
    return "".join(out).replace("(?-i:", "(?:")
