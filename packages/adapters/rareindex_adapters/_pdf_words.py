"""A PDF's words with their boxes, read by PDFium (pypdfium2). Private to ``pdf``.

PDFium gives each character its text and its box; characters are joined into a word while they sit
on the same line and less than ``X_TOLERANCE`` points apart, and a space (or a space PDFium
inserted) ends a word. Boxes are PDFium's *loose* ones — the font's ascent to its descent, the same
height for every glyph of a line — so that words of one line share their top whatever their
letters. Coordinates are points from the page's top-left corner, as a reader sees the page.

PDFium is C: a three-page results list takes ~10 ms where pdfminer's Python interpreter (through
pdfplumber) took ~200 ms, and the auction house's PDFs were 70% of every normalize pass. Its
library is not thread-safe, so every document is read under one lock.

Each ctypes call costs about as much as the Python around it, so a page's characters come in one
``FPDFText_GetText`` call (``_chars``) and only the box is asked character by character. The
characters PDFium inserts (``FPDFText_IsGenerated``) are spaces and line breaks (``\r``, ``\n``:
``CPDF_TextPage`` generates no other), so ``isspace()`` alone ends a word.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

__all__ = ["X_TOLERANCE", "PdfUnreadable", "Word", "pages"]

X_TOLERANCE = 3.0  # points between two characters of one word (pdfplumber's default)
_Y_TOLERANCE = 3.0  # a character whose top moves more than this starts a new word
_LOCK = threading.Lock()
_BOX = struct.Struct("4f").unpack_from  # FS_RECTF: left, top, right, bottom (C floats)


def _unchecked(function: Any) -> Any:
    """A PDFium function called with ctypes objects as they are: its declared argument types make
    ctypes check and convert every argument, about half of a call's cost. For the one call made
    for each character, with a ``c_void_p`` page, an ``int`` index and a ``byref`` box (a
    prototype without argument types passes each by its own ctypes type)."""
    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.cast(function, ctypes.c_void_p).value or 0)


_LOOSE_BOX = _unchecked(pdfium_c.FPDFText_GetLooseCharBox)  # FPDF_BOOL (text_page, index, rect)


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


def _words(text_page: Any, page_height: float) -> list[Word]:
    found: list[Word] = []
    box = pdfium_c.FS_RECTF()
    page = ctypes.cast(text_page, ctypes.c_void_p)  # as _LOOSE_BOX takes it
    box_ref, loose_box, read_box = ctypes.byref(box), _LOOSE_BOX, _BOX
    chars: list[str] = []
    x0 = x1 = top = bottom = 0.0
    for k, char in enumerate(_chars(text_page)):
        if char.isspace():  # PDFium's generated characters are all spaces or line breaks
            if chars:
                found.append(Word("".join(chars), x0, x1, top, bottom - top))
                chars = []
            continue
        if not loose_box(page, k, box_ref):
            continue
        left, c_top, right, c_bottom = read_box(box)
        c_top, c_bottom = page_height - c_top, page_height - c_bottom
        if chars and not (left > x1 + X_TOLERANCE or abs(c_top - top) > _Y_TOLERANCE):
            chars.append(char)  # the same word: its box grows (as max() and min() would)
            if right > x1:
                x1 = right
            if c_top < top:
                top = c_top
            if c_bottom > bottom:
                bottom = c_bottom
            continue
        if chars:
            found.append(Word("".join(chars), x0, x1, top, bottom - top))
        chars, x0, x1, top, bottom = [char], left, right, c_top, c_bottom
    if chars:
        found.append(Word("".join(chars), x0, x1, top, bottom - top))
    return found


def _chars(text_page: object) -> str:
    """The page's characters, the k-th for PDFium's character k (``FPDFText_GetUnicode``).

    One ``FPDFText_GetText`` call for the page instead of one call a character. Its text holds
    each character PDFium does not leave out, as ``GetUnicode`` gives it, except U+FFFE, which
    stands for a character without Unicode (0) or a line-end hyphen (2): those are asked one by
    one. When the text is not one character per PDFium character (a control character left out,
    a surrogate pair read back as one character), every character is asked one by one.
    """
    count = pdfium_c.FPDFText_CountChars(text_page)
    if count <= 0:
        return ""
    buffer = (ctypes.c_ushort * (count + 1))()
    written = pdfium_c.FPDFText_GetText(text_page, 0, count, buffer)
    text = bytes(buffer)[: 2 * max(written - 1, 0)].decode("utf-16-le", "surrogatepass")
    unicode = pdfium_c.FPDFText_GetUnicode
    if len(text) != count:
        return "".join(chr(unicode(text_page, k)) for k in range(count))
    if "\ufffe" not in text:
        return text
    return "".join(
        chr(unicode(text_page, k)) if char == "\ufffe" else char for k, char in enumerate(text)
    )
