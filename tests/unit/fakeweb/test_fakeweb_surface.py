"""Guards the public surface of ``rareindex_fakeweb``: one ``__all__``, changed deliberately."""

from __future__ import annotations

import types

import rareindex_fakeweb

EXPECTED = {
    # the fake web
    "FAKE_HOSTS",
    "FakeWeb",
    "HostLog",
    # the fake paid scraping APIs
    "FakeFirecrawl",
    "FirecrawlCall",
    "FirecrawlFault",
    "JsonExtractor",
    "create_fake_firecrawl_app",
    "default_json_extractor",
    "FakeScrapfly",
    "ScrapflyCall",
    "ScrapflyFault",
    "create_fake_scrapfly_app",
    # what the fakes share to misbehave and to act like an engine
    "CreditLedger",
    "Delay",
    "PageDigest",
    "RateLimit",
    "Refusal",
    "RuleBook",
    "Throttle",
    "UpstreamPage",
    "digest_page",
    "fetch_upstream",
    "is_valid_target",
    "linger",
}


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions and the rest.
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


def test_all_equals_the_expected_surface() -> None:
    actual = set(rareindex_fakeweb.__all__)
    assert actual - EXPECTED == set(), "new public names: add them to EXPECTED deliberately"
    assert EXPECTED - actual == set(), "public names removed: drop them from EXPECTED deliberately"


def test_all_is_sorted_without_duplicates_and_resolves() -> None:
    names = list(rareindex_fakeweb.__all__)
    assert names == sorted(names, key=_isort_key)
    assert len(names) == len(set(names))
    assert [n for n in names if not hasattr(rareindex_fakeweb, n)] == []


def test_no_public_attribute_is_missing_from_all() -> None:
    public = {
        name
        for name, value in vars(rareindex_fakeweb).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - set(rareindex_fakeweb.__all__) == set()
