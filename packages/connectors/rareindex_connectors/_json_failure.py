"""Why a JSON body did not parse, in the closed vocabulary: cut short, wrongly encoded, or garbage.

Called only after a parse failed (the fast path stays orjson's), so an operator reading a failed
run sees ``truncated`` for a body that ended mid-document, ``encoding_error`` for bytes that are
not UTF-8, ``too_deep`` for arrays and objects nested deeper than :data:`MAX_DEPTH` (orjson's
limit; measured without recursing, so a 5,000-deep page is classified, not a crash), and
``invalid_json`` for the rest.

Example:
    >>> json_failure(b'{"products": [{"id": 1')[0].value
    'truncated'
    >>> json_failure(b'{"title": "Pok\\xe9mon"}')[0].value
    'encoding_error'
    >>> json_failure(b"[" * 5000 + b"]" * 5000)[0].value
    'too_deep'
"""

from __future__ import annotations

import json

from ._errors import ParseReason

__all__ = ["MAX_DEPTH", "json_failure", "nesting_depth"]

MAX_DEPTH = 1024
"""How deep arrays and objects may nest: orjson refuses more, and the standard decoder recurses."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` in ``text``, strings skipped; iterative, so any
    depth is measured without recursing.

    >>> nesting_depth('{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_failure(content: bytes | str) -> tuple[ParseReason, str]:
    """The reason ``content`` is not JSON, and the decoder's message (with its position)."""
    if isinstance(content, bytes):
        try:
            content = content.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError as exc:
            return ParseReason.ENCODING_ERROR, f"not UTF-8: {exc}"
    if not content.strip():
        return ParseReason.EMPTY_PAYLOAD, "empty body"
    deepest = nesting_depth(content)
    if deepest > MAX_DEPTH:
        return ParseReason.TOO_DEEP, f"nested {deepest} levels deep (at most {MAX_DEPTH})"
    try:
        json.loads(content)
    except json.JSONDecodeError as exc:
        # Cut off, not mangled: the decoder ran out of input (an unterminated string always does).
        at_end = exc.pos >= len(content.rstrip()) or exc.msg.startswith("Unterminated string")
        return (ParseReason.TRUNCATED if at_end else ParseReason.INVALID_JSON), str(exc)
    except ValueError as exc:  # numbers beyond what the decoder takes, and the like
        return ParseReason.INVALID_JSON, str(exc)
    except RecursionError:  # within orjson's limit, past the interpreter's
        return ParseReason.TOO_DEEP, f"nested {deepest} levels deep: too deep to decode"
    return ParseReason.INVALID_JSON, "the fast parser refused what the standard one reads"
