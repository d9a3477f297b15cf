"""Why a JSON body did not parse, in the closed vocabulary: cut short, wrongly encoded, or garbage.

Called only after a parse failed (the fast path stays orjson's), so an operator reading a failed
run sees ``truncated`` for a body that ended mid-document, ``encoding_error`` for bytes that are
not UTF-8, and ``invalid_json`` for the rest.

Example:
    >>> json_failure(b'{"products": [{"id": 1')[0].value
    'truncated'
    >>> json_failure(b'{"title": "Pok\\xe9mon"}')[0].value
    'encoding_error'
"""

from __future__ import annotations

import json

from ._errors import ParseReason

__all__ = ["json_failure"]


def json_failure(content: bytes | str) -> tuple[ParseReason, str]:
    """The reason ``content`` is not JSON, and the decoder's message (with its position)."""
    if isinstance(content, bytes):
        try:
            content = content.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
        except UnicodeDecodeError as exc:
            return ParseReason.ENCODING_ERROR, f"not UTF-8: {exc}"
    if not content.strip():
        return ParseReason.EMPTY_PAYLOAD, "empty body"
    try:
        json.loads(content)
    except json.JSONDecodeError as exc:
        # Cut off, not mangled: the decoder ran out of input (an unterminated string always does).
        at_end = exc.pos >= len(content.rstrip()) or exc.msg.startswith("Unterminated string")
        return (ParseReason.TRUNCATED if at_end else ParseReason.INVALID_JSON), str(exc)
    except ValueError as exc:  # numbers beyond what the decoder takes, and the like
        return ParseReason.INVALID_JSON, str(exc)
    return ParseReason.INVALID_JSON, "the fast parser refused what the standard one reads"
