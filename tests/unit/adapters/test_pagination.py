"""paginate(): strategies, the stop rules and their precedence, and the log each stop leaves."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, MutableMapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from rareindex_adapters.pagination import (
    Cursor,
    Extracted,
    LinkHeader,
    Offset,
    Page,
    PageNumber,
    PageRequest,
    Strategy,
    header_value,
    json_items,
    paginate,
    parse_link_header,
)
from rareindex_connectors import FetchResult
from rareindex_connectors.errors import ParseError, ParseReason

URL = "https://api.example/items"


def _body(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


def _extract(result: FetchResult) -> Extracted:
    """Reads what the fake sources below put in their bodies."""
    body = result.json()
    return Extracted(
        items=body["items"],
        has_more=body.get("has_more"),
        total=body.get("total"),
        total_pages=body.get("total_pages"),
        next_cursor=body.get("cursor"),
    )


class Source:
    """A fake paged API: ``respond(request) -> (body, headers)``; records every request."""

    def __init__(self, respond: Callable[[PageRequest], tuple[bytes, dict[str, str]]]) -> None:
        self.respond = respond
        self.requests: list[PageRequest] = []

    async def __call__(self, request: PageRequest) -> FetchResult:
        self.requests.append(request)
        body, headers = self.respond(request)
        return FetchResult(url=request.url, status=200, content=body, engine="api", headers=headers)


def _pages(
    source: Source,
    *,
    strategy: Strategy | None = None,
    start: str | PageRequest = URL,
    max_pages: int = 50,
) -> tuple[list[Page], list[MutableMapping[str, Any]]]:
    async def run() -> list[Page]:
        return [
            page
            async for page in paginate(
                source,
                start=start,
                strategy=strategy or PageNumber(),
                extract=_extract,
                max_pages=max_pages,
            )
        ]

    with capture_logs() as logs:
        pages = asyncio.run(run())
    return pages, logs


def _numbered(last: int, **extra: Any) -> Source:
    """Pages 1..last hold two items each; later pages are empty."""

    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        n = int(request.params["page"])
        items = [f"{n}-a", f"{n}-b"] if n <= last else []
        return _body(items=items, **extra), {}

    return Source(respond)


def _reason(logs: list[MutableMapping[str, Any]]) -> str:
    (event,) = [e for e in logs if e["event"] == "pagination.stopped"]
    return str(event["reason"])


# --- rule 2: an empty page ----------------------------------------------------------------------


def test_page_numbers_until_an_empty_page() -> None:
    source = _numbered(3)
    pages, logs = _pages(source)
    assert [p.items for p in pages] == [("1-a", "1-b"), ("2-a", "2-b"), ("3-a", "3-b")]
    assert [p.number for p in pages] == [1, 2, 3]
    assert [r.params["page"] for r in source.requests] == [1, 2, 3, 4]
    assert _reason(logs) == "empty_page"
    (event,) = logs
    assert (event["pages"], event["records"], event["log_level"]) == (3, 6, "info")
    assert event["params"] == {"page": 4}


def test_next_request_is_the_cursor_to_store() -> None:
    pages, _ = _pages(_numbered(2))
    assert pages[0].next_request == PageRequest(URL, {"page": 2})
    # Page 2's successor was still requested (it came back empty), so page 2 still points at it.
    assert pages[1].next_request == PageRequest(URL, {"page": 3})


def test_an_empty_page_stops_even_when_has_more_says_true() -> None:
    pages, logs = _pages(_numbered(1, has_more=True))
    assert len(pages) == 1
    assert _reason(logs) == "empty_page"


def test_an_empty_first_page_yields_nothing() -> None:
    pages, logs = _pages(_numbered(0))
    assert pages == []
    assert _reason(logs) == "empty_page"


# --- rule 1: a repeated page --------------------------------------------------------------------


def test_a_repeated_page_stops_and_is_not_yielded() -> None:
    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        n = min(int(request.params["page"]), 3)  # page 4, 5… serve page 3 again
        return _body(items=[n], generated_at=str(request.params["page"])), {}

    source = Source(respond)
    pages, logs = _pages(source)
    assert [p.items for p in pages] == [(1,), (2,), (3,)]
    assert len(source.requests) == 4
    assert _reason(logs) == "repeated_page"
    assert logs[0]["log_level"] == "warning"


def test_a_repeated_page_wins_over_has_more() -> None:
    source = Source(lambda r: (_body(items=["same"], has_more=True), {}))
    pages, logs = _pages(source)
    assert len(pages) == 1 and _reason(logs) == "repeated_page"


def test_items_that_are_not_json_fall_back_to_the_body() -> None:
    class Item:
        pass

    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        return (b"same body" if int(request.params["page"]) > 1 else b"first"), {}

    def extract(result: FetchResult) -> Extracted:
        return Extracted(items=[Item()])

    async def run() -> list[Page]:
        return [
            p
            async for p in paginate(
                Source(respond), start=URL, strategy=PageNumber(), extract=extract, max_pages=10
            )
        ]

    with capture_logs() as logs:
        pages = asyncio.run(run())
    assert len(pages) == 2  # "first", then "same body"; the second "same body" repeats
    assert _reason(logs) == "repeated_page"


# --- rules 4 and 5: what the source says --------------------------------------------------------


def test_has_more_false_stops() -> None:
    source = _numbered(10, has_more=False)
    pages, logs = _pages(source)
    assert len(pages) == 1 and len(source.requests) == 1
    assert pages[0].next_request is None
    assert _reason(logs) == "has_more_false"


def test_has_more_false_wins_over_an_unreached_total() -> None:
    pages, logs = _pages(_numbered(10, has_more=False, total=100))
    assert len(pages) == 1 and _reason(logs) == "has_more_false"


def test_has_more_false_names_the_stop_when_the_total_is_reached_too() -> None:
    pages, logs = _pages(_numbered(10, has_more=False, total=2))
    assert len(pages) == 1 and _reason(logs) == "has_more_false"


def test_a_reached_total_stops_even_when_has_more_says_true() -> None:
    source = _numbered(10, has_more=True, total=4)
    pages, logs = _pages(source)
    assert len(pages) == 2 and len(source.requests) == 2
    assert _reason(logs) == "total_reached"


def test_total_pages_stops() -> None:
    source = _numbered(10, total_pages=3)
    pages, logs = _pages(source)
    assert len(pages) == 3 and len(source.requests) == 3
    assert _reason(logs) == "total_reached"


def test_a_resumed_run_compares_total_pages_with_the_source_page() -> None:
    source = _numbered(10, total_pages=4)
    pages, logs = _pages(source, start=PageRequest(URL, {"page": 3, "limit": 2}))
    assert [r.params["page"] for r in source.requests] == [3, 4]
    assert source.requests[0].params["limit"] == 2
    assert [p.number for p in pages] == [1, 2]
    assert _reason(logs) == "total_reached"


def test_has_more_true_alone_keeps_going() -> None:
    pages, logs = _pages(_numbered(4, has_more=True))
    assert len(pages) == 4 and _reason(logs) == "empty_page"


# --- rule 7: max_pages --------------------------------------------------------------------------


def test_max_pages_stops_a_source_that_never_ends() -> None:
    source = _numbered(10_000, has_more=True)
    pages, logs = _pages(source, max_pages=5)
    assert len(pages) == 5 and len(source.requests) == 5
    assert pages[-1].next_request is None
    assert _reason(logs) == "max_pages"
    assert logs[0]["log_level"] == "warning"


def test_the_source_being_done_at_the_cap_is_not_max_pages() -> None:
    pages, logs = _pages(_numbered(10, total_pages=3), max_pages=3)
    assert len(pages) == 3 and _reason(logs) == "total_reached"


def test_max_pages_must_be_positive() -> None:
    async def run() -> None:
        async for _ in paginate(
            _numbered(1), start=URL, strategy=PageNumber(), extract=_extract, max_pages=0
        ):
            pass

    with pytest.raises(ValueError, match="max_pages"):
        asyncio.run(run())


# --- strategies ---------------------------------------------------------------------------------


def test_offset_steps_by_the_items_received() -> None:
    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        offset = int(request.params["offset"])
        items = list(range(offset, min(offset + 3, 7)))  # the server caps pages at 3
        return _body(items=items, total=7), {}

    source = Source(respond)
    pages, logs = _pages(source, strategy=Offset(), start=PageRequest(URL, {"limit": 10}))
    assert [r.params["offset"] for r in source.requests] == [0, 3, 6]
    assert [p.items for p in pages] == [(0, 1, 2), (3, 4, 5), (6,)]
    assert _reason(logs) == "total_reached"


def test_offset_resumed_counts_the_total_from_the_source_offset() -> None:
    source = Source(lambda r: (_body(items=[r.params["offset"]] * 2, total=10), {}))
    pages, logs = _pages(source, strategy=Offset(), start=PageRequest(URL, {"offset": 6}))
    assert [r.params["offset"] for r in source.requests] == [6, 8]
    assert [p.items for p in pages] == [(6, 6), (8, 8)]  # 6+2+2 = 10: the total
    assert _reason(logs) == "total_reached"


def test_cursor_follows_until_no_cursor() -> None:
    chain = {None: ("c2", [1]), "c2": ("c3", [2]), "c3": (None, [3])}

    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        following, items = chain[request.params.get("cursor")]  # type: ignore[index]
        return _body(items=items, cursor=following), {}

    source = Source(respond)
    pages, logs = _pages(source, strategy=Cursor())
    assert [r.params.get("cursor") for r in source.requests] == [None, "c2", "c3"]
    assert [p.items for p in pages] == [(1,), (2,), (3,)]
    assert _reason(logs) == "no_next"


def test_link_header_resolves_relative_urls() -> None:
    def respond(request: PageRequest) -> tuple[bytes, dict[str, str]]:
        n = int(request.url.rsplit("=", 1)[1]) if "=" in request.url else 1
        link = f'</items?page={n + 1}>; rel="next", </items?page=1>; rel="first"' if n < 3 else ""
        return _body(items=[n]), ({"link": link} if link else {})

    source = Source(respond)
    pages, logs = _pages(source, strategy=LinkHeader())
    assert [r.url for r in source.requests] == [
        URL,
        "https://api.example/items?page=2",
        "https://api.example/items?page=3",
    ]
    assert len(pages) == 3 and _reason(logs) == "no_next"


# --- laziness and errors ------------------------------------------------------------------------


def test_nothing_is_fetched_beyond_what_the_consumer_takes() -> None:
    source = _numbered(100)

    async def run() -> None:
        async for _ in paginate(
            source, start=URL, strategy=PageNumber(), extract=_extract, max_pages=100
        ):
            break

    asyncio.run(run())
    assert len(source.requests) == 1


def test_extractor_errors_propagate() -> None:
    source = Source(lambda r: (b'{"items": [1, 2', {}))
    with pytest.raises(ParseError) as info:
        _pages(source)
    assert info.value.reason is ParseReason.TRUNCATED  # the page ended mid-document


# --- helpers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('<https://x/p?page=2>; rel="next"', {"next": "https://x/p?page=2"}),
        (
            '<https://x/p?page=1>; rel="prev", <https://x/p?page=3>; rel=next',
            {"prev": "https://x/p?page=1", "next": "https://x/p?page=3"},
        ),
        (
            '<https://x/p?a=1,2>; rel="next last"',
            {"next": "https://x/p?a=1,2", "last": "https://x/p?a=1,2"},
        ),
        ('<https://x/p>; title="x"', {}),
        ("", {}),
        (None, {}),
    ],
)
def test_parse_link_header(value: str | None, expected: dict[str, str]) -> None:
    assert parse_link_header(value) == expected


def test_header_lookup_ignores_case() -> None:
    assert header_value({"X-WP-TotalPages": "3"}, "x-wp-totalpages") == "3"
    assert header_value({"x-wp-totalpages": "3"}, "X-WP-TotalPages") == "3"
    assert header_value({}, "Link") is None


@pytest.mark.parametrize(
    ("body", "key", "reason"),
    [
        (b'[{"id": 1}]', "products", ParseReason.UNEXPECTED_SHAPE),
        (b'{"items": []}', "products", ParseReason.MISSING_FIELD),
        (b'{"products": {"id": 1}}', "products", ParseReason.INVALID_TYPE),
        (b'{"products": []}', None, ParseReason.INVALID_TYPE),
        (b"", None, ParseReason.EMPTY_PAYLOAD),
    ],
)
def test_json_items_errors(body: bytes, key: str | None, reason: ParseReason) -> None:
    with pytest.raises(ParseError) as info:
        json_items(key)(FetchResult(URL, 200, body, "api"))
    assert info.value.reason is reason


def test_json_items_reads_a_list() -> None:
    result = FetchResult(URL, 200, b'{"products": [{"id": 1}, {"id": 2}]}', "api")
    assert json_items("products")(result).items == [{"id": 1}, {"id": 2}]
    assert json_items()(FetchResult(URL, 200, b"[3]", "api")).items == [3]
