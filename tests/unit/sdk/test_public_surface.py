"""Guards the public surfaces of ``rareindex_connectors``: the root (the connector contract),
``records``, ``errors``, ``runtime`` (the fetch runtime) and ``testing``; and the lazy surface of
``rareindex_adapters``, the parsing kits built on it.

Adding or removing a public name is a deliberate act: update EXPECTED here in the same change.
"""

from __future__ import annotations
import __future__

import importlib
import types

import rareindex_connectors

EXPECTED = {
    # the contract
    "Connector",
    "ConnectorMeta",
    "Capability",
    "RefreshClass",
    "refresh_interval",
    "scorer_of",
    "ConnectorHealth",
    "HealthStatus",
    # what a connector's fetches go through
    "CrawlContext",
    "CrawlMode",
    "CrawlOptions",
    "Fetcher",
    "FetchResult",
    "Progress",
    "ResponseKind",
    # scoring what it fetched
    "FieldScorer",
    "Scorer",
    "document_score",
    # version
    "__version__",
}
"""The root: the connector contract, about 20 names."""

RECORDS_EXPECTED = {
    "AuctionLot",
    "CatalogItem",
    "Category",
    "EngineName",
    "Grader",
    "Grading",
    "Identifiers",
    "Listing",
    "Money",
    "NewsItem",
    "NormalizedRecord",
    "PopulationReport",
    "PriceObservation",
    "RawRecord",
    "RawRecordInput",
    "RecordKind",
    "Sale",
    "canonical_json",
    "content_hash",
    "currency_minor_unit",
    "parse_normalized",
}
"""``rareindex_connectors.records``: raw and normalized records, money."""

ERRORS_EXPECTED = {
    "MAX_DEPTH",
    "Blocked",
    "BudgetExhausted",
    "CircuitOpen",
    "ConnectorError",
    "DNSError",
    "FetchError",
    "ParseError",
    "ParseReason",
    "PermanentFetchError",
    "PolicyError",
    "RateLimited",
    "ResponseTooLarge",
    "RobotsDisallowed",
    "RobotsUnavailable",
    "TLSError",
    "TransientFetchError",
    "TruncatedBody",
    "UndecodableBody",
    "UnsafeURL",
    "json_failure",
    "nesting_depth",
}
"""``rareindex_connectors.errors``: the error tree, whole."""

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
    "RequestRate",
    "Resolver",
    "RobotsRules",
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

# Each public surface, what it must list, and the private modules whose ``__all__`` it re-exports.
SURFACES = {
    "rareindex_connectors": (
        EXPECTED,
        ("_connector", "_context", "_health", "_meta", "_scoring"),
    ),
    "rareindex_connectors.records": (RECORDS_EXPECTED, ("_money", "_normalized", "_raw")),
    "rareindex_connectors.errors": (ERRORS_EXPECTED, ()),
    "rareindex_connectors.runtime": (RUNTIME_EXPECTED, ()),
}


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
    # ``records``, ``errors``, ``runtime`` and ``testing`` are public submodules; nothing else
    # public is a module (the parsing kits are the rareindex-adapters distribution).
    for name in ("records", "errors", "runtime", "testing"):
        importlib.import_module(f"rareindex_connectors.{name}")
    modules = {
        name
        for name, value in vars(rareindex_connectors).items()
        if not name.startswith("_") and isinstance(value, types.ModuleType)
    }
    assert modules == {"errors", "records", "runtime", "testing"}


def _ours(value: object) -> bool:
    """A value the SDK defines, not a class, function or ``__future__`` flag it imported."""
    if isinstance(value, __future__._Feature):
        return False
    if isinstance(value, type | types.FunctionType | types.BuiltinFunctionType):
        return value.__module__.startswith("rareindex_connectors")
    return True


def test_each_surface_is_pinned_sorted_and_whole() -> None:
    for surface, (expected, _) in SURFACES.items():
        module = importlib.import_module(surface)
        names = list(module.__all__)
        assert names == sorted(names, key=_isort_key), surface
        assert set(names) == expected, f"{surface} changed: edit its expected set deliberately"
        assert [n for n in names if not hasattr(module, n)] == [], surface
        public = {
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType) and _ours(value)
        }
        assert public - set(names) == set(), f"{surface} has public names outside __all__"


def test_a_name_has_one_home() -> None:
    seen: dict[str, str] = {}
    for surface, (expected, _) in SURFACES.items():
        for name in expected - {"__version__"}:
            assert name not in seen, f"{name} is in both {seen.get(name)} and {surface}"
            seen[name] = surface


def test_every_private_module_export_is_re_exported() -> None:
    for surface, (_, private_modules) in SURFACES.items():
        public = importlib.import_module(surface)
        for module_name in private_modules:
            module = importlib.import_module(f"rareindex_connectors.{module_name}")
            not_exported = set(module.__all__) - set(public.__all__)
            assert not_exported == set(), f"{module_name}.__all__ not in {surface}: {not_exported}"
            for name in module.__all__:
                assert getattr(public, name) is getattr(module, name)


def test_version_is_a_non_empty_string() -> None:
    version = rareindex_connectors.__version__
    assert isinstance(version, str)
    assert version.strip() != ""


def test_adapters_load_on_first_use_and_every_name_resolves() -> None:
    """``rareindex_adapters`` imports an adapter module only when one of its names is
    used (a store connector does not pay for extruct, feedparser and PDFium at start-up), and
    every name it lists resolves to the object of its module."""
    import subprocess
    import sys

    probe = (
        "import sys, rareindex_adapters as a; a.paginate; "
        "print(sorted(m for m in ('extruct', 'feedparser', 'pypdfium2') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"

    import importlib

    import rareindex_adapters as adapters

    for name in adapters.__all__:
        module = importlib.import_module(f"rareindex_adapters.{adapters._MODULE_OF[name]}")
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
    public = {
        name
        for name, value in vars(runtime).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - set(names) == set()
