"""The words of a PDF page read from one text call and a box a character are the words a reading
that asks PDFium for every character's text, generated flag and box gives: the same text, the
same boxes, on ordinary pages and on pages whose characters have no Unicode, control characters,
surrogate pairs or ligature pieces (hand-made ToUnicode maps)."""

from __future__ import annotations

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from fpdf import FPDF

from rareindex_adapters import _pdf_words
from rareindex_adapters._pdf_words import X_TOLERANCE, Word

LINES = "72 700 Td (ABCD ABAB CDAB) Tj 0 -20 Td (AB CD) Tj"


def _one_call_a_character(text_page: object, page_height: float) -> list[Word]:
    """The words as read before ``_chars``: three ctypes calls a character."""
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
        if chars and (c_x0 > x1 + X_TOLERANCE or abs(c_top - top) > 3.0):
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


def _mapped_pdf(mapping: list[str], content: str = LINES) -> bytes:
    """One page of Helvetica text whose ToUnicode map gives codes the Unicode of ``mapping``."""
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
        "1 begincodespacerange <00> <FF> endcodespacerange\n"
        f"{len(mapping)} beginbfchar\n" + "\n".join(mapping) + "\nendbfchar endcmap "
        "CMapName currentdict /CMap defineresource pop end end"
    )
    stream = f"BT /F1 12 Tf {content} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        "/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream",
        f"<< /Length {len(cmap)} >>\nstream\n{cmap}\nendstream",
    ]
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def _fpdf_page() -> bytes:
    doc = FPDF()
    doc.core_fonts_encoding = "windows-1252"
    doc.add_page()
    doc.set_font("Helvetica", size=9)
    doc.cell(text="Lot  Description   Hammer  €1.250,50  “quoted”", new_x="LMARGIN", new_y="NEXT")
    doc.set_char_spacing(4)
    doc.cell(text="Spaced letters 9,99", new_x="LMARGIN", new_y="NEXT")
    doc.set_char_spacing(0)
    doc.multi_cell(w=40, text="A hyphen-ated para-graph that wraps a long-word-with-hyphens")
    doc.text(20, 250, "Sub")
    doc.text(27, 251.5, "script")
    doc.text(60, 260, "Over")
    doc.text(61, 260, "lap")
    return bytes(doc.output())


CASES = {
    "fpdf2 text": _fpdf_page(),
    "no Unicode (0)": _mapped_pdf(["<41> <0000>"]),
    "control characters": _mapped_pdf(["<41> <0003>", "<42> <0093>"]),
    "U+FFFE itself": _mapped_pdf(["<41> <FFFE>"]),
    "a surrogate pair": _mapped_pdf(["<41> <D83DDE00>"]),
    "two characters for one code": _mapped_pdf(["<41> <00660069>"]),
}


@pytest.mark.parametrize("pdf", CASES.values(), ids=CASES.keys())
def test_words_are_those_of_a_per_character_reading(pdf: bytes) -> None:
    document = pdfium.PdfDocument(pdf)
    try:
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            count = pdfium_c.FPDFText_CountChars(text_page.raw)
            each = "".join(
                chr(pdfium_c.FPDFText_GetUnicode(text_page.raw, k)) for k in range(count)
            )
            assert _pdf_words._chars(text_page.raw) == each
            expected = _one_call_a_character(text_page.raw, page.get_height())
            assert expected  # the page has words to compare
            assert _pdf_words._words(text_page.raw, page.get_height()) == expected
            text_page.close()
            page.close()
    finally:
        document.close()


def test_every_character_pdfium_generates_is_white_space() -> None:
    """``_words`` ends a word at ``isspace()`` only: PDFium's generated characters must be."""
    document = pdfium.PdfDocument(CASES["fpdf2 text"])
    page = document[0]
    text_page = page.get_textpage()
    generated = [
        chr(pdfium_c.FPDFText_GetUnicode(text_page.raw, k))
        for k in range(pdfium_c.FPDFText_CountChars(text_page.raw))
        if pdfium_c.FPDFText_IsGenerated(text_page.raw, k) == 1
    ]
    text_page.close()
    page.close()
    document.close()
    assert generated  # the page has some (between its cells, at line ends)
    assert all(char.isspace() for char in generated)
