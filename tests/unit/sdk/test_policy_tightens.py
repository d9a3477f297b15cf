"""A policy that can only tighten: every fragment is checked against the effective policy of
every host it could apply to, and private networks come only from the operator's list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rareindex_connectors.errors import PolicyError
from rareindex_connectors.runtime import PolicySet
from rareindex_fakeweb import FakeWeb

BASE = {
    "defaults": {
        "min_interval_ms": 1000,
        "concurrency": 2,
        "max_retries": 3,
        "engines": ["api", "firecrawl", "scrapfly"],
        "circuit_failures": 5,
        "circuit_cooldown_ms": 60000,
        "budget_per_minute": 60,
        "budget_per_day": 20000,
    },
    "domains": {"example.com": {"concurrency": 1}, "fast.example.org": {"min_interval_ms": 50}},
}


def _root(tmp_path: Path, fragment: Any, base: Any = BASE, name: str = "zz-author.json") -> Path:
    (tmp_path / "domains.d").mkdir(parents=True, exist_ok=True)
    (tmp_path / "domains.json").write_text(json.dumps(base))
    (tmp_path / "domains.d" / name).write_text(json.dumps(fragment))
    return tmp_path


def _refusal(root: Path, **kwargs: Any) -> str:
    with pytest.raises(PolicyError) as excinfo:
        PolicySet.load(root, **kwargs)
    return str(excinfo.value)


def test_the_issue_s_wildcard_fragment_is_refused_naming_file_key_and_limit(
    tmp_path: Path,
) -> None:
    root = _root(tmp_path, {"domains": {"*.com": {"min_interval_ms": 0, "concurrency": 256}}})
    message = _refusal(root)
    assert "domains.d/zz-author.json" in message
    assert "domains['*.com'].min_interval_ms=0" in message
    assert "from the effective 1000" in message and "every host under 'com'" in message
    assert "may only make limits stricter" in message


@pytest.mark.parametrize(
    ("entry", "key", "value", "limit"),
    [
        ("*.com", "concurrency", 3, "2"),
        ("*.com", "max_retries", 4, "3"),
        ("*.com", "budget_per_minute", 61, "60"),
        ("*.com", "budget_per_day", None, "20000"),  # removing a budget loosens it
        ("*.com", "circuit_failures", 6, "5"),
        ("*.com", "circuit_cooldown_ms", 1, "60000"),
        ("shop.example.com", "concurrency", 2, "1"),  # its parent example.com says 1
        ("*.example.com", "concurrency", 2, "1"),
        ("example.com", "engines", ["api", "scrapfly"], "['api']"),  # domains.json says api
    ],
)
def test_no_key_of_a_fragment_loosens_any_host_s_effective_limit(
    tmp_path: Path, entry: str, key: str, value: object, limit: str
) -> None:
    base = json.loads(json.dumps(BASE))
    base["domains"]["example.com"]["engines"] = ["api"]
    root = _root(tmp_path, {"domains": {entry: {key: value}}}, base=base)
    message = _refusal(root)
    assert f"domains[{entry!r}].{key}=" in message and f"from the effective {limit}" in message


def test_a_fragment_s_defaults_may_not_loosen_either(tmp_path: Path) -> None:
    message = _refusal(_root(tmp_path, {"defaults": {"concurrency": 8}}))
    assert "defaults.concurrency=8" in message and "every host without an entry" in message


def test_tightening_fragments_load_and_apply(tmp_path: Path) -> None:
    fragment = {
        "defaults": {"min_interval_ms": 2000, "budget_per_day": 500},
        "domains": {
            "*.example.com": {"concurrency": 1, "engines": ["api"]},  # equal to its parent's
            "fast.example.org": {"min_interval_ms": 60},
        },
    }
    policies = PolicySet.load(_root(tmp_path, fragment))
    assert policies.for_host("other.net").min_interval_ms == 2000
    assert policies.for_host("fast.example.org").min_interval_ms == 60  # its own entry, tighter
    shop = policies.for_host("shop.example.com")
    assert (shop.concurrency, shop.engines, shop.budget_per_day) == (1, ("api",), 500)


def test_a_host_s_own_looser_entry_in_domains_json_is_not_loosened_by_a_fragment(
    tmp_path: Path,
) -> None:
    """The operator's 50 ms for fast.example.org stays what it is when a fragment raises the
    default interval: the fragment tightens the others and loosens nobody."""
    policies = PolicySet.load(_root(tmp_path, {"defaults": {"min_interval_ms": 5000}}))
    assert policies.for_host("fast.example.org").min_interval_ms == 50
    assert policies.for_host("slow.example.org").min_interval_ms == 5000


def test_the_override_file_is_checked_the_same_way(tmp_path: Path) -> None:
    root = _root(tmp_path, {"domains": {}})
    override = tmp_path / "local.json"
    override.write_text(json.dumps({"domains": {"*.org": {"budget_per_minute": 600}}}))
    message = _refusal(root, override=override)
    assert "local.json" in message and "budget_per_minute=600" in message


@pytest.mark.parametrize(
    "document",
    [
        {"domains": {"*.com": {"allow_private_network": True}}},
        {"defaults": {"allow_private_network": True}},
    ],
)
def test_private_networks_are_never_granted_by_a_policy_file(
    tmp_path: Path, document: dict[str, Any]
) -> None:
    message = _refusal(_root(tmp_path, document))  # as a fragment
    assert "zz-author.json" in message and "allow_private_network=true is refused" in message
    assert '"private_hosts" of domains.json' in message
    (tmp_path / "domains.d" / "zz-author.json").unlink()
    base = {**BASE, **document}  # not in domains.json's entries either: only its list
    message = _refusal(_root(tmp_path, {}, base=base))
    assert "domains.json" in message and "allow_private_network=true is refused" in message


def test_only_domains_json_names_private_hosts(tmp_path: Path) -> None:
    root = _root(tmp_path, {"private_hosts": ["*.com"]})
    message = _refusal(root)
    assert "zz-author.json: private_hosts is the operator's list" in message

    root = _root(tmp_path, {"domains": {}}, base={**BASE, "private_hosts": ["*.lan.test"]})
    policies = PolicySet.load(root)
    assert policies.for_host("nas.lan.test").allow_private_network is True
    assert policies.for_host("lan.test").allow_private_network is False  # *. means below
    assert policies.for_host("nas.lan.test.evil.com").allow_private_network is False
    assert policies.for_host("example.com").allow_private_network is False

    override = tmp_path / "local.json"  # a file may still take the allowance away
    override.write_text(json.dumps({"domains": {"nas.lan.test": {"allow_private_network": False}}}))
    stricter = PolicySet.load(root, override=override)
    assert stricter.for_host("nas.lan.test").allow_private_network is False


def test_private_hosts_from_code_and_the_fake_web_s_in_code_policy(tmp_path: Path) -> None:
    root = _root(tmp_path, {"domains": {}})
    policies = PolicySet.load(root, private_hosts=["localhost"])
    assert policies.for_host("localhost").allow_private_network is True
    assert policies.for_host("json.fake.test").allow_private_network is False
    in_code = PolicySet.from_mapping(FakeWeb.policy())  # code is the operator's
    assert in_code.for_host("json.fake.test").allow_private_network is True


@pytest.mark.parametrize("entry", ["*", "*.", "", "http://x.test/"])
def test_a_private_hosts_entry_must_be_a_host_name(tmp_path: Path, entry: str) -> None:
    message = _refusal(_root(tmp_path, {}, base={**BASE, "private_hosts": [entry]}))
    assert "is not a host name" in message and "*.lan.test" in message


def test_ri_private_hosts_adds_to_the_operator_s_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rareindex.fetching import load_policies
    from rareindex.settings import Settings

    root = _root(tmp_path, {"domains": {}})
    monkeypatch.setenv("RI_PRIVATE_HOSTS", '["nas.lan.test"]')
    settings = Settings(_env_file=None, connectors_dir=root)  # type: ignore[call-arg]
    policies = load_policies(settings)
    assert policies.for_host("nas.lan.test").allow_private_network is True
    assert policies.for_host("other.lan.test").allow_private_network is False
    monkeypatch.setenv("RI_PRIVATE_HOSTS", '["*"]')
    with pytest.raises(PolicyError, match="is not a host name"):
        load_policies(Settings(_env_file=None, connectors_dir=root))  # type: ignore[call-arg]
