"""Rate-limit headers a host sends: when they say the window is spent, for how long."""

from __future__ import annotations

import pytest

from rareindex_connectors._engines.retry import parse_rate_limit


@pytest.mark.parametrize(
    ("headers", "now", "wait"),
    [
        ({"RateLimit-Remaining": "0", "RateLimit-Reset": "30"}, 0.0, 30.0),
        ({"ratelimit": "limit=100, remaining=0, reset=12"}, 0.0, 12.0),
        ({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1700000060"}, 1_700_000_000.0, 60.0),
        ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1699999999"}, 1_700_000_000.0, 0.0),
        ({"x-ratelimit-remaining": "5", "x-ratelimit-reset": "60"}, 0.0, None),
        ({"ratelimit-remaining": "0"}, 0.0, None),  # no reset: nothing to wait for
        ({"ratelimit-remaining": "zero", "ratelimit-reset": "9"}, 0.0, None),
        ({}, 0.0, None),
    ],
)
def test_a_spent_window_says_how_long(
    headers: dict[str, str], now: float, wait: float | None
) -> None:
    assert parse_rate_limit(headers, now=now) == wait
