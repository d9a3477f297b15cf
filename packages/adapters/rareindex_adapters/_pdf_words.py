"""A PDF's words with their boxes, read by PDFium (pypdfium2). Private to ``pdf``.

PDFium gives each character its text and its box; characters are joined into a word while they sit
on the same line and less than ``X_TOLERANCE`` points apart, and a space (or a space PDFium
inserted) ends a word. Boxes are PDFium's *loose* ones — the font's ascent to its descent, the same
height for every glyph of a line — so that words of one line share their top whatever their
letters. Coordinates are points from the page's top-left corner, as a reader sees the page.

PDFium is C: a three-page results list takes ~10 ms where pdfminer's Python interpreter (through
pdfplumber) took ~200 ms, and the auction house's PDFs were 70% of every normalize pass. Its
library is not thread-safe, so every document is read under one lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

__all__ = ["X_TOLERANCE", "PdfUnreadable", "Word", "pages"]

X_TOLERANCE = 3.0  # points between two characters of one word (pdfplumber's default)
_Y_TOLERANCE = 3.0  # a character whose top moves more than this starts a new word
_LOCK = threading.Lock()


class PdfUnreadable(Exception):
    """Not a PDF PDFium can open (damaged, encrypted, not a PDF at all)."""


class Word(NamedTuple):
    """A word and its box (points from the top-left of the page)."""

    text: str
    x0: float
    x1: float
    top: float
    height: float


@contextmanager
def pages(pdf: bytes) -> Iterator[PageWords]:
    """Open ``pdf`` and yield its page count and a reader of each page's words.

    Raises:
        PdfUnreadable: PDFium cannot open it (its message says why).
    """
    with _LOCK:
        try:
            document = pdfium.PdfDocument(pdf)
        except pdfium.PdfiumError as exc:
            raise PdfUnreadable(str(exc) or type(exc).__name__) from None
        try:
            yield PageWords(document)
        finally:
            document.close()


class PageWords:
    """The pages of one open document: ``len()`` and ``words(index)``."""

    def __init__(self, document: pdfium.PdfDocument) -> None:
        self._document = document

    def __len__(self) -> int:
        return len(self._document)

    def words(self, index: int) -> list[Word]:
        """The words of page ``index`` (0-based), in the order the page draws them."""
        page = self._document[index]
        try:
            text = page.get_textpage()
            try:
                return _words(text.raw, page.get_height())
            finally:
                text.close()
        finally:
            page.close()


def _words(text_page: object, page_height: float) -> list[Word]:
    found: list[Word] = []
    box = pdfium_c.FS_RECTF()
    chars: list[str] = []
    x0 = x1 = top = bottom = 0.0
    for k in range(pdfium_c.FPDFText_CountChars(text_page)):
        char = chr(pdfium_c.FPDFText_GetUnicode(text_page, k))
        if char.isspace() or pdfium_c.FPDFText_IsGenerated(text_page, k) == 1:
            if chars:
                found.append(Word("".join(chars), x0, x1, top, bottom - top))
                chars = []
            continue
        if not pdfium_c.FPDFText_GetLooseCharBox(text_page, k, box):
            continue
        c_x0, c_x1 = box.left, box.right
        c_top, c_bottom = page_height - box.top, page_height - box.bottom
        if chars and (c_x0 > x1 + X_TOLERANCE or abs(c_top - top) > _Y_TOLERANCE):
            found.append(Word("".join(chars), x0, x1, top, bottom - top))
            chars = []
        if not chars:
            chars, x0, x1, top, bottom = [char], c_x0, c_x1, c_top, c_bottom
        else:
            chars.append(char)
            x1, top, bottom = max(x1, c_x1), min(top, c_top), max(bottom, c_bottom)
    if chars:
        found.append(Word("".join(chars), x0, x1, top, bottom - top))
    return found
