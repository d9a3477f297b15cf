"""Domain policy: resolution order, wildcards, offline public-suffix parents, strict merging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rareindex_connectors._policy import DomainPolicy, PolicySet, registrable_domain
from rareindex_connectors.errors import PolicyError


def test_resolution_defaults_parent_wildcard_exact() -> None:
    policies = PolicySet.from_mapping(
        {
            "defaults": {"concurrency": 4, "min_interval_ms": 500},
            "domains": {
                "example.co.uk": {"concurrency": 3, "budget_per_day": 1000},
                "*.example.co.uk": {"min_interval_ms": 800},
                "*.api.example.co.uk": {"min_interval_ms": 900},
                "v2.api.example.co.uk": {"concurrency": 1},
            },
        }
    )
    assert policies.for_host("other.org").concurrency == 4
    shop = policies.for_host("shop.example.co.uk")
    assert (shop.concurrency, shop.min_interval_ms, shop.budget_per_day) == (3, 800, 1000)
    exact = policies.for_host("V2.API.example.co.uk.")
    assert (exact.concurrency, exact.min_interval_ms, exact.budget_per_day) == (1, 900, 1000)
    assert DomainPolicy().concurrency == 2  # built-in defaults when nothing is configured


def test_registrable_domain_is_public_suffix_aware_and_offline() -> None:
    assert registrable_domain("a.shop.example.co.uk") == "example.co.uk"
    assert registrable_domain("store.myshopify.com") == "store.myshopify.com"  # private suffix
    assert registrable_domain("127.0.0.1") is None
    assert registrable_domain("json.fake.test") is None


def test_unknown_keys_are_refused_with_a_guess_and_the_valid_names() -> None:
    with pytest.raises(PolicyError) as excinfo:
        PolicySet.from_mapping({"domains": {"x.com": {"concurency": 2}}})
    message = str(excinfo.value)
    assert "unknown policy key 'concurency' (did you mean 'concurrency'?)" in message
    assert "min_interval_ms" in message and "budget_per_day" in message
    with pytest.raises(PolicyError, match="unknown top-level key"):
        PolicySet.from_mapping({"hosts": {}})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"engines": ["api", "selenium"]}, "engines"),
        ({"user_agent": "stealth"}, "user_agent"),
    ],
)
def test_invalid_values_fail_at_load_time(value: dict[str, object], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        PolicySet.from_mapping({"domains": {"x.com": value}})


def _write(root: Path, name: str, data: object) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_fragments_and_override_may_only_tighten(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "domains.json",
        {"defaults": {"concurrency": 4}, "domains": {"shop.com": {"budget_per_minute": 60}}},
    )
    _write(
        tmp_path,
        "domains.d/10-shop.json",
        {"domains": {"shop.com": {"budget_per_minute": 30}, "new.com": {"concurrency": 3}}},
    )
    policies = PolicySet.load(tmp_path)
    assert policies.for_host("shop.com").budget_per_minute == 30
    assert policies.for_host("new.com").concurrency == 3  # a new host, tighter than the defaults
    assert policies.hosts() == ["new.com", "shop.com"]

    override = tmp_path / "local.json"
    override.write_text(json.dumps({"domains": {"shop.com": {"min_interval_ms": 5000}}}))
    assert PolicySet.load(tmp_path, override=override).for_host("shop.com").min_interval_ms == 5000


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ({"budget_per_minute": 30}, {"budget_per_minute": 31}),
        ({"budget_per_minute": 30}, {"budget_per_minute": None}),
        ({"concurrency": 2}, {"concurrency": 3}),
        ({"min_interval_ms": 1000}, {"min_interval_ms": 999}),
        ({"engines": ["api"]}, {"engines": ["api", "scrapfly"]}),
        ({"circuit_cooldown_ms": 60000}, {"circuit_cooldown_ms": 1000}),
    ],
)
def test_a_looser_later_value_is_a_load_error(
    tmp_path: Path, earlier: dict[str, object], later: dict[str, object]
) -> None:
    _write(tmp_path, "domains.json", {"domains": {"shop.com": earlier}})
    _write(tmp_path, "domains.d/shop.json", {"domains": {"shop.com": later}})
    with pytest.raises(PolicyError) as excinfo:
        PolicySet.load(tmp_path)
    key = next(iter(later))
    assert "domains.d/shop.json" in str(excinfo.value) and key in str(excinfo.value)
    assert "may only make limits stricter" in str(excinfo.value)


def test_broken_files_name_themselves(tmp_path: Path) -> None:
    (tmp_path / "domains.json").write_text("{not json")
    with pytest.raises(PolicyError, match=r"domains\.json: not valid JSON"):
        PolicySet.load(tmp_path)
    with pytest.raises(PolicyError, match="override file does not exist"):
        PolicySet.load(tmp_path / "empty", override=tmp_path / "missing.json")


def test_the_shipped_domains_json_and_fragments_load() -> None:
    root = Path(__file__).resolve().parents[3] / "connectors"
    policies = PolicySet.load(root)
    policy = policies.for_host("www.example.com")
    assert policy.user_agent == "bot" and policy.allow_private_network is False
    fake = policies.for_host("cards-shop.fake.test")  # domains.json's private_hosts: loopback
    assert fake.allow_private_network is True and fake.max_retries == 1  # the fragment tightens
