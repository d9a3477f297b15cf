"""Per-host fetch policy from ``connectors/domains.json`` and ``connectors/domains.d/*.json``.

Files have this shape (every key optional except where a host needs it)::

    {"defaults": {"min_interval_ms": 1000, "concurrency": 2, ...},
     "domains": {"example.com": {...}, "shop.example.com": {...}, "*.example.org": {...}},
     "private_hosts": ["*.fake.test"]}

**Resolution** for a host: built-in defaults, then the file's ``defaults``, then the registrable
parent domain (public-suffix aware, offline: ``shop.example.co.uk`` -> ``example.co.uk``), then
wildcard keys from the widest to the narrowest (``*.example.org``), then the exact host.

**Who may loosen**: ``domains.json`` is the operator's base policy and may set any limit.
Everything merged after it (each ``domains.d/*.json`` fragment in file-name order, then the
optional local override file) can only tighten: a fragment is checked against the *effective*
policy of every host it could apply to (defaults -> parent -> wildcards -> host, before and after
the fragment), so a wildcard such as ``*.com`` or a fragment's ``defaults`` cannot loosen an
interval, concurrency, budget, retry count, breaker, size or engine list for any host. A
loosening is a :class:`PolicyError` naming the file, the key, the hosts and the limit it would
loosen. Unknown keys are refused with the valid names listed.

**Private networks** (the SSRF allow-list) are never granted by a policy file entry: a host may
reach loopback or private addresses only when it matches the operator-owned ``private_hosts``
list of ``domains.json`` (exact names or ``*.suffix``), or the ``private_hosts`` passed in code
(:meth:`PolicySet.load`; :meth:`PolicySet.from_mapping` is code too, so its entries may set
``allow_private_network``). A file entry may only set it to ``false``.

Example:
    >>> policies = PolicySet.from_mapping({"domains": {"example.com": {"concurrency": 1}}})
    >>> policies.for_host("shop.example.com").concurrency
    1
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ._raw import EngineName
from .errors import PolicyError

__all__ = ["DomainPolicy", "PolicySet", "registrable_domain"]

UserAgentMode = Literal["bot", "browser"]

# Limit keys and the direction that is stricter: "min" means smaller is stricter.
_STRICTER: dict[str, Literal["min", "max", "subset", "unset"]] = {
    "min_interval_ms": "max",
    "concurrency": "min",
    "max_retries": "min",
    "max_wait_ms": "min",
    "retry_after_cap_ms": "min",
    "reschedule_max_ms": "max",
    "max_response_bytes": "min",
    "crawl_depth": "min",
    "backfill_max_pages": "min",
    "circuit_failures": "min",
    "circuit_cooldown_ms": "max",
    "budget_per_minute": "min",
    "budget_per_day": "min",
    "engines": "subset",
    "allow_private_network": "min",
    "robots_permission": "unset",
    "robots_revisit_ms": "min",
}


class DomainPolicy(BaseModel):
    """How RareIndex may fetch from one host. Frozen; unknown keys are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    min_interval_ms: int = Field(default=1000, ge=0, description="between request starts")
    concurrency: int = Field(default=2, ge=1, le=256)
    timeout_ms: int = Field(default=20_000, ge=100)
    max_retries: int = Field(default=3, ge=0, le=10)
    max_wait_ms: int = Field(default=60_000, ge=0, description="longest in-process wait")
    retry_after_cap_ms: int = Field(default=120_000, ge=0, description="longer: reschedule")
    reschedule_max_ms: int = Field(
        default=6 * 3_600_000,
        ge=60_000,
        description="the longest Retry-After a rescheduled crawl waits for (a longer one is cut "
        "to this, logged)",
    )
    max_response_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)
    engines: tuple[EngineName, ...] = ("api", "firecrawl", "scrapfly")
    engine_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    country: str | None = None
    locale: str | None = None
    currency: str | None = None
    crawl_depth: int = Field(default=3, ge=0)
    backfill_max_pages: int = Field(default=1000, ge=1)
    user_agent: UserAgentMode = "bot"
    circuit_failures: int = Field(default=5, ge=1)
    circuit_cooldown_ms: int = Field(default=60_000, ge=0)
    budget_per_minute: int | None = Field(default=None, ge=1)
    budget_per_day: int | None = Field(default=None, ge=1)
    allow_private_network: bool = Field(
        default=False, description="SSRF allow-list: only for the tests' fake web"
    )
    robots_permission: str | None = Field(
        default=None,
        min_length=8,
        description="the host's written permission to crawl regardless of its robots.txt "
        "(who granted it, when): robots.txt is then not applied, and every run logs it",
    )
    robots_revisit_ms: int = Field(
        default=86_400_000, ge=60_000, description="how long a fetched robots.txt is trusted"
    )

    @field_validator("engines")
    @classmethod
    def _engines_unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or len(set(value)) != len(value):
            raise ValueError("engines must be a non-empty list without duplicates")
        return value

    @property
    def min_interval_s(self) -> float:
        """``min_interval_ms`` in seconds."""
        return self.min_interval_ms / 1000


