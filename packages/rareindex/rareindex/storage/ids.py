"""Prefixed, time-sortable text ids: ``raw_01JD3…``, ``ast_01JD3…``.

26 Crockford base-32 characters after the prefix: 48 bits of milliseconds then 80 random bits, so
ids sort by creation time (good for B-tree locality) and need no coordination between workers.

Example:
    >>> new_id("raw").startswith("raw_") and len(new_id("raw")) == 30
    True
"""

from __future__ import annotations

import os
import time

__all__ = ["PREFIXES", "new_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

PREFIXES = frozenset(
    {
        "run",
        "bkf",
        "raw",
        "nrm",
        "ast",
        "var",
        "set",
        "brd",
        "sal",
        "lst",
        "lev",
        "auc",
        "lot",
        "obs",
        "pop",
        "img",
        "nws",
        "crt",
        "sig",
    }
)


def new_id(prefix: str) -> str:
    """A new id with one of the known :data:`PREFIXES`."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}; known: {', '.join(sorted(PREFIXES))}")
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        value, index = divmod(value, 32)
        chars.append(_ALPHABET[index])
    return f"{prefix}_{''.join(reversed(chars))}"
