"""SDK contracts: the error tree, raw records and content hashes, FetchResult, CrawlContext,
the Connector protocol and ConnectorHealth."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from rareindex_connectors import (
    Connector,
    ConnectorHealth,
    ConnectorMeta,
    CrawlContext,
    CrawlOptions,
    FetchResult,
    HealthStatus,
    Progress,
)
from rareindex_connectors.errors import (
    Blocked,
    BudgetExhausted,
    CircuitOpen,
    ConnectorError,
    FetchError,
    ParseError,
    ParseReason,
    PermanentFetchError,
    PolicyError,
    RateLimited,
    TransientFetchError,
)
from rareindex_connectors.records import RawRecord, RawRecordInput, content_hash

URL = "https://www.psacard.com/cert/48123456"

# --- error tree -------------------------------------------------------------------------------

# Exactly the tree drawn in _errors.py: child -> its one direct parent.
TREE: dict[type[Exception], type[Exception]] = {
    ConnectorError: Exception,
    PolicyError: ConnectorError,
    FetchError: ConnectorError,
    TransientFetchError: FetchError,
    RateLimited: TransientFetchError,
    PermanentFetchError: FetchError,
    Blocked: FetchError,
    CircuitOpen: FetchError,
    BudgetExhausted: FetchError,
    ParseError: ConnectorError,
}


@pytest.mark.parametrize("cls", list(TREE), ids=lambda c: c.__name__)
def test_error_has_exactly_its_drawn_parent(cls: type[Exception]) -> None:
    assert cls.__bases__ == (TREE[cls],)


def _ancestors(cls: type[Exception]) -> set[type[Exception]]:
    found: set[type[Exception]] = set()
    while cls in TREE:
        cls = TREE[cls]
        found.add(cls)
    return found


@pytest.mark.parametrize("child", list(TREE), ids=lambda c: c.__name__)
@pytest.mark.parametrize("parent", list(TREE), ids=lambda c: c.__name__)
def test_issubclass_matrix(child: type[Exception], parent: type[Exception]) -> None:
    expected = child is parent or parent in _ancestors(child)
    assert issubclass(child, parent) is expected


@pytest.mark.parametrize(
    "error",
    [
        PermanentFetchError("gone", url=URL, status=410),
        Blocked("challenge", url=URL, vendor="cloudflare"),
        CircuitOpen("open", url=URL),
        BudgetExhausted("spent", url=URL),
        ParseError(ParseReason.INVALID_JSON, "bad"),
        PolicyError("domains.json: bad key"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_only_transient_errors_are_retryable(error: ConnectorError) -> None:
    assert not isinstance(error, TransientFetchError)


def test_fetch_error_attributes() -> None:
    error = FetchError("boom", url=URL, host="www.psacard.com", engine="firecrawl")
    assert (error.url, error.host, error.engine) == (URL, "www.psacard.com", "firecrawl")
    assert str(error) == "boom"
    bare = TransientFetchError("timeout", url=URL)
    assert (bare.url, bare.host, bare.engine) == (URL, None, None)


def test_fetch_error_url_is_keyword_only_and_required() -> None:
    with pytest.raises(TypeError):
        FetchError("boom", URL)  # type: ignore[misc]
    with pytest.raises(TypeError):
        FetchError("boom")  # type: ignore[call-arg]


def test_rate_limited_attributes() -> None:
    error = RateLimited("429", url=URL, host="www.psacard.com", engine="api", retry_after=30.0)
    assert error.retry_after == 30.0
    assert (error.url, error.host, error.engine) == (URL, "www.psacard.com", "api")
    assert RateLimited("429", url=URL).retry_after is None


def test_circuit_open_attributes() -> None:
    reopens = datetime(2026, 11, 1, 18, 5, tzinfo=UTC)
    error = CircuitOpen("open", url=URL, host="www.ebay.com", engine="scrapfly", reopens_at=reopens)
    assert error.reopens_at == reopens
    assert (error.host, error.engine) == ("www.ebay.com", "scrapfly")
    assert CircuitOpen("open", url=URL).reopens_at is None


def test_permanent_fetch_error_attributes() -> None:
    error = PermanentFetchError("not found", url=URL, host="h", engine="api", status=404)
    assert error.status == 404
    assert (error.url, error.host, error.engine) == (URL, "h", "api")
    assert PermanentFetchError("x", url=URL).status is None


def test_blocked_attributes() -> None:
    error = Blocked("challenge", url=URL, host="h", engine="firecrawl", vendor="datadome")
    assert error.vendor == "datadome"
    assert (error.url, error.host, error.engine) == (URL, "h", "firecrawl")
    assert Blocked("x", url=URL).vendor is None


def test_budget_exhausted_carries_fetch_attributes() -> None:
    error = BudgetExhausted("spent", url=URL, host="api.scrapfly.io", engine="scrapfly")
    assert (error.url, error.host, error.engine) == (URL, "api.scrapfly.io", "scrapfly")


def test_parse_error_attributes_and_message() -> None:
    error = ParseError(
        ParseReason.UNKNOWN_CURRENCY, "not ISO-4217", field="price.currency", snippet="'XYZ'"
    )
    assert error.reason is ParseReason.UNKNOWN_CURRENCY
    assert error.field == "price.currency"
    assert error.snippet == "'XYZ'"
    assert str(error) == "unknown_currency at price.currency: not ISO-4217"


def test_parse_error_without_field() -> None:
    error = ParseError(ParseReason.EMPTY_PAYLOAD, "empty body")
    assert error.field is None
    assert error.snippet is None
    assert str(error) == "empty_payload: empty body"


@pytest.mark.parametrize("reason", list(ParseReason), ids=str)
def test_parse_error_coerces_string_reasons(reason: ParseReason) -> None:
    error = ParseError(reason.value, "m")
    assert type(error.reason) is ParseReason
    assert error.reason is reason


@pytest.mark.parametrize("reason", ["bogus", "FLOAT_MONEY", "", "float money"])
def test_parse_error_rejects_unknown_reasons(reason: str) -> None:
    with pytest.raises(ValueError, match="ParseReason"):
        ParseError(reason, "m")


def test_parse_error_truncates_snippet_to_200_chars() -> None:
    error = ParseError(ParseReason.INVALID_JSON, "m", snippet="<html>" + "x" * 5000)
    assert error.snippet is not None
    assert len(error.snippet) == 200
    assert error.snippet.startswith("<html>x")


def test_parse_reason_vocabulary_is_snake_case_and_unique() -> None:
    values = [reason.value for reason in ParseReason]
    assert len(values) == len(set(values))
    for value in values:
        assert value == value.lower()
        assert " " not in value
    assert {"float_money", "naive_datetime", "unknown_kind", "invalid_json"} <= set(values)


# --- content_hash -----------------------------------------------------------------------------

PAYLOAD: dict[str, Any] = {
    "CertNumber": "48123456",
    "SpecID": 1158012,
    "CardGrade": "GEM MT 10",
    "Subject": "LUKA DONCIC",
    "Variety": None,
    "prices": [{"amount": "1250.00", "currency": "USD"}],
}


def test_content_hash_is_64_lowercase_hex() -> None:
    digest = content_hash(PAYLOAD)
    assert len(digest) == 64
    assert set(digest) <= set("0123456789abcdef")


def test_content_hash_is_independent_of_key_order() -> None:
    reordered = dict(reversed(list(PAYLOAD.items())))
    reordered["prices"] = [{"currency": "USD", "amount": "1250.00"}]
    assert list(reordered) != list(PAYLOAD)
    assert content_hash(reordered) == content_hash(PAYLOAD)


def test_content_hash_changes_with_content() -> None:
    changed = {**PAYLOAD, "CardGrade": "MINT 9"}
    assert content_hash(changed) != content_hash(PAYLOAD)
    # List order is data, not formatting.
    assert content_hash([1, 2]) != content_hash([2, 1])


def test_content_hash_changes_with_snapshot() -> None:
    without = content_hash(PAYLOAD)
    page = content_hash(PAYLOAD, b"<html>cert 48123456</html>")
    other_page = content_hash(PAYLOAD, b"<html>cert 48123457</html>")
    empty_page = content_hash(PAYLOAD, b"")
    assert len({without, page, other_page, empty_page}) == 4


def test_content_hash_is_deterministic() -> None:
    assert content_hash(PAYLOAD, b"x") == content_hash(dict(PAYLOAD), b"x")


def test_content_hash_handles_non_ascii() -> None:
    assert content_hash({"title": "ポケモン リザードン"}) != content_hash({"title": "ポケモン"})


# --- raw records ------------------------------------------------------------------------------


def _raw_input(**changes: Any) -> RawRecordInput:
    fields: dict[str, Any] = {
        "external_id": "48123456",
        "url": URL,
        "payload": PAYLOAD,
    }
    fields.update(changes)
    return RawRecordInput(**fields)


def test_raw_record_input_defaults() -> None:
    before = datetime.now(UTC)
    rec = _raw_input()
    after = datetime.now(UTC)
    assert rec.engine == "api"
    assert rec.snapshot is None
    assert rec.http_status is None
    assert rec.fetched_at.tzinfo is not None
    assert before <= rec.fetched_at <= after


def test_raw_record_input_refuses_naive_fetched_at() -> None:
    with pytest.raises(ValidationError) as info:
        _raw_input(fetched_at=datetime(2026, 11, 1, 18, 0))  # naive on purpose
    assert info.value.errors()[0]["type"] == "timezone_aware"


def test_raw_record_input_accepts_aware_fetched_at() -> None:
    when = datetime(2026, 11, 1, 18, 0, tzinfo=UTC)
    assert _raw_input(fetched_at=when).fetched_at == when


@pytest.mark.parametrize("status", [0, 99, 600, 999, -200])
def test_raw_record_input_refuses_bad_http_status(status: int) -> None:
    with pytest.raises(ValidationError) as info:
        _raw_input(http_status=status)
    assert info.value.errors()[0]["loc"] == ("http_status",)


@pytest.mark.parametrize("status", [100, 200, 304, 404, 599])
def test_raw_record_input_accepts_http_status(status: int) -> None:
    assert _raw_input(http_status=status).http_status == status


@pytest.mark.parametrize("engine", ["api", "firecrawl", "scrapfly"])
def test_raw_record_input_engines(engine: str) -> None:
    assert _raw_input(engine=engine).engine == engine


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("engine", "playwright"),
        ("external_id", ""),
        ("external_id", "x" * 513),
        ("url", ""),
        ("payload", {"price": object()}),
        ("source", "psa"),
    ],
)
def test_raw_record_input_refuses(key: str, value: Any) -> None:
    with pytest.raises(ValidationError) as info:
        _raw_input(**{key: value})
    assert info.value.errors()[0]["loc"][0] == key


def test_raw_record_input_is_frozen() -> None:
    rec = _raw_input()
    with pytest.raises(ValidationError):
        rec.url = "https://other.example/"  # type: ignore[misc]
    assert rec.url == URL


def _raw_record(**changes: Any) -> RawRecord:
    fields: dict[str, Any] = {
        "external_id": "48123456",
        "url": URL,
        "payload": PAYLOAD,
        "id": "raw_01JB8Z3K2M9QY",
        "connector_id": "psa-cert",
        "content_hash": content_hash(PAYLOAD),
        "connector_version": "1.0.0",
        "parser_version": "3",
    }
    fields.update(changes)
    return RawRecord(**fields)


def test_raw_record_is_a_raw_record_input() -> None:
    rec = _raw_record()
    assert isinstance(rec, RawRecordInput)
    assert rec.id == "raw_01JB8Z3K2M9QY"
    assert rec.snapshot_ref is None


@pytest.mark.parametrize("raw_id", ["raw_1", "raw_AbC123", "raw_01JB8Z3K2M9QYXYZ"])
def test_raw_record_id_pattern_accepts(raw_id: str) -> None:
    assert _raw_record(id=raw_id).id == raw_id


@pytest.mark.parametrize(
    "raw_id", ["raw_", "01JB8Z3K2M9QY", "RAW_1", "raw-1", "raw_1-2", "raw_ 1", "rec_1", ""]
)
def test_raw_record_id_pattern_refuses(raw_id: str) -> None:
    with pytest.raises(ValidationError) as info:
        _raw_record(id=raw_id)
    assert info.value.errors()[0]["loc"] == ("id",)


@pytest.mark.parametrize(
    "digest", ["abc", "A" * 64, "g" * 64, "0" * 63, "0" * 65, content_hash(PAYLOAD).upper()]
)
def test_raw_record_content_hash_pattern(digest: str) -> None:
    with pytest.raises(ValidationError) as info:
        _raw_record(content_hash=digest)
    assert info.value.errors()[0]["loc"] == ("content_hash",)


# --- FetchResult ------------------------------------------------------------------------------


def _result(content: bytes, **changes: Any) -> FetchResult:
    return FetchResult(url=URL, status=200, content=content, engine="api", **changes)


def test_fetch_result_json() -> None:
    assert _result(b'{"CertNumber": "48123456", "IsValidRequest": true}').json() == {
        "CertNumber": "48123456",
        "IsValidRequest": True,
    }


def test_fetch_result_json_accepts_utf8_bom() -> None:
    assert _result('\ufeff{"a": 1}'.encode()).json() == {"a": 1}


@pytest.mark.parametrize("content", [b"", b"   ", b"\n\t \r\n"])
def test_fetch_result_json_empty_payload(content: bytes) -> None:
    with pytest.raises(ParseError) as info:
        _result(content).json()
    assert info.value.reason is ParseReason.EMPTY_PAYLOAD
    assert URL in str(info.value)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"<!DOCTYPE html><html><title>Just a moment...</title></html>", "invalid_json"),
        (b'{"CertNumber": "48123456",', "truncated"),
        (b'{"products": [{"title": "Charizard', "truncated"),
        (b"{'single': 'quotes'}", "invalid_json"),
        (b"\xff\xfe\x00{", "encoding_error"),
        ('{"title": "Pokémon"}'.encode("latin-1"), "encoding_error"),
    ],
)
def test_fetch_result_json_names_why_with_a_snippet(content: bytes, reason: str) -> None:
    result = _result(content)
    with pytest.raises(ParseError) as info:
        result.json()
    assert info.value.reason == reason  # cut short, not UTF-8, or garbage: told apart
    assert info.value.snippet is not None
    assert info.value.snippet == result.text[:200]
    assert info.value.snippet != ""


def test_fetch_result_json_snippet_is_capped() -> None:
    with pytest.raises(ParseError) as info:
        _result(b"<html>" + b"x" * 10_000 + b"</html>").json()
    assert info.value.snippet is not None
    assert len(info.value.snippet) == 200
    assert info.value.snippet.startswith("<html>")


def test_fetch_result_text_replaces_undecodable_bytes() -> None:
    assert _result(b"caf\xc3\xa9 \xff").text == "café \ufffd"


def test_fetch_result_defaults_and_frozen() -> None:
    result = _result(b"{}")
    assert result.headers == {}
    assert (result.elapsed_ms, result.not_modified, result.credits) == (0, False, 0.0)
    with pytest.raises(AttributeError):
        result.status = 500  # type: ignore[misc]


# --- CrawlContext -----------------------------------------------------------------------------


async def _fake_fetch(url: str, **kwargs: Any) -> FetchResult:
    return FetchResult(url=url, status=200, content=b'{"page": 1}', engine="api")


def _ctx(**changes: Any) -> CrawlContext:
    return CrawlContext(connector_id="psa-cert", fetch=_fake_fetch, **changes)


def test_crawl_context_defaults() -> None:
    ctx = _ctx()
    assert ctx.cursor is None
    assert ctx.options == CrawlOptions()
    assert ctx.options.mode == "incremental"
    assert ctx.log is not None


def test_crawl_context_fetch_is_the_given_fetcher() -> None:
    result = asyncio.run(_ctx().fetch("https://shop.example/products.json?page=1"))
    assert result.url == "https://shop.example/products.json?page=1"
    assert result.json() == {"page": 1}


def test_set_cursor_copies_the_dict() -> None:
    ctx = _ctx(cursor={"page": 3})
    cursor: dict[str, Any] = {"page": 4, "since": "2026-11-01T00:00:00Z"}
    ctx.set_cursor(cursor)
    cursor["page"] = 99
    cursor["extra"] = True
    assert ctx.cursor == {"page": 4, "since": "2026-11-01T00:00:00Z"}
    assert ctx.cursor is not cursor


def test_set_cursor_replaces_rather_than_merges() -> None:
    ctx = _ctx(cursor={"page": 3, "collection": "pokemon"})
    ctx.set_cursor({"page": 1})
    assert ctx.cursor == {"page": 1}


def test_set_cursor_is_isolated_from_later_nested_mutation() -> None:
    ctx = _ctx()
    state: dict[str, Any] = {"pages": {"pokemon": 3}}
    ctx.set_cursor(state)
    state["pages"]["pokemon"] = 4  # the next page, not yet yielded
    assert ctx.cursor == {"pages": {"pokemon": 3}}


def test_progress_calls_on_progress_with_a_progress() -> None:
    seen: list[Progress] = []
    ctx = _ctx(on_progress=seen.append)
    reached = datetime(2024, 1, 1, tzinfo=UTC)
    ctx.progress(pages=3, items=120, total_pages=40, reached_date=reached)
    ctx.progress(items=7)
    assert seen == [
        Progress(pages=3, items=120, total_pages=40, reached_date=reached),
        Progress(pages=0, items=7, total_pages=None, reached_date=None),
    ]
    assert all(type(p) is Progress for p in seen)


def test_progress_without_callback_is_silent() -> None:
    _ctx().progress(pages=1, items=1)  # the default callback ignores it; must not raise


def test_progress_is_frozen() -> None:
    progress = Progress(pages=1)
    with pytest.raises(AttributeError):
        progress.pages = 2  # type: ignore[misc]


def test_crawl_options_refuse_naive_and_bad_values() -> None:
    with pytest.raises(ValidationError):
        CrawlOptions(since=datetime(2026, 1, 1))  # naive on purpose
    with pytest.raises(ValidationError):
        CrawlOptions(max_pages=0)
    with pytest.raises(ValidationError):
        CrawlOptions(mode="full")  # type: ignore[arg-type]
    options = CrawlOptions(mode="backfill", since=datetime(2020, 1, 1, tzinfo=UTC), max_pages=5)
    assert (options.mode, options.max_pages) == ("backfill", 5)


# --- Connector protocol -----------------------------------------------------------------------

META = ConnectorMeta(
    id="psa-cert",
    source="PSA",
    engines=("api",),
    categories=("sports_card", "tcg_card"),
    capabilities=("cert_lookup", "population_report", "url_lookup"),
    requires=("PSA_API_TOKEN",),
    url_patterns=(r"^https://www\.psacard\.com/cert/\d+",),
)


class MinimalConnector:
    meta = META
    version = "1.0.0"
    parser_version = "1"

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        yield RawRecordInput(external_id="48123456", url=URL, payload=PAYLOAD)

    def normalize(self, raw: RawRecord) -> list[Any]:
        return []

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP", latency_ms=42)

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


class NoNormalize:
    meta = META
    version = "1.0.0"
    parser_version = "1"

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        yield RawRecordInput(external_id="1", url=URL, payload={})

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        return []


def test_minimal_connector_satisfies_the_protocol() -> None:
    assert isinstance(MinimalConnector(), Connector)


def test_object_missing_normalize_is_not_a_connector() -> None:
    assert not isinstance(NoNormalize(), Connector)


PROTOCOL_MEMBERS = (
    "meta",
    "version",
    "parser_version",
    "crawl",
    "normalize",
    "health_check",
    "lookup",
)


def test_partial_built_with_every_member_is_a_connector() -> None:
    # Guards the test below: the type() construction itself yields a valid connector.
    complete = type("Complete", (), {n: getattr(MinimalConnector, n) for n in PROTOCOL_MEMBERS})
    assert isinstance(complete(), Connector)


@pytest.mark.parametrize("missing", PROTOCOL_MEMBERS)
def test_object_missing_any_member_is_not_a_connector(missing: str) -> None:
    members = {
        name: getattr(MinimalConnector, name) for name in PROTOCOL_MEMBERS if name != missing
    }
    partial = type("Partial", (), members)()
    assert not isinstance(partial, Connector)


def test_minimal_connector_runs_through_a_context() -> None:
    connector = MinimalConnector()
    ctx = _ctx()

    async def drive() -> tuple[list[RawRecordInput], ConnectorHealth]:
        records = [rec async for rec in connector.crawl(ctx)]
        return records, await connector.health_check(ctx)

    records, health = asyncio.run(drive())
    assert [r.external_id for r in records] == ["48123456"]
    assert health.status == "UP"
    assert connector.meta.matches_url(URL)


# --- ConnectorHealth --------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["UP", "DEGRADED", "BROKEN", "DISABLED", "MAINTENANCE"])
def test_health_status_accepts(status: HealthStatus) -> None:
    assert ConnectorHealth(status=status).status == status


def test_health_status_literal_is_exactly_five() -> None:
    assert get_args(HealthStatus) == ("UP", "DEGRADED", "BROKEN", "DISABLED", "MAINTENANCE")


@pytest.mark.parametrize("status", ["OK", "up", "DOWN", "", "HEALTHY"])
def test_health_status_refuses(status: str) -> None:
    with pytest.raises(ValidationError) as info:
        ConnectorHealth(status=status)  # type: ignore[arg-type]
    assert info.value.errors()[0]["loc"] == ("status",)


def test_health_defaults_and_constraints() -> None:
    before = datetime.now(UTC)
    health = ConnectorHealth(status="DEGRADED", message="p95 latency 4s", details={"p95_ms": 4000})
    assert health.checked_at.tzinfo is not None
    assert before - timedelta(seconds=1) <= health.checked_at <= datetime.now(UTC)
    assert health.latency_ms is None
    assert health.details == {"p95_ms": 4000}
    with pytest.raises(ValidationError):
        ConnectorHealth(status="UP", latency_ms=-1)
    with pytest.raises(ValidationError):
        ConnectorHealth(status="UP", checked_at=datetime(2026, 1, 1))  # naive on purpose
    with pytest.raises(ValidationError):
        ConnectorHealth(status="UP", uptime=1.0)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "payload",
    [{1: "int key"}, {"a": {1, 2}}, {"a": object()}, {"when": datetime(2026, 1, 1, tzinfo=UTC)}],
)
def test_raw_payloads_must_be_json_values(payload: object) -> None:
    with pytest.raises(ValidationError, match="payload must be a JSON value"):
        RawRecordInput(external_id="x", url="https://x.example/", payload=payload)
