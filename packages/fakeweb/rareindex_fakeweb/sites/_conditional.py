"""Validators on the fake stores' responses, and 304 to a conditional request that matches.

A 200 gets ``ETag`` (a hash of the body, so it changes exactly when the bytes do) and, when the
site knows when the content last changed, ``Last-Modified``. ``If-None-Match`` decides when it is
sent (RFC 9110 §13.2.2: it takes precedence); otherwise ``If-Modified-Since`` is compared with
``Last-Modified`` to the second. A 304 carries the validators and no body.

Example:
    >>> http_date("2026-04-20T09:00:00-04:00")
    'Mon, 20 Apr 2026 13:00:00 GMT'
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["conditional", "http_date", "newest"]


def http_date(iso: str) -> str:
    """An ISO-8601 time with an offset, as an HTTP-date (``Last-Modified``)."""
    return format_datetime(datetime.fromisoformat(iso).astimezone(UTC), usegmt=True)


def newest(times: Iterable[str]) -> str | None:
    """The latest of some ISO-8601 times, as an HTTP-date; ``None`` for none."""
    parsed = [datetime.fromisoformat(t).astimezone(UTC) for t in times if t]
    return format_datetime(max(parsed), usegmt=True) if parsed else None


def _not_modified_since(header: str, last_modified: str) -> bool:
    try:
        return parsedate_to_datetime(last_modified) <= parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False  # an unreadable date: answer in full, as servers do


def conditional(request: Request, response: Response, last_modified: str | None) -> Response:
    """``response`` with its validators, or a 304 when the request's validators match."""
    if response.status_code != 200:
        return response
    etag = '"' + hashlib.sha256(bytes(response.body)).hexdigest()[:20] + '"'
    validators = {"etag": etag}
    if last_modified:
        validators["last-modified"] = last_modified
    if_none_match = request.headers.get("if-none-match")
    if_modified_since = request.headers.get("if-modified-since")
    if if_none_match is not None:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        unchanged = "*" in tags or etag in tags
    elif if_modified_since and last_modified:
        unchanged = _not_modified_since(if_modified_since, last_modified)
    else:
        unchanged = False
    if unchanged:
        return Response(status_code=304, headers=validators)
    response.headers.update(validators)
    return response
