"""ConnectorMeta: a connector's declared identity and abilities; refresh_interval per class."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from rareindex_connectors import ConnectorMeta, RefreshClass, refresh_interval
from rareindex_connectors.records import EngineName

GOOD: dict[str, Any] = {
    "id": "tcgplayer",
    "source": "TCGplayer",
    "engines": ("api", "firecrawl"),
    "categories": ("tcg_card",),
    "geography": ("US",),
    "capabilities": ("listing", "sale", "url_lookup"),
    "refresh_class": "HOT",
    "requires": ("TCGPLAYER_API_KEY",),
    "url_patterns": (r"^https://www\.tcgplayer\.com/product/\d+",),
}


def _meta(**changes: Any) -> ConnectorMeta:
    return ConnectorMeta(**{**GOOD, **changes})


def _invalid(**changes: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _meta(**changes)
    return info.value


def _locs(exc: ValidationError) -> set[str]:
    return {".".join(str(part) for part in error["loc"]) for error in exc.errors()}


def test_valid_meta() -> None:
    meta = _meta()
    assert meta.id == "tcgplayer"
    assert meta.engines == ("api", "firecrawl")
    assert meta.capabilities == ("listing", "sale", "url_lookup")
    assert meta.requires == ("TCGPLAYER_API_KEY",)


def test_defaults() -> None:
    meta = ConnectorMeta(
        id="pcgs-coinfacts",
        source="PCGS CoinFacts",
        engines=("api",),
        categories=("coin",),
        capabilities=("cert_lookup", "price_guide"),
    )
    assert meta.refresh_class == "NORMAL"
    assert meta.geography == ("global",)
    assert meta.requires == ()
    assert meta.url_patterns == ()


def test_lists_are_coerced_to_tuples() -> None:
    meta = _meta(engines=["scrapfly"], categories=["comic", "coin"])
    assert meta.engines == ("scrapfly",)
    assert meta.categories == ("comic", "coin")


@pytest.mark.parametrize("slug", ["ab", "psa-pop", "ebay_sold", "130point", "a" * 63])
def test_good_slugs(slug: str) -> None:
    assert _meta(id=slug).id == slug


@pytest.mark.parametrize(
    "slug",
    [
        "a",  # too short
        "a" * 64,  # too long
        "TCGplayer",
        "-tcg",
        "_tcg",
        "tcg player",
        "tcg.player",
        "tcg/player",
        "tcgplayer\n",
        "",
    ],
)
def test_bad_slug_refused(slug: str) -> None:
    assert _locs(_invalid(id=slug)) == {"id"}


def test_empty_source_refused() -> None:
    assert _locs(_invalid(source="")) == {"source"}


@pytest.mark.parametrize("key", ["engines", "categories", "capabilities"])
def test_empty_tuples_refused(key: str) -> None:
    exc = _invalid(**{key: ()})
    assert _locs(exc) == {key}
    assert exc.errors()[0]["type"] == "too_short"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("engines", ("api", "firecrawl", "api")),
        ("categories", ("coin", "coin")),
        ("capabilities", ("listing", "sale", "listing")),
    ],
)
def test_duplicates_refused(key: str, value: tuple[str, ...]) -> None:
    exc = _invalid(**{key: value})
    assert _locs(exc) == {key}
    assert "duplicates" in str(exc)


def test_unknown_engine_refused_and_valid_names_listed() -> None:
    exc = _invalid(engines=("api", "playwright"))
    assert "engines.1" in _locs(exc)
    message = str(exc)
    assert "playwright" in message
    valid = get_args(EngineName)
    assert set(valid) == {"api", "firecrawl", "scrapfly"}
    for name in valid:
        assert f"'{name}'" in message


def test_unknown_capability_refused() -> None:
    exc = _invalid(capabilities=("listing", "teleport"))
    assert any(loc.startswith("capabilities.1") for loc in _locs(exc))
    assert "url_lookup" in str(exc)  # the valid names are listed


def test_unknown_category_refused() -> None:
    exc = _invalid(categories=("pogs",))
    assert any(loc.startswith("categories.0") for loc in _locs(exc))


def test_unknown_refresh_class_refused() -> None:
    assert _locs(_invalid(refresh_class="COLD")) == {"refresh_class"}


@pytest.mark.parametrize("pattern", ["([", r"^https://(www\.)?ebay\.com/itm/(\d+", "*.ebay.com"])
def test_bad_url_regex_refused(pattern: str) -> None:
    exc = _invalid(url_patterns=(r"^https://ok\.example/", pattern))
    assert _locs(exc) == {"url_patterns"}
    assert "not a regex" in str(exc)


@pytest.mark.parametrize("name", ["PSA_API_TOKEN", "EBAY_APP_ID", "X", "K2"])
def test_requires_accepts_env_var_names(name: str) -> None:
    assert _meta(requires=(name,)).requires == (name,)


@pytest.mark.parametrize(
    "name",
    ["psa_api_token", "pSA_API_TOKEN", "x", "1KEY", "_KEY", "PSA-TOKEN", "PSA TOKEN", "KEY\n", ""],
)
def test_requires_refuses_non_env_var_names(name: str) -> None:
    exc = _invalid(requires=("PSA_API_TOKEN", name))
    assert _locs(exc) == {"requires"}
    assert "environment variable" in str(exc)


@pytest.mark.parametrize("key", ["owner", "engine", "rate_limit"])
def test_extra_keys_refused(key: str) -> None:
    exc = _invalid(**{key: "x"})
    assert _locs(exc) == {key}
    assert exc.errors()[0]["type"] == "extra_forbidden"


def test_meta_is_frozen() -> None:
    meta = _meta()
    with pytest.raises(ValidationError) as info:
        meta.id = "other"  # type: ignore[misc]
    assert info.value.errors()[0]["type"] == "frozen_instance"
    assert meta.id == "tcgplayer"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.tcgplayer.com/product/12345", True),
        ("https://www.tcgplayer.com/product/12345/pokemon-base-set-charizard", True),
        ("https://tcgplayer.com/product/12345", False),
        ("http://www.tcgplayer.com/product/12345", False),
        ("https://www.tcgplayer.com/search/all", False),
        ("https://evil.example/?u=https://www.tcgplayer.com/product/1", False),
    ],
)
def test_matches_url(url: str, expected: bool) -> None:
    assert _meta().matches_url(url) is expected


def test_matches_url_any_pattern() -> None:
    meta = _meta(url_patterns=(r"^https://www\.ebay\.com/itm/\d+", r"^https://ebay\.us/"))
    assert meta.matches_url("https://ebay.us/m/AbCd")
    assert meta.matches_url("https://www.ebay.com/itm/325871234567")
    assert not meta.matches_url("https://www.ebay.co.uk/itm/325871234567")


def test_matches_url_searches_unanchored_patterns() -> None:
    # Patterns are searched, not implicitly anchored: authors anchor with ^ when they mean it.
    meta = _meta(url_patterns=(r"ebay\.com/itm/\d+",))
    assert meta.matches_url("https://www.ebay.com/itm/325871234567")
    assert not meta.matches_url("https://www.ebay.com/sch/i.html?_nkw=psa+10")


def test_matches_url_without_patterns_is_false() -> None:
    assert _meta(url_patterns=()).matches_url("https://www.tcgplayer.com/product/1") is False


@pytest.mark.parametrize(
    ("refresh_class", "interval"),
    [
        ("HOT", timedelta(minutes=5)),
        ("ACTIVE", timedelta(minutes=60)),
        ("NORMAL", timedelta(hours=24)),
        ("ARCHIVE", timedelta(days=7)),
    ],
)
def test_refresh_interval(refresh_class: RefreshClass, interval: timedelta) -> None:
    assert refresh_interval(refresh_class) == interval


def test_refresh_interval_covers_every_class_in_increasing_order() -> None:
    classes = get_args(RefreshClass)
    assert classes == ("HOT", "ACTIVE", "NORMAL", "ARCHIVE")
    intervals = [refresh_interval(c) for c in classes]
    assert intervals == sorted(intervals)
    assert len(set(intervals)) == len(intervals)


def test_refresh_interval_unknown_class() -> None:
    with pytest.raises(KeyError):
        refresh_interval("COLD")  # type: ignore[arg-type]
