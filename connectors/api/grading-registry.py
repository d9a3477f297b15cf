"""``grading-registry``: the certificate registry ``grader.fake.test``: certs and pop reports.

What is crawlable: nothing by discovery. Like PSA's, this registry publishes no index of certs
or specs: ``/cert/<n>`` and ``/pop/<spec>`` answer only for a number you already hold (spec ids
are sparse, so probing them is out), and a cert page is the only thing that links to a pop report.
So the connector has two halves:

* ``lookup(url, ctx)`` — the cert-verify path. ``http(s)://grader.fake.test/cert/<n>`` (or a bare
  cert number, ``12345678`` / ``4321000-001``) -> one raw record of ``/cert/<n>.json`` (the
  registry's JSON envelope, ``Cert.SpecID`` included); ``/pop/<spec>`` -> that pop report. Any
  other URL -> ``[]``. An unknown cert raises ``PermanentFetchError`` with ``status=404``: "no
  such cert" is an answer the caller must see, not an empty list.
* ``crawl(ctx)`` — refreshes the pop reports (``/pop/<spec>.json``) of a watchlist of spec ids,
  :data:`WATCHLIST` unless the constructor is given another. The specs of newly verified certs
  reach the index through ``lookup()`` of their ``/pop/<SpecID>`` URL.

Normalize: a pop report -> one :class:`PopulationReport`: counts and total as the registry states
them, grade keys written as :class:`Grading` writes grades (``9.0`` -> ``9``), ``as_of`` = when it
was fetched, category ``coin`` for PCGS/NGC, ``comic`` for CGC's comic scale, else unknown (the
report does not say sports card or TCG). A **cert payload -> ``[]``**, on
purpose: ``NormalizedRecord`` has no certificate kind, and squeezing one in would lose facts (a
``PopulationReport`` of one grade invents a total; a ``CatalogItem`` drops the grade and keys an
item by a copy). Cert payloads stay raw, complete and immutable for the cert-verify stage, which
reads grader, grade, qualifier, subject and ``SpecID`` straight from them.

Cursor: ``{"next": i, "sweeps": s}``, set after each batch of :data:`BATCH` specs; a finished
sweep leaves ``{"next": 0, "sweeps": s + 1}``. ``max_pages`` = batches per run.

Usage::

    rareindex connectors check grading-registry --fake-web
    [cert] = await connector.lookup("https://grader.fake.test/cert/97038834", ctx)
    connector.normalize(raw_pop_report)  # [PopulationReport(counts={"10": 61, ...}, ...)]
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from rareindex_adapters import GRADERS
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.errors import ConnectorError, ParseError, ParseReason, PermanentFetchError
from rareindex_connectors.records import (
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)

ORIGIN = "http://grader.fake.test"
_HOST = r"^https?://grader\.fake\.test(?::\d+)?"
CERT_URL = re.compile(_HOST + r"/cert/(\d{5,12}(?:-\d{3})?)(?:\.json)?/?(?:[?#].*)?$")
POP_URL = re.compile(_HOST + r"/pop/(\d{1,12})(?:\.json)?/?(?:[?#].*)?$")
BARE_CERT = re.compile(r"^\s*#?(\d{7,10}(?:-\d{3})?)\s*$")
BATCH = 25
_COMIC_GRADES = frozenset({"9.8", "9.6", "9.4", "9.2", "0.5", "1.8"})
_WHOLE = re.compile(r"^(\d{1,2})\.0$")

WATCHLIST: tuple[int, ...] = (
    1023698, 1090690, 1101370, 1207786, 1236355, 1386225, 1403211, 1406966, 1424811, 1501867,
    1679590, 1748812, 1866607, 1891995, 1928451, 1955732, 2087136, 2140627, 2223502, 2319531,
    2324620, 2331785,
)  # fmt: skip
"""The specs whose pop reports every sweep refreshes. On the fake web: the specs of the slabs
whose certs appear in titles on ``market.fake.test``'s first page of sold results (every grader
and category). A real deployment lists the specs it indexes."""


class GradingRegistryConnector:
    """Pop reports of a spec watchlist; certs and pop reports by URL (``lookup``)."""

    meta = ConnectorMeta(
        id="grading-registry",
        source="Cert Verification (grader.fake.test)",
        engines=("api",),
        categories=("sports_card", "tcg_card", "comic", "coin"),
        capabilities=("population_report", "cert_lookup", "url_lookup"),
        refresh_class="NORMAL",
        url_patterns=(CERT_URL.pattern, POP_URL.pattern),
    )
    version = "1"
    parser_version = "1"

    def __init__(self, specs: Sequence[int] = WATCHLIST) -> None:
        self.specs = tuple(dict.fromkeys(specs))

    async def _fetch(self, ctx: CrawlContext, kind: str, number: str) -> RawRecordInput:
        result = await ctx.fetch(f"{ORIGIN}/{kind}/{number}.json", expect="json")
        body = result.json()
        if not isinstance(body, dict):
            raise ParseError(ParseReason.UNEXPECTED_SHAPE, "not an object", snippet=result.text)
        return RawRecordInput(
            external_id=f"{kind}:{number.replace('-', '')}",
            url=f"{ORIGIN}/{kind}/{number}",
            payload=body,
            engine=result.engine,
            http_status=result.status,
        )

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        cursor: dict[str, Any] = dict(ctx.cursor or {})
        sweeps = int(cursor.get("sweeps", 0))
        start = int(cursor.get("next", 0))
        start = start if 0 <= start < len(self.specs) else 0  # the watchlist shrank: start over
        batches = ctx.options.max_pages
        for first in range(start, len(self.specs), BATCH):
            if batches is not None and batches <= 0:
                return  # budget spent: the cursor already points at this batch
            batch = self.specs[first : first + BATCH]
            for spec in batch:
                try:
                    yield await self._fetch(ctx, "pop", str(spec))
                except PermanentFetchError as exc:  # a withdrawn spec must not stall the sweep
                    ctx.log.warning("pop.skipped", url=exc.url, status=exc.status)
            ctx.progress(pages=1, items=len(batch), total_pages=-(-len(self.specs) // BATCH))
            ctx.set_cursor({"next": first + len(batch), "sweeps": sweeps})
            batches = None if batches is None else batches - 1
        ctx.set_cursor({"next": 0, "sweeps": sweeps + 1})

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        """A pop report -> one :class:`PopulationReport`; a cert -> ``[]`` (module docstring).

        Raises:
            ParseError: neither shape (``unexpected_shape``), or a field that does not validate.
        """
        payload: Any = raw.payload
        if isinstance(payload, dict) and isinstance(payload.get("Cert"), dict):
            return []  # raw-only: the cert-verify stage reads it (no certificate record kind)
        if not isinstance(payload, dict) or not {"SpecID", "Population"} <= payload.keys():
            raise ParseError(
                ParseReason.UNEXPECTED_SHAPE,
                "neither a cert nor a pop report",
                snippet=repr(payload),
            )
        counts = payload["Population"]
        if isinstance(counts, dict):  # "9.0" -> "9": grade strings as Grading writes them
            counts = {_WHOLE.sub(r"\1", str(k)): v for k, v in counts.items()}
        grader = str(payload.get("Grader") or "")
        category = None
        if grader in {"PCGS", "NGC"}:
            category = "coin"
        elif grader == "CGC" and isinstance(counts, dict) and _COMIC_GRADES & counts.keys():
            category = "comic"
        return [
            parse_normalized(
                {
                    "kind": "population_report",
                    "external_id": str(payload["SpecID"]),
                    "grader": grader if grader in GRADERS else "OTHER",
                    "title": payload.get("Description"),
                    "category": category,
                    "counts": counts,
                    "total": payload.get("Total"),
                    "as_of": raw.fetched_at,
                    "url": raw.url,
                }
            )
        ]

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        """One fetch: the first watched pop report, its shape checked."""
        if not self.specs:
            return ConnectorHealth(status="DEGRADED", message="the watchlist is empty")
        try:
            record = await self._fetch(ctx, "pop", str(self.specs[0]))
        except ConnectorError as exc:
            return ConnectorHealth(status="BROKEN", message=f"{type(exc).__name__}: {exc}"[:300])
        body = record.payload
        ok = isinstance(body, dict) and "Population" in body
        return ConnectorHealth(
            status="UP" if ok else "DEGRADED",
            message=None if ok else "a pop report without a Population table",
        )

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        """A cert (URL or bare number) or a pop report URL, as one raw record; else ``[]``.

        Raises:
            PermanentFetchError: ``status=404`` for a cert or spec the registry does not know.
        """
        if match := CERT_URL.match(url) or BARE_CERT.match(url):
            return [await self._fetch(ctx, "cert", match[1])]
        if match := POP_URL.match(url):
            return [await self._fetch(ctx, "pop", match[1])]
        return []


connector = GradingRegistryConnector()
