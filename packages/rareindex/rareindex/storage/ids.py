"""Prefixed, time-sortable text ids: ``raw_01JD3…``, ``ast_01JD3…``.

26 base-32 characters (Crockford's alphabet) after the prefix: 48 bits of milliseconds then 80
random bits, so ids sort by creation time (good for B-tree locality) and need no coordination
between workers.

Example:
    >>> new_id("raw").startswith("raw_") and len(new_id("raw")) == 30
    True
"""

from __future__ import annotations

import base64
import hashlib
import os
import time

__all__ = ["PREFIXES", "new_id", "stable_id"]

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


_RFC4648 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_TO_CROCKFORD = bytes.maketrans(_RFC4648, _ALPHABET.encode())


def new_id(prefix: str) -> str:
    """A new id with one of the known :data:`PREFIXES`."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}; known: {', '.join(sorted(PREFIXES))}")
    # 48 bits of milliseconds then 80 random bits, base32 in an alphabet whose ASCII order is its
    # value order, so ids sort by time. (C-speed encoding: ids are minted per raw record.)
    raw = int(time.time() * 1000).to_bytes(6, "big") + os.urandom(10)
    return f"{prefix}_{base64.b32encode(raw)[:26].translate(_TO_CROCKFORD).decode()}"


def stable_id(prefix: str, *natural_key: object) -> str:
    """The same id for the same natural key, every time: ``stable_id("sal", source, ext, day)``.

    Rows derived from raw records (normalized records, assets, observations) use these, so a
    replay into an empty database rebuilds byte-identical tables.
    """
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}; known: {', '.join(sorted(PREFIXES))}")
    digest = hashlib.sha256("\x1f".join(map(str, natural_key)).encode()).digest()
    return f"{prefix}_{base64.b32encode(digest)[:26].translate(_TO_CROCKFORD).decode()}"
