"""JSON with exact numbers: every non-integer is a ``Decimal``, never a float; ``NaN`` and
``Infinity`` are refused. :func:`loads_exact` is strict; :func:`loads_lenient` repairs the
breakage JSON-LD blocks commonly have before giving up.

Example:
    >>> loads_exact('{"price": 19.99}')
    {'price': Decimal('19.99')}
    >>> loads_lenient('{"a": 1,} /* two objects */ {"b": 2.5}')
    [{'a': 1}, {'b': Decimal('2.5')}]
"""

from __future__ import annotations

import html as htmllib
import json
import re
from decimal import Decimal
from typing import Any

from rareindex_connectors.errors import MAX_DEPTH, ParseError, ParseReason, nesting_depth

__all__ = ["loads_exact", "loads_lenient"]

_SNIPPET_RADIUS = 60
_WRAPPERS = re.compile(r"^\s*(?://\s*)?(?:<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _invalid(exc: ValueError, text: str, field: str | None) -> ParseError:
    if isinstance(exc, json.JSONDecodeError):
        start = max(exc.pos - _SNIPPET_RADIUS, 0)
        return ParseError(
            ParseReason.INVALID_JSON,
            f"{exc.msg} at line {exc.lineno} column {exc.colno}",
            field=field,
            snippet=text[start : exc.pos + _SNIPPET_RADIUS],
        )
    return ParseError(ParseReason.INVALID_JSON, str(exc), field=field, snippet=text)


def _too_deep(text: str, field: str | None) -> ParseError:
    """The standard decoder recursed past Python's limit: say how deep, measured iteratively."""
    return ParseError(
        ParseReason.TOO_DEEP,
        f"nested {nesting_depth(text)} levels deep (at most {MAX_DEPTH})",
        field=field,
        snippet=text[:_SNIPPET_RADIUS],
    )


def loads_exact(text: str, *, field: str | None = None) -> Any:
    """``json.loads`` with ``Decimal`` for every non-integer number.

    Raises:
        ParseError: ``invalid_json`` with a snippet around the failure (or ``NaN``/``Infinity``);
            ``too_deep`` past :data:`MAX_DEPTH` levels of nesting.
    """
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_refuse_constant)
    except ValueError as exc:
        raise _invalid(exc, text, field) from None
    except RecursionError:
        raise _too_deep(text, field) from None


def _decode_all(text: str, *, strict: bool) -> list[Any]:
    """Every JSON value in ``text``, one after another (separated by space, ``,`` or ``;``)."""
    decoder = json.JSONDecoder(parse_float=Decimal, parse_constant=_refuse_constant, strict=strict)
    values: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and (text[pos].isspace() or text[pos] in ",;"):
            pos += 1
        if pos == len(text):
            return values
        value, pos = decoder.raw_decode(text, pos)
        values.append(value)


def _skip_blank(text: str, i: int) -> int:
    """Index of the next character that is neither whitespace nor inside a comment."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        else:
            break
    return i


def _strip_comments_and_trailing_commas(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i : end + 1])
            i = end + 1
        elif text.startswith(("//", "/*"), i):
            out.append(" ")
            i = _skip_blank(text, i)
        elif char == ",":
            after = _skip_blank(text, i + 1)
            if text[after : after + 1] not in ("}", "]", ""):  # drop trailing commas
                out.append(char)
            i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def loads_lenient(text: str) -> list[Any]:
    """Every JSON value in a script's text, repairing common breakage if strict parsing fails:
    ``<!-- -->``/CDATA wrappers, ``//`` and ``/* */`` comments, trailing commas, raw control
    characters in strings, and JSON HTML-escaped throughout (``{&quot;a&quot;: 1}``).

    Raises:
        ParseError: ``invalid_json``, with the strict parser's complaint and a snippet there;
            ``too_deep`` past :data:`MAX_DEPTH` levels of nesting.
    """
    text = _WRAPPERS.sub("", text.strip().removeprefix("\ufeff"))
    if nesting_depth(text) > MAX_DEPTH:  # before the decoder, which would recurse that deep
        raise _too_deep(text, None)
    try:
        return _decode_all(text, strict=True)
    except ValueError as first:
        if '"' not in text and "&quot;" in text:
            text = htmllib.unescape(text)
        try:
            return _decode_all(_strip_comments_and_trailing_commas(text), strict=False)
        except ValueError:
            raise _invalid(first, text, None) from None
