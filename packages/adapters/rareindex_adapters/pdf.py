"""Prices-realised PDFs (an auction house's list of results) to rows, and rows to auction lots.

How a page is read (PDFium's words with their x positions, so blank cells stay blank):

1. A **header line** names the columns: a ``Lot`` word plus at least one price column, recognised
   by its words (``Hammer``; ``Premium``/``BP``/``Commission``; ``Realised``/``Realized``/
   ``Total``/``Price``; ``Estimate`` columns are recognised and ignored). A page without a header
   reuses the previous page's columns; a document without any raises ``unexpected_shape``,
   because amounts without a header cannot be told apart.
2. Each later line that starts with a lot number (``57``, ``57A``, ``A12``) in the lot column is a
   row. Trailing amounts are grouped into phrases (``EUR 1.250,50``, ``10.000,00 €``) and each
   phrase goes to the price column it sits under; a number under no price column (the ``8`` of
   ``PSA 8``) stays in the title. ``Passed``/``Unsold``/``Bought-in``/``Withdrawn`` set the status.
3. A line with no lot number and no amounts continues the previous row's title (wrapped text);
   page numbers and repeated headers are skipped.

Amounts are read by ``_amounts`` (locale formats, ISO codes and unambiguous symbols). A bare ``$``
or ``¥`` needs ``currency=``. A row that cannot be read is **rejected with a reason**, not dropped:
no price and no status, an unreadable amount, mixed currencies, an amount outside any price
column, ``realised < hammer`` or ``hammer + premium != realised`` (both mean the columns were
misread), or a lot number seen before. Space-grouped amounts (``1 250,00``) are not supported:
they are two words on the page. Multi-column page layouts are not supported.

Example:
    >>> rows = parse_prices_realised(pdf_bytes, currency="USD")  # doctest: +SKIP
    >>> lots = rows_to_auction_lots(rows.rows, auction_id="ha-1234")  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from rareindex_connectors.errors import ParseError, ParseReason
from rareindex_connectors.records import AuctionLot, Money, currency_minor_unit, parse_normalized

from . import _pdf_layout as _layout
from . import _pdf_words as _words
from ._amounts import parse_money
from ._pdf_words import PageWords, PdfUnreadable
from ._rejected import Rejected, bare_message

__all__ = [
    "MAX_PDF_BYTES",
    "MAX_PDF_PAGES",
    "PriceRealisedRow",
    "PricesRealised",
    "parse_prices_realised",
    "rows_to_auction_lots",
]

MAX_PDF_BYTES = 50 * 1024 * 1024
MAX_PDF_PAGES = 2_000

Status = Literal["sold", "passed", "withdrawn"]
_PAGE_NUMBER = re.compile(r"(?:page\s*)?\d+(?:\s*(?:of|/)\s*\d+)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PriceRealisedRow:
    """One lot's result, amounts as the document printed them (never derived)."""

    lot_number: str
    title: str
    status: Status
    hammer: Money | None = None
    buyer_premium: Money | None = None
    price_realised: Money | None = None
    page: int = 1


@dataclass(frozen=True, slots=True)
class PricesRealised:
    """Every row of the document: read (``rows``) or ``rejected`` with a reason."""

    rows: tuple[PriceRealisedRow, ...]
    rejected: tuple[Rejected, ...]


@dataclass(slots=True)
class _Draft:
    lot: str
    page: int
    where: str
    line: str
    title: list[str]
    bottom: float = 0.0
    cells: dict[str, str] = field(default_factory=dict)
    status: Status = "sold"


def _rejected_line(message: str, where: str, text: str, field: str | None = None) -> Rejected:
    reason = ParseReason.MISSING_FIELD if field else ParseReason.UNEXPECTED_SHAPE
    return Rejected(reason, message, where=where, field=field, snippet=text)


