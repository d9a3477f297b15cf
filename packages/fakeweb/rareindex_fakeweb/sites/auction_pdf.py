"""The "prices realised" PDF of one sale, made with fpdf2 (a test-only dependency).

A bordered table (lot, title, hammer, buyer's premium, price realised) under a heading that states
the premium rate. Amounts are written the way the sale's locale writes them: ``$10,000.00`` in New
York and Dallas, ``10.000,00 €`` in Paris; unsold lots read ``Unsold``. The PDF uses a core font,
so titles lose characters outside Windows-1252 (``Dončić`` -> ``Doncic``), as real core-font
exports do. The creation date is the sale's closing date: the bytes depend on the seed only.
"""

from __future__ import annotations

import unicodedata

from ._web import eur, usd
from .auction_data import Sale

__all__ = ["money", "pdf_text", "prices_realised_pdf"]

HEADER = ("Lot", "Title", "Hammer", "Buyer's premium", "Price realised")


def money(cents: int, currency: str) -> str:
    """An amount as this auction house prints it for the sale's currency."""
    return eur(cents) if currency == "EUR" else usd(cents)


def pdf_text(text: str) -> str:
    """``text`` as the PDF shows it: characters outside Windows-1252 lose their accents."""
    out = []
    for ch in text:
        try:
            ch.encode("cp1252")
            out.append(ch)
        except UnicodeEncodeError:
            decomposed = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(decomposed or "?")
    return "".join(out)


def prices_realised_pdf(sale: Sale) -> bytes:
    """Render the sale's prices-realised list."""
    from fpdf import FPDF  # test-only dependency: imported when a PDF is first requested

    pdf = FPDF(orientation="portrait", unit="mm", format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_creation_date(sale.closed)
    pdf.set_title(pdf_text(f"Prices Realised - Sale {sale.sale_id}"))
    pdf.set_author("Fake Auctions")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=14)
    pdf.cell(0, 8, "Prices Realised", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    lines = (
        f"Sale {sale.sale_id}: {sale.title}",
        f"{sale.city}, {sale.closed:%d %B %Y}",
        f"Buyer's premium: {sale.premium_pct}% of the hammer price. "
        "Price realised = hammer price + buyer's premium.",
    )
    for line in lines:
        pdf.cell(0, 6, pdf_text(line), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    pdf.set_font("Helvetica", size=8)
    align = ("RIGHT", "LEFT", "RIGHT", "RIGHT", "RIGHT")
    with pdf.table(col_widths=(10, 92, 28, 30, 30), text_align=align, line_height=4.5) as table:
        table.row(HEADER)
        for lot in sale.lots:
            cells: tuple[str, ...] = ("Unsold", "-", "-")
            if lot.hammer is not None and lot.premium is not None and lot.realised is not None:
                cells = tuple(
                    money(v, sale.currency) for v in (lot.hammer, lot.premium, lot.realised)
                )
            table.row((str(lot.number), pdf_text(lot.title), *cells))
    return bytes(pdf.output())
