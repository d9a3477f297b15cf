"""Retry decisions as data, backoff with full jitter, and ``Retry-After`` parsing.

Example:
    >>> RETRY_STATUSES[429], 404 in RETRY_STATUSES
    ('rate_limited', False)
    >>> parse_retry_after("120", now=0.0)
    120.0
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

__all__ = [
    "PERMANENT_STATUSES",
    "RETRY_STATUSES",
    "backoff_s",
    "parse_rate_limit",
    "parse_retry_after",
]

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


_EPOCH_AFTER = 1_000_000_000  # a reset this large is a Unix time, not a number of seconds


def parse_rate_limit(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds until the host's rate-limit window resets when it says none is left: the IETF
    ``RateLimit-Remaining`` / ``RateLimit-Reset`` fields, the combined ``RateLimit`` field
    (``limit=100, remaining=0, reset=30``) or the common ``X-RateLimit-*`` ones (whose reset
    may be a Unix time). None while requests remain, or when the host sends none of them.

    >>> parse_rate_limit({"ratelimit-remaining": "0", "ratelimit-reset": "30"}, now=0.0)
    30.0
    >>> parse_rate_limit({"ratelimit": "limit=100, remaining=0, reset=12"}, now=0.0)
    12.0
    >>> parse_rate_limit({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000060"},
    ...                  now=1_700_000_000.0)
    60.0
    >>> parse_rate_limit({"x-ratelimit-remaining": "7", "x-ratelimit-reset": "60"}, now=0.0)
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    fields: dict[str, str] = {}
    for part in lowered.get("ratelimit", "").split(","):
        key, _, value = part.strip().partition("=")
        fields[key.strip()] = value.strip()
    for prefix in ("ratelimit-", "x-ratelimit-"):
        for name in ("remaining", "reset"):
            if prefix + name in lowered and name not in fields:
                fields[name] = lowered[prefix + name].strip()
    remaining, reset = _number(fields.get("remaining")), _number(fields.get("reset"))
    if remaining is None or remaining > 0 or reset is None or reset < 0:
        return None
    return max(0.0, reset - now) if reset >= _EPOCH_AFTER else reset


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None