def _row(
    line: list[_layout.Word], columns: list[_layout.Column], page: int, where: str
) -> _Draft | Rejected | None:
    """A new row, a rejected line, or ``None`` for a line without a lot number or amounts."""
    text = " ".join(w.text for w in line)
    first_other = min((c.x0 for c in columns if c.kind != "lot"), default=float("inf"))
    in_lot_column = line[0].x0 < first_other - 0.5  # a wrapped title starts under the title
    lot = line[0].text if in_lot_column and _layout.LOT.fullmatch(line[0].text) else None
    rest = line[1:] if lot else line
    start = len(rest)
    while start > 0 and _layout.amount_like(rest[start - 1].text):
        start -= 1
    title = [w.text for w in rest[:start]]
    draft = _Draft(lot or "", page, where, text, [], bottom=line[0].top + line[0].height)
    placed: set[str] = set()
    for phrase in _layout.phrases(rest[start:]):
        phrase_text = " ".join(w.text for w in phrase)
        low = phrase_text.lower()
        if low in _layout.STATUS:
            draft.status = "withdrawn" if _layout.STATUS[low] == "withdrawn" else "passed"
            continue
        column = _layout.column_for(phrase, columns)
        if column is None:
            if placed:
                return _rejected_line("amount outside any price column", where, text)
            title.append(phrase_text)  # a number in the title: "PSA 8", "#57", "1909-S"
            continue
        if column.kind in placed and column.kind in _layout.PRICE_KINDS:
            return _rejected_line(f"two amounts under {column.kind}", where, text)
        placed.add(column.kind)
        if column.kind in _layout.PRICE_KINDS and not _layout.is_dash(low):
            draft.cells[column.kind] = phrase_text
    draft.title = title
    if lot is None:
        if draft.cells:
            return _rejected_line("amounts without a lot number", where, text, "lot_number")
        return None
    return draft


def _finish(draft: _Draft, currency: str | None) -> PriceRealisedRow:
    prices: dict[str, Money] = {}
    for kind, text in draft.cells.items():
        try:
            prices[kind] = parse_money(text, currency=currency)
        except ParseError as exc:
            raise ParseError(
                exc.reason, bare_message(exc), field=kind, snippet=draft.line
            ) from None
    if len({m.currency for m in prices.values()}) > 1:
        raise ParseError(
            ParseReason.CURRENCY_MISMATCH, "amounts in several currencies", snippet=draft.line
        )
    if draft.status != "sold" and prices:
        raise ParseError(
            ParseReason.INVALID_VALUE, f"{draft.status} lot with a price", snippet=draft.line
        )
    if draft.status == "sold" and not prices:
        raise ParseError(
            ParseReason.MISSING_FIELD,
            "no price and no status",
            field="price_realised",
            snippet=draft.line,
        )
    hammer, premium, realised = (prices.get(k) for k in _layout.PRICE_KINDS)
    if hammer and realised and realised.amount < hammer.amount:
        raise ParseError(
            ParseReason.INVALID_VALUE, "price realised below hammer", snippet=draft.line
        )
    if hammer and premium and realised and hammer.amount + premium.amount != realised.amount:
        raise ParseError(
            ParseReason.INVALID_VALUE, "hammer + premium != price realised", snippet=draft.line
        )
    return PriceRealisedRow(
        lot_number=draft.lot,
        title=" ".join(" ".join(draft.title).split()),
        status=draft.status,
        hammer=hammer,
        buyer_premium=premium,
        price_realised=realised,
        page=draft.page,
    )


def _continues(draft: _Draft, line: list[_layout.Word]) -> bool:
    """Whether ``line`` is wrapped title text of ``draft``: right below it, not a page number."""
    text = " ".join(w.text for w in line)
    close = line[0].top - draft.bottom <= 0.8 * line[0].height
    return close and not _PAGE_NUMBER.fullmatch(text)


def _drafts(document: PageWords) -> list[_Draft | Rejected]:
    """Row drafts and rejected lines, in document order."""
    found: list[_Draft | Rejected] = []
    columns: list[_layout.Column] | None = None
    for page_no in range(1, len(document) + 1):
        lines = _layout.lines(document.words(page_no - 1))
        line_headers = [_layout.header(line) for line in lines]
        headers = [i for i, header in enumerate(line_headers) if header is not None]
        first = headers[0] if headers else 0  # above the header: title block, running head
        last: _Draft | None = None
        for line_no, line in enumerate(lines[first:], start=first + 1):
            header = line_headers[line_no - 1]
            if header is not None:
                columns, last = header, None
                continue
            if columns is None:
                continue
            result = _row(line, columns, page_no, f"page {page_no}, line {line_no}")
            if isinstance(result, Rejected):
                found.append(result)
            elif result is not None:
                found.append(result)
                last = result
            elif last is not None and _continues(last, line):
                last.title.extend(w.text for w in line)
                last.bottom = line[0].top + line[0].height
            else:
                last = None  # a footer or section heading ends the row above it
    if columns is None:
        raise ParseError(ParseReason.UNEXPECTED_SHAPE, "no header line with Lot and a price column")
    return found


