"""What the store-feed adapters (Shopify, WooCommerce) share: the page they return, the notes that
make a dropped or doubtful value visible, barcodes → :class:`Identifiers`, labels → category.

A feed adapter either returns a :class:`FeedPage` or raises :class:`ParseError`; it never drops a
value silently. A barcode with a bad check digit is not an error in the payload (stores type them by
hand), so it is left out of the identifiers and reported as a :class:`FeedNote` instead.

Barcode rules (docs/domain.md#collectible-identity): 12 digits → UPC-A (17 with a comic's 5-digit
add-on); 13 digits → JAN when it starts 45/49, ISBN when it starts 978/979, EAN otherwise; 10
characters with an ISBN-10 check → ISBN. Spaces and hyphens are ignored.

Example:
    >>> identifiers_from(sku="PKM-BS-4", barcode="4521329239590")[0].jan
    '4521329239590'
    >>> identifiers_from(sku=None, barcode="012345678905")[0].upc
    '012345678905'
    >>> identifiers_from(sku=None, barcode="012345678900")[1][0].code.value
    'invalid_check_digit'
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import ValidationError

from rareindex_connectors.errors import ParseError, ParseReason, json_failure
from rareindex_connectors.records import Category, Identifiers, Listing, Money, parse_normalized

__all__ = [
    "BarcodeKind",
    "FeedNote",
    "FeedPage",
    "NoteCode",
    "barcode_kind",
    "category_from_labels",
    "identifiers_from",
    "load_json",
]

BarcodeKind = Literal["upc", "ean", "jan", "isbn"]


class NoteCode(StrEnum):
    """Why a feed adapter noted something instead of raising: a closed vocabulary."""

    INVALID_CHECK_DIGIT = "invalid_check_digit"  # a barcode-shaped code whose check digit fails
    UNRECOGNIZED_BARCODE = "unrecognized_barcode"  # a barcode field that is no UPC/EAN/JAN/ISBN
    CONFLICTING_BARCODE = "conflicting_barcode"  # sku and barcode are two different valid codes
    NO_PRICE = "no_price"  # a well-formed product the store sells without a price: no listing
    VARIATIONS_PENDING = "variations_pending"  # a variable product: fetch its variations
    TITLE_FLAG = "title_flag"  # a titles.TitleFlag (lot, reprint…) worth knowing; value = flag


@dataclass(frozen=True, slots=True)
class FeedNote:
    """One thing an adapter kept out of a record, or wants the connector to know."""

    external_id: str | None
    code: NoteCode
    field: str | None = None
    value: str | None = None


@dataclass(frozen=True, slots=True)
class FeedPage:
    """What one feed page yields: listings, notes, and product ids to fetch one by one."""

    listings: tuple[Listing, ...]
    notes: tuple[FeedNote, ...] = ()
    follow_up: tuple[str, ...] = ()


# --- JSON ---------------------------------------------------------------------------------------


def load_json(content: bytes | str) -> Any:
    """Decode a feed body; a body cut short is ``truncated``, other garbage ``invalid_json``.

    Raises:
        ParseError: ``empty_payload``, ``truncated``, ``encoding_error``, ``too_deep`` or
            ``invalid_json``.
    """
    try:
        return json.loads(content.decode("utf-8") if isinstance(content, bytes) else content)
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, too deep
        reason, message = json_failure(content)
        text = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
        raise ParseError(reason, message, snippet=text[-200:]) from None


# --- barcodes -----------------------------------------------------------------------------------


def _gtin_ok(digits: str) -> bool:
    body, check = digits[:-1], int(digits[-1])
    # Weights 3,1,3,1… from the digit next to the check digit leftwards (GS1).
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    return (10 - total % 10) % 10 == check


def _isbn10_ok(code: str) -> bool:
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(code))
    return total % 11 == 0


_ISBN10 = re.compile(r"^[0-9]{9}[0-9X]$")


def _without_noise(code: str) -> str:
    """A code without the white space and dashes written inside it, upper case."""
    return "".join(code.split()).replace("-", "").upper()


def barcode_kind(code: str) -> tuple[BarcodeKind | None, bool]:
    """``(kind, check_digit_ok)`` of a code; ``(None, False)`` when it is not barcode-shaped."""
    code = _without_noise(code)
    if code.isdigit() and code.isascii():
        if len(code) == 12 or (len(code) == 17):
            return "upc", _gtin_ok(code[:12])
        if len(code) == 13:
            kind: BarcodeKind = (
                "jan"
                if code[:2] in {"45", "49"}
                else "isbn"
                if code[:3] in {"978", "979"}
                else "ean"
            )
            return kind, _gtin_ok(code)
    if _ISBN10.match(code):
        return "isbn", _isbn10_ok(code)
    return None, False


def identifiers_from(
    *, sku: object, barcode: object, external_id: str | None = None, where: str = ""
) -> tuple[Identifiers, list[FeedNote]]:
    """Identifiers from a store's ``sku`` and ``barcode``, and notes on what was left out.

    The sku is always kept as ``sku``. Either field that is a valid UPC/EAN/JAN/ISBN fills that
    identifier; the ``barcode`` field wins over a different valid code in ``sku`` (noted).
    """
    notes: list[FeedNote] = []
    found: dict[str, str] = {}
    for name, value in (("barcode", barcode), ("sku", sku)):
        if not isinstance(value, str) or not value.strip():
            continue
        field = f"{where}.{name}" if where else name
        kind, ok = barcode_kind(value)
        code = _without_noise(value)
        if kind is None:
            if name == "barcode":
                notes.append(FeedNote(external_id, NoteCode.UNRECOGNIZED_BARCODE, field, value))
        elif not ok:
            notes.append(FeedNote(external_id, NoteCode.INVALID_CHECK_DIGIT, field, value))
        elif kind in found and found[kind] != code:
            notes.append(FeedNote(external_id, NoteCode.CONFLICTING_BARCODE, field, value))
        else:
            found.setdefault(kind, code)
    sku_text = sku.strip() if isinstance(sku, str) and sku.strip() else None
    return Identifiers(sku=sku_text, **found), notes


# --- categories ---------------------------------------------------------------------------------

# Store labels (product types, tags, category names) → Category. First match wins, so the specific
# rows come first. "jordan" is deliberately absent: Michael Jordan cards are not sneakers.
_CATEGORY_RULES: tuple[tuple[Category, str], ...] = (
    ("tcg_card", r"pok[eé]mon|magic:? the gathering|\bmtg\b|yu-?gi-?oh|one piece|lorcana|\btcg\b"),
    ("tcg_card", r"trading card game|digimon|flesh (?:and|&) blood|weiss schwarz"),
    ("comic", r"\bcomics?\b|graphic novel|\bmanga\b"),
    ("coin", r"\bcoins?\b|numismatic|bullion|\bpcgs\b|\bngc\b|silver dollar|morgan dollar"),
    ("sneaker", r"sneakers?|\bshoes?\b|footwear"),
    ("toy", r"\btoys?\b|funko|action figures?|\blego\b|hot wheels"),
    ("memorabilia", r"memorabilia|game[- ]used|\bjerseys?\b|signed photo"),
    ("sports_card", r"sports? cards?|baseball|basketball|football|hockey|soccer"),
    ("sports_card", r"\bnba\b|\bnfl\b|\bmlb\b|\bnhl\b|\bufc\b|\bf1\b|formula 1"),
)
_CATEGORY_RES = tuple((cat, re.compile(rx, re.IGNORECASE)) for cat, rx in _CATEGORY_RULES)


def category_from_labels(labels: Iterable[str]) -> Category | None:
    """The one category the labels point to, or ``None`` when none or several do."""
    found = set().union(*(_label_categories(label) for label in labels))
    return found.pop() if len(found) == 1 else None


@functools.lru_cache(maxsize=4096)
def _label_categories(label: str) -> frozenset[Category]:
    # A store's few product types and tags come back on every product: each is read once.
    return frozenset(cat for cat, rx in _CATEGORY_RES if rx.search(label))


# --- values with a location ---------------------------------------------------------------------

_MONEY_REASONS: Mapping[str, ParseReason] = {
    "float_money": ParseReason.FLOAT_MONEY,
    "amount_precision": ParseReason.AMOUNT_PRECISION,
    "unknown_currency": ParseReason.UNKNOWN_CURRENCY,
    "invalid_type": ParseReason.INVALID_TYPE,
}


def _money_error(exc: ValidationError, field: str, value: object) -> ParseError:
    first = exc.errors(include_url=False)[0]
    reason = _MONEY_REASONS.get(first["type"], ParseReason.INVALID_VALUE)
    return ParseError(reason, first["msg"], field=field, snippet=repr(value))


def money(amount: object, currency: str, *, field: str) -> Money:
    """``Money(amount, currency)``, its failure a :class:`ParseError` naming ``field``."""
    try:
        return Money(amount=amount, currency=currency)
    except ValidationError as exc:
        raise _money_error(exc, field, amount) from None


def minor_money(minor: object, currency: str, *, minor_unit: int, field: str) -> Money:
    """``Money.from_minor_units`` with a :class:`ParseError` naming ``field`` on failure."""
    if isinstance(minor, bool) or not isinstance(minor, int | str):
        raise ParseError(
            ParseReason.INVALID_TYPE,
            "minor units are a digit string",
            field=field,
            snippet=repr(minor),
        )
    try:
        return Money.from_minor_units(minor, currency, minor_unit=minor_unit)
    except ValidationError as exc:
        raise _money_error(exc, field, minor) from None
    except ValueError as exc:
        raise ParseError(
            ParseReason.INVALID_VALUE, str(exc), field=field, snippet=repr(minor)
        ) from None


def timestamp(value: object, *, field: str) -> datetime | None:
    """An ISO-8601 timestamp with an offset; ``None`` for null or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ParseError(ParseReason.INVALID_TYPE, "a timestamp is a string", field=field)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ParseError(
            ParseReason.INVALID_VALUE, "not an ISO-8601 timestamp", field=field, snippet=value
        ) from None
    if parsed.tzinfo is None:
        raise ParseError(ParseReason.NAIVE_DATETIME, "timestamp without offset", field=field)
    return parsed


def build_listing(data: dict[str, Any], *, where: str) -> Listing:
    """Validate a listing dict; a failure names the field under ``where`` (``products[2]``)."""
    try:
        record = parse_normalized({"kind": "listing", **data})
    except ParseError as exc:
        field = f"{where}.{exc.field}" if exc.field else where
        raise ParseError(exc.reason, str(exc), field=field, snippet=exc.snippet) from None
    if not isinstance(record, Listing):  # unreachable: the kind is fixed above
        raise ParseError(ParseReason.UNKNOWN_KIND, "not a listing", field=where)
    return record
