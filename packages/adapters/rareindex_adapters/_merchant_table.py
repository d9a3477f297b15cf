"""Google Merchant Center product feeds as the tab-separated or CSV files merchants upload
(``id<TAB>title<TAB>description<TAB>link<TAB>…<TAB>price``, ``price`` as ``15.00 USD``). Private
to ``feeds``, which reads each row as a Merchant item, exactly as an RSS ``<item>`` with ``g:``
fields (see ``_merchant``).

A file is such a feed only when its header row has Merchant's own columns: ``id``, ``title``,
``link`` and ``price``, and at least one of ``availability``, ``image_link`` or ``condition``
(names as Merchant Center documents them, case-insensitive, an optional ``g:`` prefix, spaces for
underscores accepted). Any other CSV (``id,title,price``, a spreadsheet export) is not one.
The delimiter is a tab when the header has one, else a comma.
"""

from __future__ import annotations

import csv
import io
from typing import Any

__all__ = ["PREFIX", "header_columns", "looks_like_merchant_table", "rows"]

PREFIX = "g"
"""The prefix each row's fields get, as feedparser keys a ``g:price`` element (``g_price``)."""

_REQUIRED = frozenset({"id", "title", "link", "price"})
_ONE_OF = frozenset({"availability", "image_link", "condition"})


def _text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _column(name: str) -> str:
    name = name.strip().strip('"').strip().lower()
    return name.removeprefix("g:").replace(" ", "_")


def header_columns(data: bytes) -> tuple[list[str], str] | None:
    """The normalised header columns and the delimiter, or None when it is no Merchant table."""
    text = _text(data[:65536])
    if text is None:
        return None
    first = text.lstrip("\r\n").split("\n", 1)[0].rstrip("\r")
    if not first or first.lstrip().startswith(("<", "{", "[")):
        return None
    delimiter = "\t" if "\t" in first else ","
    columns = [_column(c) for c in next(csv.reader([first], delimiter=delimiter), [])]
    if not set(columns) >= _REQUIRED or not _ONE_OF & set(columns):
        return None
    return columns, delimiter


def looks_like_merchant_table(data: bytes) -> bool:
    """Whether ``data`` is a Merchant TSV or CSV product feed: its header has Merchant's columns."""
    return header_columns(data) is not None


def rows(data: bytes) -> tuple[str, list[dict[str, Any]]]:
    """``("merchant-tsv" | "merchant-csv", rows)``: each row as a feed entry whose Merchant fields
    are keyed ``g_<column>``. An empty cell is absent. Call only when
    :func:`looks_like_merchant_table` says so."""
    found = header_columns(data)
    text = _text(data)
    if found is None or text is None:  # pragma: no cover - the caller checked
        raise ValueError("not a Merchant product table")
    columns, delimiter = found
    reader = csv.reader(io.StringIO(text.lstrip("\r\n")), delimiter=delimiter)
    next(reader, None)
    entries = []
    for cells in reader:
        if not any(c.strip() for c in cells):
            continue  # a blank line
        entry = {
            f"{PREFIX}_{column}": cell.strip()
            for column, cell in zip(columns, cells, strict=False)
            if cell.strip()
        }
        entries.append(entry)
    return ("merchant-tsv" if delimiter == "\t" else "merchant-csv"), entries
