"""Field presence: per record kind and field, how many records carry a non-empty value, with the
nested identifiers and grading counted part by part."""

from __future__ import annotations

from datetime import UTC, datetime

from rareindex.quality import FieldPresence, count_fields, merge_counts
from rareindex_connectors.records import (
    Grading,
    Identifiers,
    Listing,
    Money,
    PopulationReport,
    Sale,
)

T0 = datetime(2026, 11, 1, 18, 0, tzinfo=UTC)
USD = Money(amount="100", currency="USD")


def _sale(external_id: str, **fields: object) -> Sale:
    return Sale.model_validate(
        {
            "external_id": external_id,
            "title": "2018 Prizm Luka Doncic #280",
            "price": USD,
            "sale_type": "auction",
            "sold_at": T0,
            **fields,
        }
    )


def test_plain_fields_count_non_empty_values() -> None:
    sales = [
        _sale("a", url="https://x.test/a", condition="NM", image_urls=("https://x.test/a.jpg",)),
        _sale("b", url="", condition="   ", image_urls=()),
        _sale("c", url=None, shipping=USD),
    ]
    counts = count_fields(sales)
    assert counts[("sale", "url")] == (1, 3)
    assert counts[("sale", "condition")] == (1, 3)  # a blank string is not a value
    assert counts[("sale", "image_urls")] == (1, 3)
    assert counts[("sale", "shipping")] == (1, 3)
    assert counts[("sale", "price")] == (3, 3)  # money counts as one field
    assert counts[("sale", "is_lot")] == (3, 3)  # False is a value
    assert counts[("sale", "flags")] == (0, 3)
    assert ("sale", "kind") not in counts
    assert ("sale", "price.amount") not in counts


def test_identifiers_and_grading_are_counted_by_their_parts() -> None:
    sales = [
        _sale(
            "a",
            identifiers=Identifiers(upc="820650123456", cert_number="12345678"),
            grading=Grading(grader="PSA", grade="10"),
        ),
        _sale("b", identifiers=Identifiers(sku="X-1"), grading=Grading(grader="BGS", grade="9.5")),
        _sale("c"),
        _sale("d", grading=Grading(grader="PSA", grade="8", qualifier="OC")),
    ]
    counts = count_fields(sales)
    assert counts[("sale", "identifiers.upc")] == (1, 4)
    assert counts[("sale", "identifiers.cert_number")] == (1, 4)
    assert counts[("sale", "identifiers.sku")] == (1, 4)
    assert counts[("sale", "identifiers.ean")] == (0, 4)
    assert counts[("sale", "grading.grader")] == (3, 4)  # absent when grading is None
    assert counts[("sale", "grading.grade")] == (3, 4)
    assert counts[("sale", "grading.qualifier")] == (1, 4)
    assert ("sale", "grading") not in counts
    assert ("sale", "identifiers") not in counts


def test_kinds_are_counted_apart_with_one_total_per_kind() -> None:
    listing = Listing(external_id="l1", title="Charizard", price=USD, seller="shop", quantity=0)
    report = PopulationReport(
        external_id="spec-1", grader="PSA", title="Charizard", counts={}, total=0, as_of=T0
    )
    counts = count_fields([_sale("a"), listing, report, _sale("b")])
    assert counts[("listing", "seller")] == (1, 1)
    assert counts[("listing", "quantity")] == (1, 1)  # 0 is a value
    assert counts[("population_report", "counts")] == (0, 1)  # an empty dict is not
    assert counts[("population_report", "total")] == (1, 1)
    assert {total for (kind, _), (_, total) in counts.items() if kind == "sale"} == {2}
    assert {kind for kind, _ in counts} == {"sale", "listing", "population_report"}


def test_batches_accumulate_like_one_count() -> None:
    first = [_sale("a", url="https://x.test/a"), _sale("b")]
    second = [_sale("c", url="https://x.test/c", grading=Grading(grader="PSA", grade="9"))]
    presence = FieldPresence()
    presence.update(first)
    presence.add(second[0])
    assert presence.counts() == count_fields(first + second)
    assert merge_counts(count_fields(first), count_fields(second)) == count_fields(first + second)
    assert presence.counts()[("sale", "url")] == (2, 3)


def test_no_records_count_nothing() -> None:
    assert count_fields([]) == {}
