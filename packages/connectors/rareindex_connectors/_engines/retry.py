"""Retry decisions as data, backoff with full jitter, and ``Retry-After`` parsing.

Example:
    >>> RETRY_STATUSES[429], 404 in RETRY_STATUSES
    ('rate_limited', False)
    >>> parse_retry_after("120", now=0.0)
    120.0
"""

from __future__ import annotations

import random
from email.utils import parsedate_to_datetime

__all__ = ["PERMANENT_STATUSES", "RETRY_STATUSES", "backoff_s", "parse_retry_after"]

# status -> why it is worth retrying (the retry table; everything else 4xx is permanent).
RETRY_STATUSES: dict[int, str] = {
    408: "timeout",
    425: "too_early",
    429: "rate_limited",
    500: "server_error",
    502: "bad_gateway",
    503: "unavailable",
    504: "gateway_timeout",
}
PERMANENT_STATUSES = frozenset({400, 401, 403, 404, 405, 410, 451})


def backoff_s(attempt: int, *, base_s: float = 0.5, cap_s: float = 30.0) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(cap, base * 2**attempt)]."""
    return random.uniform(0, min(cap_s, base_s * (2**attempt)))


def parse_retry_after(value: str | None, *, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP-date.

    Returns None when absent or unparseable; never negative.
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)
