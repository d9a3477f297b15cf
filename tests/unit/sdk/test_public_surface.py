"""Guards the public surfaces of ``rareindex_connectors``: the root (the connector contract) and
``rareindex_connectors.runtime`` (the fetch runtime).

Adding or removing a public name is a deliberate act: update EXPECTED here in the same change.
"""

from __future__ import annotations

import importlib
import types

import rareindex_connectors

EXPECTED = {
    # contract
    "Connector",
    "ConnectorMeta",
    "Capability",
    "RefreshClass",
    "refresh_interval",
    "scorer_of",
    "ConnectorHealth",
    "HealthStatus",
    # runtime context
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "Fetcher",
    "FetchResult",
    "Progress",
    "ResponseKind",
    # errors
    "Blocked",
    "BudgetExhausted",
    "CircuitOpen",
    "ConnectorError",
    "FetchError",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "PolicyError",
    "RateLimited",
    "TransientFetchError",
    "DNSError",
    "TLSError",
    "TruncatedBody",
    "UndecodableBody",
    # money
    "Money",
    "currency_minor_unit",
    # normalized records
    "AuctionLot",
    "CatalogItem",
    "Category",
    "Grading",
    "Identifiers",
    "Listing",
    "NewsItem",
    "NormalizedRecord",
    "PopulationReport",
    "PriceObservation",
    "RecordKind",
    "Sale",
    "parse_normalized",
    # raw records
    "EngineName",
    "RawRecord",
    "RawRecordInput",
    "canonical_json",
    "content_hash",
    # scoring and the remaining fetch errors
    "FieldScorer",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "Scorer",
    "UnsafeURL",
    "document_score",
    # version
    "__version__",
}

RUNTIME_EXPECTED = {
    "ApiEngine",
    "BROWSER_USER_AGENT",
    "ChallengeKind",
    "ChallengeVendor",
    "ChallengeVerdict",
    "Clock",
    "CostEntry",
    "DomainPolicy",
    "Engine",
    "EngineStats",
    "FetchRequest",
    "FileGateBackend",
    "FirecrawlEngine",
    "GateBackend",
    "HostGates",
    "MemoryGateBackend",
    "Permit",
    "PolicySet",
    "RedisGateBackend",
    "Resolver",
    "Router",
    "RouterSession",
    "SafeResolver",
    "ScrapflyEngine",
    "SystemClock",
    "SystemResolver",
    "Validators",
    "address_problem",
    "bot_user_agent",
    "challenge_from_firecrawl",
    "challenge_from_scrapfly",
    "is_challenge_page",
    "registrable_domain",
}
"""``rareindex_connectors.runtime``: the fetch runtime the index builds, apart from the contract."""

# The private modules whose ``__all__`` the package re-exports.
REEXPORTING_MODULES = (
    "_connector",
    "_context",
    "_errors",
    "_health",
    "_meta",
    "_money",
    "_normalized",
    "_raw",
)


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions and the rest.
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_all_is_sorted() -> None:
    names = list(rareindex_connectors.__all__)
    assert names == sorted(names, key=_isort_key)


def test_all_has_no_duplicates() -> None:
    names = list(rareindex_connectors.__all__)
    assert len(names) == len(set(names))


def test_every_name_in_all_resolves() -> None:
    missing = [n for n in rareindex_connectors.__all__ if not hasattr(rareindex_connectors, n)]
    assert missing == []


def test_all_equals_the_expected_surface() -> None:
    actual = set(rareindex_connectors.__all__)
    assert actual - EXPECTED == set(), "new public names: add them to EXPECTED deliberately"
    assert EXPECTED - actual == set(), "public names removed: drop them from EXPECTED deliberately"


def test_no_public_attribute_is_missing_from_all() -> None:
    public = {
        name
        for name, value in vars(rareindex_connectors).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - set(rareindex_connectors.__all__) == set()


def test_public_submodules_are_only_the_expected_ones() -> None:
    # ``testing``, ``adapters``, ``runtime`` and ``stores`` are public submodules, imported on
    # demand; nothing else public is a module.
    modules = {
        name
        for name, value in vars(rareindex_connectors).items()
        if not name.startswith("_") and isinstance(value, types.ModuleType)
    }
    assert modules <= {"adapters", "runtime", "stores", "testing"}


def test_every_private_module_export_is_re_exported() -> None:
    surface = set(rareindex_connectors.__all__)
    for module_name in REEXPORTING_MODULES:
        module = importlib.import_module(f"rareindex_connectors.{module_name}")
        not_exported = set(module.__all__) - surface
        assert not_exported == set(), f"{module_name}.__all__ not re-exported: {not_exported}"
        for name in module.__all__:
            assert getattr(rareindex_connectors, name) is getattr(module, name)


def test_version_is_a_non_empty_string() -> None:
    version = rareindex_connectors.__version__
    assert isinstance(version, str)
    assert version.strip() != ""


def test_adapters_load_on_first_use_and_every_name_resolves() -> None:
    """``rareindex_connectors.adapters`` imports an adapter module only when one of its names is
    used (a store connector does not pay for extruct, feedparser and PDFium at start-up), and
    every name it lists resolves to the object of its module."""
    import subprocess
    import sys

    probe = (
        "import sys, rareindex_connectors.adapters as a; a.paginate; "
        "print(sorted(m for m in ('extruct', 'feedparser', 'pypdfium2') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"

    import importlib

    from rareindex_connectors import adapters

    for name in adapters.__all__:
        module = importlib.import_module(
            f"rareindex_connectors.adapters.{adapters._MODULE_OF[name]}"
        )
        assert getattr(adapters, name) is getattr(module, name), name
    assert sorted(adapters._MODULE_OF) == sorted(adapters.__all__)


TESTING_EXPECTED = {"FakeEngine", "ScaledClock", "serve_asgi"}


def test_testing_holds_only_what_a_connector_author_uses() -> None:
    """``rareindex_connectors.testing`` is a scripted engine, a fast clock and a local server; the
    fake web is ``rareindex_fakeweb``. Importing it loads no web server (uvicorn is imported when
    ``serve_asgi`` starts one) and nothing of the fake web."""
    import subprocess
    import sys

    from rareindex_connectors import testing

    assert set(testing.__all__) == TESTING_EXPECTED
    assert list(testing.__all__) == sorted(testing.__all__, key=_isort_key)
    assert all(hasattr(testing, name) for name in testing.__all__)
    probe = (
        "import sys, rareindex_connectors.testing; "
        "print(sorted(m for m in ('uvicorn', 'starlette', 'fpdf', 'rareindex_fakeweb') "
        "if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


def test_the_runtime_surface_is_pinned_and_apart_from_the_contract() -> None:
    runtime = importlib.import_module("rareindex_connectors.runtime")
    names = list(runtime.__all__)
    assert names == sorted(names, key=_isort_key)
    assert set(names) == RUNTIME_EXPECTED, "runtime names changed: update RUNTIME_EXPECTED"
    assert [n for n in names if not hasattr(runtime, n)] == []
    assert set(names) & set(rareindex_connectors.__all__) == set(), "a name has one home"
    public = {
        name
        for name, value in vars(runtime).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - set(names) == set()
