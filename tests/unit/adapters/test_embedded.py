"""Embedded JSON: __NEXT_DATA__, inline `window.X = {…}` blobs, JSON script islands."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from rareindex_adapters.embedded import (
    MAX_HTML_BYTES,
    inline_json,
    json_in_script,
    loads_exact,
    next_data,
)
from rareindex_connectors.errors import ParseError, ParseReason

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "adapters" / "embedded"


def _page(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_next_data_is_parsed_with_exact_decimals() -> None:
    data = next_data(_page("next_data.html"))

    listing = data["props"]["pageProps"]["listing"]
    assert data["page"] == "/listing/[id]"
    assert listing["price"] == Decimal("1250.00")
    assert isinstance(listing["price"], Decimal)
    assert listing["shipping"] == Decimal("4.99")
    assert listing["quantity"] == 1
    assert listing["note"] == 'ships in a "one-touch" </ holder } ]'


def test_next_data_accepts_bytes() -> None:
    raw = (FIXTURES / "next_data.html").read_bytes()

    assert next_data(raw)["buildId"] == "b-2025-06-01"


def test_a_page_without_next_data_names_the_selector() -> None:
    with pytest.raises(ParseError) as caught:
        next_data(_page("no_next_data.html"))

    assert caught.value.reason is ParseReason.MISSING_FIELD
    assert caught.value.field == "script#__NEXT_DATA__"


def test_broken_next_data_is_invalid_json_with_a_snippet() -> None:
    with pytest.raises(ParseError) as caught:
        next_data(_page("broken_next_data.html"))

    assert caught.value.reason is ParseReason.INVALID_JSON
    assert caught.value.snippet is not None and '"price":12.50,' in caught.value.snippet


def test_next_data_that_is_not_an_object_is_refused() -> None:
    page = '<script id="__NEXT_DATA__" type="application/json">[1, 2]</script>'

    with pytest.raises(ParseError) as caught:
        next_data(page)

    assert caught.value.reason is ParseReason.UNEXPECTED_SHAPE


def test_json_in_script_by_selector() -> None:
    config = json_in_script(_page("no_next_data.html"), "script#config")

    assert config == {"currency": "EUR", "locale": "de-DE"}


@pytest.mark.parametrize(
    ("page", "selector"),
    [
        ("<p>nothing</p>", "script#config"),
        ('<script id="config" type="application/json">  </script>', "script#config"),
    ],
    ids=["absent", "empty"],
)
def test_json_in_script_missing(page: str, selector: str) -> None:
    with pytest.raises(ParseError) as caught:
        json_in_script(page, selector)

    assert caught.value.reason is ParseReason.MISSING_FIELD
    assert caught.value.field == selector


def test_inline_state_skips_the_decoy_and_respects_strings() -> None:
    state = inline_json(_page("inline_state.html"), "window.__STATE__")

    assert state["item"]["price"] == Decimal("2499.99")
    assert state["item"]["description"] == (
        "First full Venom. Braces in text: } ] { [ and a quote: \" and a 'single'"
    )
    assert state["seller"] == {"name": "Web-Head Comics", "rating": Decimal("99.7")}
    assert "ignored" not in str(state)  # the scan stopped at the matching brace


def test_inline_json_forms() -> None:
    page = _page("inline_state.html")

    assert inline_json(page, "__APOLLO_STATE__") == {
        "Listing:1": {"price": "19.95", "title": 'It\'s a "quoted" title'}
    }
    assert inline_json(page, "__PRELOADED__") == [{"id": 1}, {"id": 2}]
    assert inline_json(page, "App.config") == {"currency": "USD", "rate": Decimal("1.0")}
    assert inline_json('<script>window["__X__"] = {"a": 1}</script>', "window.__X__") == {"a": 1}


def test_a_property_of_another_object_is_not_the_variable() -> None:
    with pytest.raises(ParseError) as caught:
        inline_json('<script>store.__STATE__ = {"a": 1};</script>', "__STATE__")

    assert caught.value.reason is ParseReason.MISSING_FIELD
    assert caught.value.field == "__STATE__"


def test_external_scripts_are_not_searched() -> None:
    with pytest.raises(ParseError):
        inline_json('<script src="/x.js">window.__S__ = {"a": 1}</script>', "__S__")


@pytest.mark.parametrize(
    ("variable", "reason", "snippet"),
    [
        ("window.__TRUNCATED__", ParseReason.INVALID_JSON, '{"a": [1, 2, {"b": 3}'),
        ("window.__JS_OBJECT__", ParseReason.INVALID_JSON, "{a: 1, b: undefined}"),
        ("window.__NOWHERE__", ParseReason.MISSING_FIELD, None),
    ],
)
def test_inline_json_failures(variable: str, reason: ParseReason, snippet: str | None) -> None:
    with pytest.raises(ParseError) as caught:
        inline_json(_page("inline_state.html"), variable)

    assert caught.value.reason is reason
    assert caught.value.field == variable
    if snippet is not None:
        assert caught.value.snippet is not None and caught.value.snippet.startswith(snippet)


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": Infinity}', "[-Infinity]"])
def test_non_finite_numbers_are_refused(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        loads_exact(text)

    assert caught.value.reason is ParseReason.INVALID_JSON


def test_oversized_pages_are_refused() -> None:
    page = "<script>window.__S__ = {}</script>" + " " * MAX_HTML_BYTES

    with pytest.raises(ParseError) as caught:
        inline_json(page, "__S__")

    assert caught.value.reason is ParseReason.TOO_LARGE