_FIELDS = frozenset(DomainPolicy.model_fields)


@cache
def _extractor() -> Any:
    import tldextract

    # No suffix_list_urls: the public-suffix snapshot bundled with tldextract, never the network.
    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True
    )


def registrable_domain(host: str) -> str | None:
    """The registrable parent of ``host`` (``a.shop.example.co.uk`` -> ``example.co.uk``)."""
    parts = _extractor()(host.lower().rstrip("."))
    if not parts.suffix or not parts.domain:
        return None
    return f"{parts.domain}.{parts.suffix}"


def _check_keys(overrides: Mapping[str, Any], where: str) -> None:
    for key in overrides:
        if key not in _FIELDS:
            guess = difflib.get_close_matches(key, _FIELDS, n=1)
            hint = f" (did you mean {guess[0]!r}?)" if guess else ""
            valid = ", ".join(sorted(_FIELDS))
            raise PolicyError(f"{where}: unknown policy key {key!r}{hint}; valid keys: {valid}")


def _is_looser(key: str, old: Any, new: Any) -> bool:
    direction = _STRICTER.get(key)
    if direction == "unset":  # a grant (robots_permission) is only the operator's to give
        return old is None and new is not None
    if direction is None or old is None:
        return False
    if new is None:  # removing a budget or limit loosens it
        return True
    if direction == "min":
        return bool(new > old)
    if direction == "max":
        return bool(new < old)
    return not set(new) <= set(old)


def _layers(host: str) -> list[str]:
    """The domain keys that apply to ``host``, from the widest to the exact host."""
    layers: list[str] = []
    parent = registrable_domain(host)
    if parent and parent != host:
        layers.append(parent)
    labels = host.split(".")
    layers += [f"*.{'.'.join(labels[i:])}" for i in range(len(labels) - 1, 0, -1)]
    layers.append(host)
    return layers


