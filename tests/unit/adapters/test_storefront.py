"""The store-feed helpers: barcodes → Identifiers with notes, JSON truncation, label categories."""

from __future__ import annotations

import re

import pytest

from rareindex_adapters.storefront import (
    NoteCode,
    barcode_kind,
    category_from_labels,
    identifiers_from,
    load_json,
)
from rareindex_connectors.errors import ParseError, ParseReason


@pytest.mark.parametrize(
    ("code", "kind", "ok"),
    [
        ("012345678905", "upc", True),
        ("012345678900", "upc", False),
        ("07119601254200111", "upc", True),  # UPC-A + comic add-on (issue 001, cover 1, print 1)
        ("4006381333931", "ean", True),
        ("4006381333932", "ean", False),
        ("4521329239590", "jan", True),
        ("4902370540734", "jan", True),
        ("9781607060017", "isbn", True),
        ("978-1-60706-001-7", "isbn", True),
        ("0306406152", "isbn", True),
        ("080442957X", "isbn", True),
        ("0306406153", "isbn", False),
        ("ABC-123", None, False),
        ("12345", None, False),
        ("١٢٣٤٥٦٧٨٩٠١٢", None, False),  # Arabic-Indic digits are digits, but not a barcode
    ],
)
def test_barcode_kind(code: str, kind: str | None, ok: bool) -> None:
    assert barcode_kind(code) == (kind, ok)


def test_identifiers_keep_sku_and_fill_the_barcode_kind() -> None:
    identifiers, notes = identifiers_from(sku=" PKM-BS-4 ", barcode="4521329239590")
    assert (identifiers.sku, identifiers.jan, identifiers.ean) == (
        "PKM-BS-4",
        "4521329239590",
        None,
    )
    assert notes == []


def test_a_numeric_sku_is_also_a_barcode() -> None:
    identifiers, notes = identifiers_from(sku="978-0-930289-23-2", barcode=None)
    assert identifiers.isbn == "9780930289232" and identifiers.sku == "978-0-930289-23-2"
    assert notes == []


def test_bad_check_digit_is_left_out_and_noted() -> None:
    identifiers, notes = identifiers_from(
        sku="012345678900", barcode="4006381333932", external_id="9", where="[0]"
    )
    assert (identifiers.upc, identifiers.ean) == (None, None)
    assert [(n.external_id, n.code, n.field) for n in notes] == [
        ("9", NoteCode.INVALID_CHECK_DIGIT, "[0].barcode"),
        ("9", NoteCode.INVALID_CHECK_DIGIT, "[0].sku"),
    ]


def test_barcode_wins_over_a_different_valid_sku() -> None:
    identifiers, notes = identifiers_from(sku="5012345678900", barcode="4006381333931")
    assert identifiers.ean == "4006381333931"
    assert [(n.code, n.field, n.value) for n in notes] == [
        (NoteCode.CONFLICTING_BARCODE, "sku", "5012345678900")
    ]


def test_a_barcode_field_that_is_no_barcode_is_noted_but_a_text_sku_is_not() -> None:
    _, notes = identifiers_from(sku="GRIFFEY-89-UD-1", barcode="N/A")
    assert [(n.code, n.value) for n in notes] == [(NoteCode.UNRECOGNIZED_BARCODE, "N/A")]


@pytest.mark.parametrize(
    ("labels", "category"),
    [
        (["Pokémon"], "tcg_card"),
        (["Magic: The Gathering"], "tcg_card"),
        (["Baseball Cards"], "sports_card"),
        (["NBA", "Rookies"], "sports_card"),
        (["Comics & Graphic Novels"], "comic"),
        (["Coins", "PCGS"], "coin"),
        (["Sneakers"], "sneaker"),
        (["Funko Pop"], "toy"),
        (["Michael Jordan"], None),  # not sneakers
        (["Pokemon", "Baseball"], None),  # two categories: none
        ([], None),
    ],
)
def test_category_from_labels(labels: list[str], category: str | None) -> None:
    assert category_from_labels(labels) == category


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"products": [{"id": 1}, {"id"', ParseReason.TRUNCATED),
        (b'{"products": [{"title": "Charizard', ParseReason.TRUNCATED),
        (b'{"products": [1, 2,', ParseReason.TRUNCATED),
        (b'{"products": [1, 2]]', ParseReason.INVALID_JSON),
        (b"<html>Access denied</html>", ParseReason.INVALID_JSON),
        (b"  \n", ParseReason.EMPTY_PAYLOAD),
        (b"\xff\xfe{}", ParseReason.ENCODING_ERROR),
    ],
)
def test_load_json_errors(content: bytes, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as info:
        load_json(content)
    assert info.value.reason is reason


def test_load_json_reads_bytes_and_text() -> None:
    assert load_json(b'{"a": [1]}') == load_json('{"a": [1]}') == {"a": [1]}


def test_str_split_and_re_know_the_same_white_space() -> None:
    """The store adapters fold and drop white space with ``str.split()`` where they used ``re``'s
    ``\\s`` (WooCommerce's ``_plain``, a barcode's noise): both must mean the same characters."""
    import sys

    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert set(re.findall(r"\s", every)) == {c for c in every if c.isspace()}
    assert "".join(every.split()) == "".join(c for c in every if not c.isspace())
