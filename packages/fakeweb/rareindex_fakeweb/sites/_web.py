"""What every fake site shares: seeded randomness, lazy values, byte-stable responses, money text.

Each site draws from its own :func:`site_rng` (``seed`` plus the site's name), so a site's pages do
not depend on which other site was asked first. Absolute URLs echo the request's ``Host`` header
(:func:`origin`): a client that sends ``Host: auction.fake.test`` gets ``http://auction.fake.test``
links, one that sends the port gets the port.
"""

from __future__ import annotations

import html
import json
import random
import threading
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Generic, TypeVar

from starlette.requests import Request
from starlette.responses import Response

T = TypeVar("T")

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
"""The fake web's "today": every generated date lies before it, so pages never depend on the
clock."""

esc = html.escape

PIXEL_GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00"
    b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
"""A 1x1 GIF: what image URLs on the fake sites answer."""


def site_rng(seed: int, name: str) -> random.Random:
    """A generator for one site or purpose. String seeds hash with SHA-512: stable everywhere."""
    return random.Random(f"rareindex-fake-web/{seed}/{name}")


class Lazy(Generic[T]):
    """A value built on first use, once, even when two threads ask at the same time."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build: Callable[[], T] | None = build
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._build is not None:
                self._value = self._build()
                self._build = None
            return self._value  # type: ignore[return-value]  # set exactly once above


def json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def json_response(
    data: Any, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        json_bytes(data),
        status_code=status,
        headers=dict(headers or {}),
        media_type="application/json; charset=utf-8",
    )


def html_response(
    text: str, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        text, status_code=status, headers=dict(headers or {}), media_type="text/html; charset=utf-8"
    )


def page(title: str, body: str, *, head: str = "", lang: str = "en") -> str:
    """A small HTML5 document; ``title`` is escaped, ``head`` and ``body`` are HTML."""
    return (
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>{head}</head>\n<body>{body}</body></html>\n"
    )


def not_found(what: str = "Page") -> Response:
    return html_response(page("Not found", f"<h1>{esc(what)} not found</h1>"), status=404)


def origin(request: Request, host: str) -> str:
    """``http://<Host header>``, falling back to ``host`` when the client sent none."""
    return f"http://{request.headers.get('host') or host}"


def int_param(request: Request, name: str, default: int) -> int | None:
    """A query parameter as an int: ``default`` when absent, ``None`` when not an integer."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        return None


def moment(rng: random.Random, *, days: int, before: datetime = NOW) -> datetime:
    """A whole-second instant up to ``days`` before ``before``."""
    return before - timedelta(seconds=rng.randrange(60, days * 86400))


def iso_offset(when: datetime, hours: int) -> str:
    """``when`` shown at a fixed UTC offset, e.g. ``2026-03-03T11:24:11-08:00``."""
    return when.astimezone(timezone(timedelta(hours=hours))).isoformat()


def us_offset(when: datetime, standard: int) -> int:
    """The UTC offset in hours of a US time zone (``standard``: -5 Eastern, -8 Pacific) at
    ``when``, with daylight saving from the second Sunday of March to the first of November."""
    local = when.astimezone(UTC).replace(tzinfo=None) + timedelta(hours=standard)
    march = datetime(local.year, 3, 8)
    start = march + timedelta(days=(6 - march.weekday()) % 7, hours=2)
    november = datetime(local.year, 11, 1)
    end = november + timedelta(days=(6 - november.weekday()) % 7, hours=1)
    return standard + 1 if start <= local < end else standard


def us_local_iso(when: datetime, standard: int) -> str:
    """``when`` in a US zone, ISO 8601 with its offset (``2026-03-03T11:24:11-08:00``)."""
    return iso_offset(when, us_offset(when, standard))


def grouped(cents: int, thousands: str, decimal: str) -> str:
    """``123456789`` cents -> ``1,234,567.89`` with the given separators."""
    units, rest = divmod(abs(cents), 100)
    sign = "-" if cents < 0 else ""
    return f"{sign}{units:,}".replace(",", thousands) + f"{decimal}{rest:02d}"


def usd(cents: int) -> str:
    """``$10,000.00``"""
    return "$" + grouped(cents, ",", ".")


def eur(cents: int) -> str:
    """``10.000,00 €`` (German / French style grouping)"""
    return grouped(cents, ".", ",") + " €"


def gbp(cents: int) -> str:
    """``£45.00``"""
    return "£" + grouped(cents, ",", ".")


def decimal_text(cents: int) -> str:
    """``123456`` -> ``1234.56``: a machine-readable amount (JSON-LD, Shopify prices)."""
    units, rest = divmod(cents, 100)
    return f"{units}.{rest:02d}"


def slugify(text: str) -> str:
    """Lowercase ASCII words joined by ``-`` (``Pokémon 4/102`` -> ``pokemon-4-102``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = "".join(ch.lower() if ch.isalnum() else " " for ch in ascii_text).split()
    return "-".join(words)


def script_json(data: Any) -> str:
    """JSON for an inline ``<script>``: ``</`` escaped so the blob cannot close its tag."""
    return json_bytes(data).decode().replace("</", "<\\/")