def _matches(host: str, patterns: Iterable[str]) -> bool:
    """Whether ``host`` is one of ``patterns`` (exact names, or ``*.suffix`` for hosts below)."""
    for pattern in patterns:
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def _private_hosts(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PolicyError(
            f'{where}: private_hosts must be a list of host names, e.g. ["localhost", "*.lan.test"]'
        )
    patterns = tuple(v.strip().lower().rstrip(".") for v in value)
    for pattern in patterns:
        if pattern.removeprefix("*.") in ("", "*") or "/" in pattern or ":" in pattern:
            raise PolicyError(
                f"{where}: private_hosts entry {pattern!r} is not a host name; write an exact "
                'name ("intranet.example") or a suffix wildcard ("*.lan.test"), never "*"'
            )
    return patterns


_NO_HOST = "policy-check.invalid"
"""A host that no entry names: the policy of every host without an entry of its own."""


def _probes(keys: Iterable[str]) -> dict[str, str]:
    """One host per group of hosts that the entries ``keys`` resolve alike, with a description.

    A host's policy depends only on which entries apply to it, so besides each named host and
    a host below each entry (``any-host.<key>``, which every wildcard and parent that applies to
    deeper hosts also reaches), one host that no entry names covers every other host.
    """
    probes = {_NO_HOST: "every host without an entry of its own"}
    for key in sorted(keys):
        base = key.removeprefix("*.")
        if not key.startswith("*."):
            probes.setdefault(base, repr(base))
        probes.setdefault(f"any-host.{base}", f"every host under {base!r}")
    return probes


class _Layered:
    """Defaults, domain entries and private hosts: one state of the merge, resolvable by host."""

    def __init__(
        self,
        defaults: Mapping[str, Any],
        domains: Mapping[str, Mapping[str, Any]],
        private_hosts: Iterable[str] = (),
    ):
        self.defaults = dict(defaults)
        self.domains = {key.lower(): dict(value) for key, value in domains.items()}
        self.private_hosts = tuple(private_hosts)

    def copy(self) -> _Layered:
        return _Layered(self.defaults, self.domains, self.private_hosts)

    def resolve(self, host: str) -> DomainPolicy:
        merged = dict(self.defaults)
        if _matches(host, self.private_hosts):
            merged["allow_private_network"] = True
        for key in _layers(host) if host != _NO_HOST else ():
            merged.update(self.domains.get(key, {}))
        try:
            return DomainPolicy(**merged)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise PolicyError(f"policy for {host!r}: {where}: {first['msg']}") from None


class PolicySet:
    """All domain policies, merged and validated; :meth:`for_host` resolves one host."""

    def __init__(
        self,
        defaults: Mapping[str, Any],
        domains: Mapping[str, Mapping[str, Any]],
        *,
        private_hosts: Iterable[str] = (),
    ):
        self._state = _Layered(defaults, domains, private_hosts)
        self._cache: dict[str, DomainPolicy] = {}
        self.for_host(_NO_HOST)  # validate the defaults now
        for key in self._state.domains:
            self.for_host(key.removeprefix("*."))  # and every entry, at load time

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, source: str = "policy", private_hosts: Iterable[str] = ()
    ) -> PolicySet:
        """Build from one mapping given in code (the operator's: its entries may set
        ``allow_private_network``, as :meth:`FakeWeb.policy
        <rareindex_fakeweb.FakeWeb.policy>` does for the loopback fake web)."""
        return cls._merge([(source, data)], private_hosts=private_hosts, from_code=True)

    @classmethod
    def load(
        cls, root: Path, *, override: Path | None = None, private_hosts: Iterable[str] = ()
    ) -> PolicySet:
        """``root/domains.json``, then ``root/domains.d/*.json`` by name, then ``override``.

        ``private_hosts`` adds, from code, to the ``private_hosts`` list of ``domains.json``:
        the hosts allowed to resolve to private or loopback addresses.
        """
        paths = [root / "domains.json", *sorted((root / "domains.d").glob("*.json"))]
        if override is not None:
            paths.append(override)
        documents = []
        for path in paths:
            if not path.exists():
                if path == override:
                    raise PolicyError(f"{path}: policy override file does not exist")
                continue
            try:
                documents.append((str(path), json.loads(path.read_text())))
            except json.JSONDecodeError as exc:
                raise PolicyError(f"{path}: not valid JSON: {exc}") from None
        base = (root / "domains.json").exists()
        return cls._merge(documents, private_hosts=private_hosts, has_base=base)

    @classmethod
    def _merge(
        cls,
        documents: Iterable[tuple[str, Mapping[str, Any]]],
        *,
        private_hosts: Iterable[str] = (),
        from_code: bool = False,
        has_base: bool = True,
    ) -> PolicySet:
        given = _private_hosts(list(private_hosts), "private_hosts (code, RI_PRIVATE_HOSTS)")
        state = _Layered({}, {}, given)
        for index, (where, document) in enumerate(documents):
            is_base = index == 0 and has_base
            if not isinstance(document, Mapping):
                raise PolicyError(f"{where}: must be an object with defaults and domains")
            unknown = set(document) - {"defaults", "domains", "private_hosts", "$comment"}
            if unknown:
                raise PolicyError(
                    f"{where}: unknown top-level key(s) {sorted(unknown)}; "
                    "valid: defaults, domains, private_hosts"
                )
            before = state.copy()
            if "private_hosts" in document:
                if not is_base:
                    raise PolicyError(
                        f"{where}: private_hosts is the operator's list and only domains.json "
                        "may set it; a domains.d fragment or override can only tighten"
                    )
                listed = _private_hosts(document["private_hosts"], f"{where}: private_hosts")
                state.private_hosts += listed
            cls._merge_layer(
                state.defaults, document.get("defaults", {}), f"{where}: defaults", from_code
            )
            domains = document.get("domains", {})
            if not isinstance(domains, Mapping):
                raise PolicyError(f"{where}: domains must be an object of host -> policy keys")
            for host, overrides in domains.items():
                target = state.domains.setdefault(host.lower(), {})
                cls._merge_layer(target, overrides, f"{where}: domains[{host!r}]", from_code)
            if not is_base:
                _refuse_loosening(before, state, where, document)
        return cls(state.defaults, state.domains, private_hosts=state.private_hosts)

    @staticmethod
    def _merge_layer(
        target: dict[str, Any], overrides: Mapping[str, Any], where: str, from_code: bool
    ) -> None:
        if not isinstance(overrides, Mapping):
            raise PolicyError(f"{where}: must be an object of policy keys")
        _check_keys(overrides, where)
        if overrides.get("allow_private_network") is True and not from_code:
            raise PolicyError(
                f"{where}: allow_private_network=true is refused in policy files; a host may "
                'reach private addresses only when the operator lists it in "private_hosts" '
                'of domains.json (e.g. "private_hosts": ["*.lan.test"])'
            )
        target.update(overrides)

    def hosts(self) -> list[str]:
        """Every host, domain and wildcard key that has its own entry."""
        return sorted(self._state.domains)

    def for_host(self, host: str) -> DomainPolicy:
        """The resolved policy of ``host``: defaults -> parent domain -> wildcards -> exact."""
        host = host.lower().rstrip(".")
        if host not in self._cache:
            self._cache[host] = self._state.resolve(host)
        return self._cache[host]


