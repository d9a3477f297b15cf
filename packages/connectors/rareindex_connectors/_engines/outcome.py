"""What a target's HTTP status means, shared by every engine, plus the paid engines' helpers.

One table for all engines: 429 (and a 503 with ``Retry-After``) -> :class:`RateLimited`
(with its ``Retry-After``), the retry
statuses -> :class:`TransientFetchError`, any other 4xx/5xx -> :class:`PermanentFetchError`. A
404/410 is the host answering sensibly, so it counts as a *success* for the host's breaker.

Example:
    >>> error_for_status(404, url="u", host="h", engine="api", permit=None).status
    404
"""

from __future__ import annotations

from urllib.parse import quote, quote_plus

from .._gates import Permit
from ..errors import FetchError, PermanentFetchError, RateLimited, TransientFetchError
from .retry import RETRY_STATUSES

__all__ = ["charged", "error_for_status", "scrub_secret"]


def error_for_status(
    status: int,
    *,
    url: str,
    host: str,
    engine: str,
    permit: Permit | None,
    retry_after: float | None = None,
) -> FetchError:
    """The error for a target's status >= 400 (the caller raises it)."""
    via = "" if engine == "api" else f" via {engine}"
    if status == 429 or (status == 503 and retry_after is not None):
        # A 503 with Retry-After is the host saying when to come back, as a 429 does.
        return RateLimited(
            f"{status} from {host}{via}", url=url, host=host, engine=engine, retry_after=retry_after
        )
    if status in RETRY_STATUSES:
        return TransientFetchError(
            f"{status} {RETRY_STATUSES[status]} from {host}{via}", url=url, host=host, engine=engine
        )
    if permit is not None:  # the host answered sensibly: it is up
        permit.outcome = "success" if status in {404, 410} else "neutral"
    return PermanentFetchError(
        f"{status} from {host}{via}", url=url, host=host, engine=engine, status=status
    )


def charged(error: FetchError, credits: float) -> FetchError:
    """``error`` carrying the credits the vendor billed anyway, for the cost ledger."""
    error.credits = float(credits)
    return error


def scrub_secret(text: str, secret: str | None) -> str:
    """``text`` without ``secret`` in any of the forms a URL or header may carry it."""
    if secret:
        for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
            text = text.replace(form, "***")
    return text
