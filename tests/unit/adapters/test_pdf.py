"""Prices-realised PDFs (built here with fpdf2): columns from the header, locale amounts, rows
rejected with reasons, and rows to AuctionLots with hammer, premium and realised kept apart."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from fpdf import FPDF

from rareindex_adapters import pdf as pdf_adapter
from rareindex_adapters.pdf import (
    PriceRealisedRow,
    parse_prices_realised,
    rows_to_auction_lots,
)
from rareindex_connectors._money import Money
from rareindex_connectors._normalized import AuctionLot
from rareindex_connectors.errors import ParseError, ParseReason

HEADER = ("Lot", "Description", "Hammer", "Premium", "Price Realised")
WIDTHS = (14, 86, 30, 30, 30)
Item = tuple[str, ...]


def _usd(amount: str) -> Money:
    return Money(amount=amount, currency="USD")


def make_pdf(
    *pages: list[Item],
    header: Item | None = HEADER,
    widths: tuple[int, ...] = WIDTHS,
    footer: bool = True,
    headless_pages: tuple[int, ...] = (),
) -> bytes:
    """A prices-realised document: a title block, a header per page, right-aligned amounts.

    An item is a row of cells, ``("text", "…")`` for a free line, or ``("gap",)`` for space.
    """
    doc = FPDF()
    doc.core_fonts_encoding = "windows-1252"  # so the core fonts can print €
    doc.set_auto_page_break(False)
    for number, items in enumerate(pages, start=1):
        doc.add_page()
        doc.set_font("Helvetica", size=9)
        doc.cell(
            text="Spring Coin & Card Sale 2025 - Prices Realised", new_x="LMARGIN", new_y="NEXT"
        )
        doc.ln(4)
        for item in [header] if header and number not in headless_pages else []:
            for width, cell in zip(widths, item, strict=True):
                doc.cell(w=width, h=6, text=cell, align="R" if width == 30 else "L")
            doc.ln(6)
        for item in items:
            if item[0] == "text":
                doc.cell(w=0, h=5, text=item[1], new_x="LMARGIN", new_y="NEXT")
            elif item[0] == "gap":
                doc.ln(8)
            else:
                for width, cell in zip(widths, item, strict=True):
                    doc.cell(w=width, h=5, text=cell, align="R" if width == 30 else "L")
                doc.ln(5)
        if footer:
            doc.set_y(-20)
            doc.cell(w=0, text=f"Page {number} of {len(pages)}", align="C")
    return bytes(doc.output())


def _summary(rejected: Any) -> list[tuple[str, ParseReason, str | None]]:
    return [(r.where, r.reason, r.field) for r in rejected]


def test_three_price_columns_in_usd() -> None:
    document = make_pdf(
        [
            ("1", "1909-S VDB Lincoln Cent PCGS MS65RD", "$10,000.00", "$2,000.00", "$12,000.00"),
            ("2", "1986 Fleer Michael Jordan #57 PSA 8", "$8,500.00", "$1,700.00", "$10,200.00"),
        ]
    )

    result = parse_prices_realised(document, currency="USD")

    assert result.rejected == ()
    assert result.rows == (
        PriceRealisedRow(
            lot_number="1",
            title="1909-S VDB Lincoln Cent PCGS MS65RD",
            status="sold",
            hammer=_usd("10000.00"),
            buyer_premium=_usd("2000.00"),
            price_realised=_usd("12000.00"),
            page=1,
        ),
        PriceRealisedRow(
            lot_number="2",
            title="1986 Fleer Michael Jordan #57 PSA 8",  # "8" sits under no price column
            status="sold",
            hammer=_usd("8500.00"),
            buyer_premium=_usd("1700.00"),
            price_realised=_usd("10200.00"),
            page=1,
        ),
    )


def test_locale_amounts_and_currency_detection() -> None:
    document = make_pdf(
        [
            ("10", "Vreneli 20 Fr. 1935 L-B", "10.000,00 €", "2.000,00 €", "12.000,00 €"),
            ("11", "Morgan Dollar 1893-S", "EUR 1.250,50", "EUR 250,10", "EUR 1.500,60"),
            ("12", "Swiss Shooting Taler 1857", "CHF 1'250.00", "CHF 250.00", "CHF 1'500.00"),
            ("13", "Sovereign 1817", "£1,000", "£250", "£1,250"),
        ]
    )

    rows = parse_prices_realised(document).rows

    assert [(r.lot_number, r.hammer, r.buyer_premium, r.price_realised) for r in rows] == [
        ("10", Money(amount="10000", currency="EUR"), Money(amount="2000", currency="EUR"),
         Money(amount="12000", currency="EUR")),
        ("11", Money(amount="1250.50", currency="EUR"), Money(amount="250.10", currency="EUR"),
         Money(amount="1500.60", currency="EUR")),
        ("12", Money(amount="1250", currency="CHF"), Money(amount="250", currency="CHF"),
         Money(amount="1500", currency="CHF")),
        ("13", Money(amount="1000", currency="GBP"), Money(amount="250", currency="GBP"),
         Money(amount="1250", currency="GBP")),
    ]  # fmt: skip


def test_blank_cells_stay_blank_and_statuses_are_read() -> None:
    document = make_pdf(
        [
            ("20", "Pokemon Base Set Charizard #4 CGC 9", "$4,000.00", "", "$4,800.00"),
            ("21", "Amazing Spider-Man #300 CGC 9.8", "", "", "$2,160.00"),
            ("22", "1952 Topps Mantle #311 PSA 4", "Passed", "", ""),
            ("23", "1916-D Mercury Dime", "Withdrawn", "", ""),
            ("24", "Inverted Jenny single", "$1.00", "-", "$1.20"),
        ]
    )

    rows = parse_prices_realised(document, currency="USD").rows

    assert [
        (r.lot_number, r.status, r.hammer, r.buyer_premium, r.price_realised) for r in rows
    ] == [
        ("20", "sold", _usd("4000"), None, _usd("4800")),
        ("21", "sold", None, None, _usd("2160")),
        ("22", "passed", None, None, None),
        ("23", "withdrawn", None, None, None),
        ("24", "sold", _usd("1.00"), None, _usd("1.20")),
    ]


def test_wrapped_titles_continue_but_headings_and_footers_do_not() -> None:
    document = make_pdf(
        [
            ("30", "1933 Goudey Babe Ruth #53 SGC 5,", "", "", "$9,600.00"),
            ("", "centered, light crease at top left", "", "", ""),
            ("gap",),
            ("text", "SESSION II - WORLD COINS"),
            ("31", "1804 Dollar restrike", "", "", "$150,000.00"),
        ]
    )

    rows = parse_prices_realised(document, currency="USD").rows

    assert [r.title for r in rows] == [
        "1933 Goudey Babe Ruth #53 SGC 5, centered, light crease at top left",
        "1804 Dollar restrike",  # not "... Page 1 of 1" from the footer
    ]


def test_pages_repeat_the_header_and_rows_know_their_page() -> None:
    document = make_pdf(
        [("40", "Card A", "", "", "$10.00")],
        [("41", "Card B", "", "", "$20.00")],
    )

    rows = parse_prices_realised(document, currency="USD").rows

    assert [(r.lot_number, r.page) for r in rows] == [("40", 1), ("41", 2)]


def test_a_page_without_a_header_reuses_the_previous_columns() -> None:
    document = make_pdf(
        [("50", "Card A", "", "$1.00", "$10.00")],
        [("51", "Card B", "", "$2.00", "$20.00")],
        headless_pages=(2,),
    )

    rows = parse_prices_realised(document, currency="USD").rows

    assert [(r.lot_number, r.page, r.buyer_premium) for r in rows] == [
        ("50", 1, _usd("1.00")),
        ("51", 2, _usd("2.00")),  # still read as the premium column of page 1
    ]


def test_realised_only_list_and_an_estimate_column() -> None:
    widths = (14, 86, 30, 30)
    document = make_pdf(
        [
            ("60", "1881-S Morgan Dollar MS66", "$200-300", "$264.00"),
            ("61", "1893-S Morgan Dollar VF20", "$4,000-5,000", "$4,560.00"),
        ],
        header=("Lot", "Description", "Estimate", "Price Realized"),
        widths=widths,
    )

    rows = parse_prices_realised(document, currency="USD").rows

    assert [(r.lot_number, r.hammer, r.price_realised) for r in rows] == [
        ("60", None, _usd("264.00")),
        ("61", None, _usd("4560.00")),
    ]


def test_unreadable_rows_are_rejected_with_reasons() -> None:
    document = make_pdf(
        [
            ("70", "Fine lot", "$100.00", "$20.00", "$120.00"),
            ("71", "Sum does not add up", "$100.00", "$20.00", "$130.00"),
            ("72", "Realised below hammer", "$100.00", "", "$90.00"),
            ("73", "Mixed currencies", "$100.00", "", "EUR 120,00"),
            ("74", "Nothing printed", "", "", ""),
            ("", "Amounts without a lot", "$5.00", "", "$6.00"),
            ("70", "Lot number again", "$1.00", "", "$1.20"),
            ("75", "Passed but priced", "Passed", "", "$10.00"),
        ]
    )

    result = parse_prices_realised(document, currency="USD")

    assert [r.lot_number for r in result.rows] == ["70"]
    assert _summary(result.rejected) == [
        ("page 1, line 4", ParseReason.INVALID_VALUE, None),  # line 1 title, 2 header, 3 lot 70
        ("page 1, line 5", ParseReason.INVALID_VALUE, None),
        ("page 1, line 6", ParseReason.CURRENCY_MISMATCH, "realised"),
        ("page 1, line 7", ParseReason.MISSING_FIELD, "price_realised"),
        ("page 1, line 8", ParseReason.MISSING_FIELD, "lot_number"),
        ("page 1, line 9", ParseReason.INVALID_VALUE, "lot_number"),
        ("page 1, line 10", ParseReason.INVALID_VALUE, None),
    ]
    assert [r.message for r in result.rejected] == [
        "hammer + premium != price realised",
        "price realised below hammer",
        "amount says EUR, the source says USD",
        "no price and no status",
        "amounts without a lot number",
        "lot number seen before",
        "passed lot with a price",
    ]
    assert result.rejected[0].snippet == "71 Sum does not add up $100.00 $20.00 $130.00"
    assert len(result.rows) + len(result.rejected) == 8


def test_a_bare_dollar_needs_a_stated_currency() -> None:
    document = make_pdf([("80", "Card", "$10.00", "", "$12.00")])

    without = parse_prices_realised(document)
    as_cad = parse_prices_realised(document, currency="CAD")
    as_eur = parse_prices_realised(document, currency="EUR")

    assert without.rows == ()
    assert _summary(without.rejected) == [
        ("page 1, line 3", ParseReason.UNKNOWN_CURRENCY, "hammer")
    ]
    assert as_cad.rows[0].hammer == Money(amount="10.00", currency="CAD")
    assert as_eur.rejected[0].reason is ParseReason.CURRENCY_MISMATCH


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", ParseReason.EMPTY_PAYLOAD),
        (b"%PDF-1.4 this is not really a pdf", ParseReason.UNEXPECTED_SHAPE),
        (b"<html>not a pdf</html>", ParseReason.UNEXPECTED_SHAPE),
    ],
)
def test_unreadable_documents_fail_closed(data: bytes, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as caught:
        parse_prices_realised(data)

    assert caught.value.reason is reason


def test_a_truncated_pdf_fails_closed() -> None:
    document = make_pdf([("1", "Card", "", "", "$1.00")])

    with pytest.raises(ParseError) as caught:
        parse_prices_realised(document[: len(document) // 2], currency="USD")

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE


def test_an_encrypted_pdf_fails_closed() -> None:
    doc = FPDF()
    doc.set_encryption(owner_password="owner", user_password="user")
    doc.add_page()
    doc.set_font("Helvetica", size=9)
    doc.cell(text="Lot Description Price Realised")

    with pytest.raises(ParseError) as caught:
        parse_prices_realised(bytes(doc.output()))

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE


def test_a_document_without_a_header_fails_closed() -> None:
    document = make_pdf([("1", "Card", "", "", "$1.00")], header=None)

    with pytest.raises(ParseError) as caught:
        parse_prices_realised(document, currency="USD")

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE
    assert "header" in str(caught.value)


def test_size_and_page_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    document = make_pdf([("1", "A", "", "", "$1.00")], [("2", "B", "", "", "$2.00")])

    monkeypatch.setattr(pdf_adapter, "MAX_PDF_PAGES", 1)
    with pytest.raises(ParseError) as pages:
        parse_prices_realised(document, currency="USD")
    monkeypatch.setattr(pdf_adapter, "MAX_PDF_BYTES", len(document) - 1)
    with pytest.raises(ParseError) as size:
        parse_prices_realised(document, currency="USD")

    assert pages.value.reason is size.value.reason is ParseReason.TOO_LARGE


def test_an_unknown_currency_argument_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="ISO-4217"):
        parse_prices_realised(make_pdf([]), currency="DOLLARS")


def test_rows_to_auction_lots_keep_hammer_premium_and_realised_apart() -> None:
    rows = [
        PriceRealisedRow("1", "Cent", "sold", _usd("10000"), _usd("2000"), _usd("12000")),
        PriceRealisedRow("2", "Dime", "sold", _usd("500"), None, None),
        PriceRealisedRow("3", "", "passed"),
        PriceRealisedRow("4", "Taler", "sold", None, None, _usd("264")),
    ]

    lots = rows_to_auction_lots(
        rows,
        auction_id="ha-3120",
        auction_title="Spring Coin Sale",
        buyer_premium_rate=Decimal("0.20"),
    )

    assert [(x.external_id, x.status, x.title) for x in lots] == [
        ("ha-3120:1", "sold", "Cent"),
        ("ha-3120:2", "sold", "Dime"),
        ("ha-3120:3", "passed", "Lot 3"),
        ("ha-3120:4", "sold", "Taler"),
    ]
    assert [(x.hammer_price, x.price_realised) for x in lots] == [
        (_usd("10000"), _usd("12000")),
        (_usd("500"), None),  # realised is never derived from hammer and rate
        (None, None),
        (None, _usd("264")),
    ]
    assert [x.buyer_premium_rate for x in lots] == [
        Decimal("0.2000"),  # from the printed premium
        Decimal("0.20"),  # the house's stated rate
        Decimal("0.20"),
        Decimal("0.20"),
    ]
    assert {(x.auction_id, x.auction_title) for x in lots} == {("ha-3120", "Spring Coin Sale")}


def test_the_effective_rate_reflects_a_minimum_premium() -> None:
    row = PriceRealisedRow("9", "Common cent", "sold", _usd("20"), _usd("19"), _usd("39"))

    (lot,) = rows_to_auction_lots([row], auction_id="ha-1", buyer_premium_rate=Decimal("0.20"))

    assert lot.buyer_premium_rate == Decimal("0.9500")


def test_a_row_that_makes_no_valid_lot_raises_naming_it() -> None:
    row = PriceRealisedRow("5", "Card", "sold")  # sold, but no price at all

    with pytest.raises(ParseError) as caught:
        rows_to_auction_lots([row], auction_id="ha-1")

    assert caught.value.field is not None and caught.value.field.startswith("lot 5")


def test_parsed_rows_become_lots_end_to_end() -> None:
    document = make_pdf([("1", "Cent", "EUR 1.000,00", "EUR 250,00", "EUR 1.250,00")])

    (lot,) = rows_to_auction_lots(parse_prices_realised(document).rows, auction_id="k-77")

    assert (lot.hammer_price, lot.price_realised, lot.buyer_premium_rate) == (
        Money(amount="1000", currency="EUR"),
        Money(amount="1250", currency="EUR"),
        Decimal("0.2500"),
    )


def test_title_fields_are_validated_with_the_lot() -> None:
    """A connector's fields from the title (its grading) go into the lot as it is validated,
    the same lot as validating the dumped lot with them again, and a bad one names the lot."""
    from rareindex_adapters import lift_grading

    row = PriceRealisedRow("7", "1986 Fleer Jordan #57 PSA 8", "sold", _usd("100"), None, None)

    def grading(title: str) -> dict[str, Any]:
        facts = lift_grading(title)
        return {"grading": facts.grading, "condition": facts.condition}

    (lot,) = rows_to_auction_lots([row], auction_id="ha-1", title_fields=grading)
    (plain,) = rows_to_auction_lots([row], auction_id="ha-1")
    again = AuctionLot.model_validate({**plain.model_dump(), **grading(plain.title)})
    assert lot.grading is not None and lot.grading.grade == "8"
    assert lot == again and lot.model_dump(mode="json") == again.model_dump(mode="json")
    with pytest.raises(ParseError) as caught:
        rows_to_auction_lots([row], auction_id="ha-1", title_fields=lambda _: {"grading": 1})
    assert caught.value.field is not None and caught.value.field.startswith("lot 7.grading")