def _refuse_loosening(
    before: _Layered, after: _Layered, where: str, document: Mapping[str, Any]
) -> None:
    """Raise when ``document`` (merged into ``before``, giving ``after``) loosens any limit of
    any host's effective policy."""
    for probe, hosts in _probes(before.domains.keys() | after.domains.keys()).items():
        old, new = before.resolve(probe), after.resolve(probe)
        for key in _STRICTER:
            was, now = getattr(old, key), getattr(new, key)
            if _is_looser(key, was, now):
                entry = _entry_setting(document, probe, key)
                shown = list(now) if isinstance(now, tuple) else now
                limit = list(was) if isinstance(was, tuple) else was
                raise PolicyError(
                    f"{where}: {entry}.{key}={shown!r} would loosen {key} for {hosts} from "
                    f"the effective {limit!r} (defaults -> parent -> host); a domains.d "
                    "fragment or override may only make limits stricter"
                )


def _entry_setting(document: Mapping[str, Any], host: str, key: str) -> str:
    """The entry of ``document`` whose ``key`` decides ``host``'s value (the most specific)."""
    domains = {k.lower(): v for k, v in document.get("domains", {}).items()}
    for layer in reversed(_layers(host) if host != _NO_HOST else []):
        if key in domains.get(layer, {}):
            return f"domains[{layer!r}]"
    return "defaults"
