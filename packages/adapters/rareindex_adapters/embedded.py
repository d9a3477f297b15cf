"""JSON that pages embed for their own JavaScript: ``__NEXT_DATA__``, ``window.__STATE__ = {…}``,
and ``<script type="application/json">`` islands.

All JSON is parsed with ``parse_float=Decimal``: ``19.99`` arrives as ``Decimal('19.99')``, never as
a float, so prices can go straight into :class:`Money`. ``NaN`` and ``Infinity`` are refused.

Inline assignments are cut out by a balanced-bracket scan that skips over string literals (``"}"``
inside a string does not close the object), not by a greedy regex. ``JSON.parse('…')`` wrappers are
unwrapped. The value must be JSON; JavaScript object literals (unquoted keys, ``undefined``) raise.

Errors: a missing script or variable is ``missing_field`` with the selector or variable as
``field``; broken JSON is ``invalid_json`` with a snippet around the failure.

Example:
    >>> page = '<script>window.__STATE__ = {"price": 19.99, "note": "a } in a string"};</script>'
    >>> inline_json(page, "window.__STATE__")
    {'price': Decimal('19.99'), 'note': 'a } in a string'}
"""

from __future__ import annotations

import re
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from rareindex_connectors.errors import ParseError, ParseReason

from ._json import loads_exact

__all__ = ["MAX_HTML_BYTES", "inline_json", "json_in_script", "loads_exact", "next_data"]

MAX_HTML_BYTES = 16 * 1024 * 1024
"""Pages larger than this are refused (``too_large``) here and by ``structured``."""

_NEXT_DATA = "script#__NEXT_DATA__"
_CLOSERS = {"{": "}", "[": "]"}
_QUOTES = frozenset("\"'`")
_SNIPPET_RADIUS = 60


def _tree(html: str | bytes) -> LexborHTMLParser:
    if len(html) > MAX_HTML_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"page is {len(html)} long, over {MAX_HTML_BYTES}")
    return LexborHTMLParser(html)


def json_in_script(html: str | bytes, selector: str) -> Any:
    """The JSON inside the first element matching the CSS ``selector``.

    Raises:
        ParseError: ``missing_field`` (no element, or an empty one; ``field`` is the selector),
            ``invalid_json``, ``too_large``.
    """
    node = _tree(html).css_first(selector)
    text = node.text(deep=True) if node is not None else ""
    if not text.strip():
        what = "no element matches" if node is None else "the element is empty:"
        raise ParseError(ParseReason.MISSING_FIELD, f"{what} {selector}", field=selector)
    return loads_exact(text.strip(), field=selector)


def next_data(html: str | bytes) -> dict[str, Any]:
    """The ``__NEXT_DATA__`` object of a Next.js page (``props.pageProps`` holds the page data).

    Raises:
        ParseError: ``missing_field`` (not a Next.js page, or an app-router page without it),
            ``invalid_json``, ``unexpected_shape`` (not an object), ``too_large``.
    """
    data = json_in_script(html, _NEXT_DATA)
    if not isinstance(data, dict):
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            "__NEXT_DATA__ is not an object",
            field=_NEXT_DATA,
            snippet=repr(data),
        )
    return data


def _assignment(variable: str) -> re.Pattern[str]:
    name = variable.removeprefix("window.")
    dotted = r"\s*\.\s*".join(re.escape(part) for part in name.split("."))
    bracketed = rf"""\[\s*["']{re.escape(name)}["']\s*\]"""
    # `window.X =`, `window["X"] =`, `var X =`, `X =`; not `X ==`, not `obj.X =` for a bare name.
    return re.compile(
        rf"(?:(?<![\w$.])(?:window\s*\.\s*)?{dotted}|window\s*{bracketed})\s*=(?!=)\s*"
    )


def _balanced_end(text: str, start: int, field: str) -> int:
    """Index just past the bracket that closes ``text[start]``, skipping string literals."""
    stack = [_CLOSERS[text[start]]]
    i = start + 1
    while i < len(text):
        char = text[i]
        if char in _QUOTES:
            i += 1
            while i < len(text) and text[i] != char:
                i += 2 if text[i] == "\\" else 1
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "}]":
            if char != stack.pop():
                break
            if not stack:
                return i + 1
        i += 1
    raise ParseError(
        ParseReason.INVALID_JSON,
        "unbalanced brackets: the value never closes",
        field=field,
        snippet=text[start : start + 2 * _SNIPPET_RADIUS],
    )


def _to_json_escape(match: re.Match[str]) -> str:
    escape = match[1]
    if escape is None:
        return '\\"'  # a bare double quote inside a '…' or `…` literal
    if escape == "'":
        return "'"
    if escape.startswith("x"):
        return "\\u00" + escape[1:]
    return match[0]


_JS_ESCAPE = re.compile(r"""\\(x[0-9a-fA-F]{2}|.)|\"""", re.DOTALL)


def _js_string(text: str, start: int, field: str) -> str:
    """The value of the JavaScript string literal starting at ``text[start]``."""
    quote = text[start]
    end = start + 1
    while end < len(text) and text[end] != quote:
        end += 2 if text[end] == "\\" else 1
    body = _JS_ESCAPE.sub(_to_json_escape, text[start + 1 : end])
    value = loads_exact(f'"{body}"', field=field)
    if not isinstance(value, str):  # pragma: no cover - a quoted literal is a string
        raise TypeError(type(value).__name__)
    return value


def inline_json(html: str | bytes, variable: str) -> Any:
    """The JSON value assigned to ``variable`` in an inline ``<script>``.

    ``variable`` is written as in the page: ``"window.__STATE__"``, ``"__APOLLO_STATE__"``,
    ``"App.data"``. ``window.X = …``, ``window["X"] = …`` and ``var/let/const X = …`` all match;
    a value wrapped in ``JSON.parse("…")`` is unwrapped.

    Raises:
        ParseError: ``missing_field`` (``field`` is the variable), ``invalid_json``,
            ``too_large``.
    """
    pattern = _assignment(variable)
    for script in _tree(html).css("script"):
        if script.attributes.get("src") is not None:
            continue
        text = script.text(deep=True)
        for match in pattern.finditer(text):
            start = match.end()
            if text.startswith("JSON.parse(", start):
                quote = start + len("JSON.parse(")
                if quote < len(text) and text[quote] in _QUOTES:
                    return loads_exact(_js_string(text, quote, variable), field=variable)
            if start < len(text) and text[start] in _CLOSERS:
                return loads_exact(
                    text[start : _balanced_end(text, start, variable)], field=variable
                )
    raise ParseError(
        ParseReason.MISSING_FIELD, f"no inline script assigns JSON to {variable}", field=variable
    )
