"""A source that nests JSON thousands of levels deep gets ``too_deep``, never a RecursionError:
every JSON reader of the SDK classifies such a body without recursing, so the run keeps it as a
parse failure instead of crashing."""

from __future__ import annotations

import pytest

from rareindex_adapters import load_json, next_data
from rareindex_adapters._json import loads_exact, loads_lenient
from rareindex_connectors import FetchResult
from rareindex_connectors.errors import (
    MAX_DEPTH,
    ParseError,
    ParseReason,
    json_failure,
    nesting_depth,
)

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECTS = '{"a":' * 5000 + "1" + "}" * 5000


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECTS])
def test_a_fetched_body_nested_5000_deep_is_too_deep(body: str) -> None:
    page = FetchResult(url="http://x.test/p", status=200, content=body.encode(), engine="api")
    with pytest.raises(ParseError) as caught:
        page.json()
    assert caught.value.reason == ParseReason.TOO_DEEP
    assert "5000 levels" in str(caught.value)


@pytest.mark.parametrize("read", [load_json, loads_exact, loads_lenient])
def test_every_json_reader_refuses_it_with_the_same_reason(read: object) -> None:
    with pytest.raises(ParseError) as caught:
        read(DEEP)  # type: ignore[operator]
    assert caught.value.reason == ParseReason.TOO_DEEP


def test_a_next_js_page_with_a_deep_next_data_is_too_deep() -> None:
    html = f'<html><script id="__NEXT_DATA__" type="application/json">{DEEP}</script></html>'
    with pytest.raises(ParseError) as caught:
        next_data(html)
    assert caught.value.reason == ParseReason.TOO_DEEP


def test_the_depth_limit_is_orjsons_and_shallow_garbage_stays_invalid_json() -> None:
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert nesting_depth(at_limit) == MAX_DEPTH
    past = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    assert json_failure(past)[0] == ParseReason.TOO_DEEP
    assert json_failure("[" * 50 + "]" * 50 + "x")[0] == ParseReason.INVALID_JSON
    # within orjson's limit but past the interpreter's: still classified, never raised
    assert json_failure(at_limit + "x")[0] in (ParseReason.TOO_DEEP, ParseReason.INVALID_JSON)


def test_brackets_inside_strings_are_not_nesting() -> None:
    assert nesting_depth('{"title": "[[[[ {{{{ \\"]]"}') == 1
    assert nesting_depth("[]") == 1 and nesting_depth('"no nesting"') == 0
