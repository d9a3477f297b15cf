"""Per-host fetch policy from ``connectors/domains.json`` and ``connectors/domains.d/*.json``.

Files have this shape (every key optional except where a host needs it)::

    {"defaults": {"min_interval_ms": 1000, "concurrency": 2, ...},
     "domains": {"example.com": {...}, "shop.example.com": {...}, "*.example.org": {...}}}

**Resolution** for a host: built-in defaults, then the file's ``defaults``, then the registrable
parent domain (public-suffix aware, offline: ``shop.example.co.uk`` -> ``example.co.uk``), then
wildcard keys from the widest to the narrowest (``*.example.org``), then the exact host.

**Merging**: ``domains.json`` first, then each ``domains.d/*.json`` in file-name order, then an
optional local override file. A later file may add hosts and keys freely, but where an earlier file
already set a *limit* for the same key, the later value may only be stricter (a smaller
concurrency or budget, a longer interval, fewer engines); a looser one is a :class:`PolicyError`
naming the file, the key and both values. Unknown keys are refused with the valid names listed.

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

from ._errors import PolicyError
from ._raw import EngineName

__all__ = ["DomainPolicy", "PolicySet", "registrable_domain"]

UserAgentMode = Literal["bot", "browser"]

# Limit keys and the direction that is stricter: "min" means smaller is stricter.
_STRICTER: dict[str, Literal["min", "max", "subset"]] = {
    "min_interval_ms": "max",
    "concurrency": "min",
    "max_retries": "min",
    "max_wait_ms": "min",
    "retry_after_cap_ms": "min",
    "max_response_bytes": "min",
    "crawl_depth": "min",
    "backfill_max_pages": "min",
    "circuit_failures": "min",
    "circuit_cooldown_ms": "max",
    "budget_per_minute": "min",
    "budget_per_day": "min",
    "engines": "subset",
    "allow_private_network": "min",
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
    if direction is None or old is None:
        return False
    if new is None:  # removing a budget or limit loosens it
        return True
    if direction == "min":
        return bool(new > old)
    if direction == "max":
        return bool(new < old)
    return not set(new) <= set(old)


class PolicySet:
    """All domain policies, merged and validated; :meth:`for_host` resolves one host."""

    def __init__(self, defaults: Mapping[str, Any], domains: Mapping[str, Mapping[str, Any]]):
        self._defaults = dict(defaults)
        self._domains = {key.lower(): dict(value) for key, value in domains.items()}
        self._cache: dict[str, DomainPolicy] = {}
        self.for_host("policy-check.invalid")  # validate the defaults now
        for key in self._domains:
            self.for_host(key.removeprefix("*."))  # and every entry, at load time

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "policy") -> PolicySet:
        """Build from one already-parsed file."""
        return cls._merge([(source, data)])

    @classmethod
    def load(cls, root: Path, *, override: Path | None = None) -> PolicySet:
        """``root/domains.json``, then ``root/domains.d/*.json`` by name, then ``override``."""
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
        return cls._merge(documents)

    @classmethod
    def _merge(cls, documents: Iterable[tuple[str, Mapping[str, Any]]]) -> PolicySet:
        defaults: dict[str, Any] = {}
        domains: dict[str, dict[str, Any]] = {}
        for where, document in documents:
            unknown = set(document) - {"defaults", "domains", "$comment"}
            if unknown:
                raise PolicyError(
                    f"{where}: unknown top-level key(s) {sorted(unknown)}; valid: defaults, domains"
                )
            cls._merge_layer(defaults, document.get("defaults", {}), f"{where}: defaults")
            for host, overrides in document.get("domains", {}).items():
                target = domains.setdefault(host.lower(), {})
                cls._merge_layer(target, overrides, f"{where}: domains[{host!r}]")
        return cls(defaults, domains)

    @staticmethod
    def _merge_layer(target: dict[str, Any], overrides: Mapping[str, Any], where: str) -> None:
        if not isinstance(overrides, Mapping):
            raise PolicyError(f"{where}: must be an object of policy keys")
        _check_keys(overrides, where)
        for key, value in overrides.items():
            if key in target and _is_looser(key, target[key], value):
                raise PolicyError(
                    f"{where}: {key}={value!r} is looser than the earlier {target[key]!r}; "
                    "a later policy file may only make limits stricter"
                )
            target[key] = value

    def hosts(self) -> list[str]:
        """Every host, domain and wildcard key that has its own entry."""
        return sorted(self._domains)

    def for_host(self, host: str) -> DomainPolicy:
        """The resolved policy of ``host``: defaults -> parent domain -> wildcards -> exact."""
        host = host.lower().rstrip(".")
        if host in self._cache:
            return self._cache[host]
        merged = dict(self._defaults)
        layers: list[str] = []
        parent = registrable_domain(host)
        if parent and parent != host:
            layers.append(parent)
        labels = host.split(".")
        layers += [f"*.{'.'.join(labels[i:])}" for i in range(len(labels) - 1, 0, -1)]
        layers.append(host)
        for key in layers:
            merged.update(self._domains.get(key, {}))
        try:
            policy = DomainPolicy(**merged)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise PolicyError(f"policy for {host!r}: {where}: {first['msg']}") from None
        self._cache[host] = policy
        return policy