def parse_prices_realised(pdf: bytes, *, currency: str | None = None) -> PricesRealised:
    """Read a prices-realised PDF. ``currency`` (ISO-4217) is stated by the caller: it gives bare
    ``$``/``¥`` amounts their currency, and an amount marked otherwise is rejected as a mismatch.

    Raises:
        ParseError: ``empty_payload``, ``too_large`` (over 50 MiB or 2,000 pages),
            ``unexpected_shape`` (not a readable PDF, encrypted, or no header line).
        ValueError: ``currency`` is not an ISO-4217 code.
    """
    if currency is not None:
        currency = currency.upper()
        try:
            currency_minor_unit(currency)
        except KeyError:
            raise ValueError(f"{currency!r} is not an ISO-4217 currency") from None
    if not pdf.strip():
        raise ParseError(ParseReason.EMPTY_PAYLOAD, "empty PDF")
    if len(pdf) > MAX_PDF_BYTES:
        raise ParseError(ParseReason.TOO_LARGE, f"PDF is {len(pdf)} bytes")
    try:
        with _words.pages(pdf) as document:
            if len(document) > MAX_PDF_PAGES:
                raise ParseError(ParseReason.TOO_LARGE, f"PDF has {len(document)} pages")
            drafts = _drafts(document)
    except PdfUnreadable as exc:
        raise ParseError(
            ParseReason.UNEXPECTED_SHAPE,
            f"not a readable PDF: {exc}",
            snippet=pdf[:64].decode("latin-1"),
        ) from None
    rows: list[PriceRealisedRow] = []
    rejected: list[Rejected] = []
    seen: set[str] = set()
    for draft in drafts:
        if isinstance(draft, Rejected):
            rejected.append(draft)
            continue
        try:
            if draft.lot in seen:
                raise ParseError(
                    ParseReason.INVALID_VALUE,
                    "lot number seen before",
                    field="lot_number",
                    snippet=draft.line,
                )
            rows.append(_finish(draft, currency))
            seen.add(draft.lot)
        except ParseError as exc:
            rejected.append(Rejected.from_error(exc, where=draft.where))
    return PricesRealised(rows=tuple(rows), rejected=tuple(rejected))


def rows_to_auction_lots(
    rows: Iterable[PriceRealisedRow],
    *,
    auction_id: str,
    auction_title: str | None = None,
    buyer_premium_rate: Decimal | None = None,
    title_fields: Callable[[str], Mapping[str, Any]] | None = None,
) -> list[AuctionLot]:
    """Rows as :class:`AuctionLot` records, hammer and price realised kept apart as printed.

    ``buyer_premium_rate`` is the house's rate for the sale (``Decimal("0.20")``). A row that
    prints both hammer and premium gives its own effective rate instead (premium / hammer, to
    four places), since minimum premiums make it differ from the nominal rate. Nothing is
    derived: a row without a printed price realised has ``price_realised=None``.
    ``external_id`` is ``"{auction_id}:{lot_number}"``; an empty title becomes ``"Lot N"``.
    ``title_fields`` gives more fields of a lot from its title (a connector's ``grading`` and
    ``condition`` from :func:`.titles.lift_grading`): they are validated with the lot, once.

    Raises:
        ParseError: a row does not make a valid lot (``field`` is prefixed with its lot number).
    """
    lots: list[AuctionLot] = []
    for row in rows:
        rate = buyer_premium_rate
        if row.hammer and row.buyer_premium and row.hammer.amount > 0:
            rate = (row.buyer_premium.amount / row.hammer.amount).quantize(Decimal("0.0001"))
        record = {
            "kind": "auction_lot",
            "external_id": f"{auction_id}:{row.lot_number}",
            "title": row.title or f"Lot {row.lot_number}",
            "auction_id": auction_id,
            "auction_title": auction_title,
            "lot_number": row.lot_number,
            "status": row.status,
            "hammer_price": row.hammer,
            "buyer_premium_rate": rate,
            "price_realised": row.price_realised,
        }
        if title_fields is not None:
            record |= title_fields(str(record["title"]))
        try:
            lot = parse_normalized(record)
        except ParseError as exc:
            raise ParseError(
                exc.reason,
                bare_message(exc),
                field=f"lot {row.lot_number}.{exc.field or ''}".rstrip("."),
                snippet=exc.snippet,
            ) from None
        if not isinstance(lot, AuctionLot):  # pragma: no cover - kind is fixed above
            raise TypeError(type(lot).__name__)
        lots.append(lot)
    return lots
