"""Prefixed, time-sortable text ids: ``raw_01JD3…``, ``ast_01JD3…``.

26 base-32 characters (Crockford's alphabet) after the prefix: 48 bits of milliseconds then 80
random bits, so ids sort by creation time (good for B-tree locality) and need no coordination
between workers.

Example:
    >>> new_id("raw").startswith("raw_") and len(new_id("raw")) == 30
    True
"""

from __future__ import annotations

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
        "wch",
        "rev",
    }
)


_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]  # 10 bits -> two characters


def _text(prefix: str, v: int) -> str:
    """``prefix_`` and the 130 bits of ``v`` as 26 characters, most significant first.

    Two characters per table lookup, unrolled: about half the time of a join over a
    comprehension, and ids are minted for every raw record crawled."""
    p = _PAIRS
    return (
        f"{prefix}_{p[v >> 120]}{p[(v >> 110) & 1023]}{p[(v >> 100) & 1023]}"
        f"{p[(v >> 90) & 1023]}{p[(v >> 80) & 1023]}{p[(v >> 70) & 1023]}{p[(v >> 60) & 1023]}"
        f"{p[(v >> 50) & 1023]}{p[(v >> 40) & 1023]}{p[(v >> 30) & 1023]}{p[(v >> 20) & 1023]}"
        f"{p[(v >> 10) & 1023]}{p[v & 1023]}"
    )


def new_id(prefix: str) -> str:
    """A new id with one of the known :data:`PREFIXES`."""
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}; known: {', '.join(sorted(PREFIXES))}")
    # 48 bits of milliseconds then 80 random bits (and 2 zero bits: 26 characters of 5 bits),
    # in an alphabet whose ASCII order is its value order, so ids sort by time.
    return _text(
        prefix, (time.time_ns() // 1_000_000 << 82) | (int.from_bytes(os.urandom(10), "big") << 2)
    )


def stable_id(prefix: str, *natural_key: object) -> str:
    """The same id for the same natural key, every time: ``stable_id("sal", source, ext, day)``.

    Rows derived from raw records (normalized records, assets, observations) use these, so a
    replay into an empty database rebuilds byte-identical tables.
    """
    if prefix not in PREFIXES:
        raise ValueError(f"unknown id prefix {prefix!r}; known: {', '.join(sorted(PREFIXES))}")
    digest = hashlib.sha256("\x1f".join(map(str, natural_key)).encode()).digest()
    return _text(prefix, int.from_bytes(digest[:17], "big") >> 6)  # the first 130 bits
