"""What the paid engines (Firecrawl, Scrapfly) share: their key, their target's policy and
gate, and the validation of their ``engine_options``. A subclass says how to call its vendor.

The target still passes its host's SSRF check and gate: a vendor fetching a page for us is still
us fetching it, so the host's politeness and budgets apply.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from .._gates import HostGates
from .._policy import DomainPolicy, PolicySet
from .._raw import EngineName
from .._ssrf import SafeResolver
from ..errors import PermanentFetchError, PolicyError
from .base import FetchRequest

__all__ = ["PaidEngine"]


class PaidEngine:
    """Base of the paid engines: ``name``, ``key_setting``, ``option_keys`` and
    ``default_api_url`` are the subclass's; ``fetch`` too."""

    name: EngineName
    paid = True
    key_setting: ClassVar[str]
    option_keys: ClassVar[frozenset[str]]
    default_api_url: ClassVar[str]

    def __init__(
        self,
        *,
        api_key: str | None,
        policies: PolicySet,
        gates: HostGates,
        resolver: SafeResolver | None = None,
        api_url: str | None = None,
        timeout_s: float | None = None,
    ):
        self.policies = policies
        self.gates = gates
        self.resolver = resolver or SafeResolver()
        self.api_url = api_url or self.default_api_url
        self.timeout_s = timeout_s
        self._api_key = api_key or None
        self._clients: dict[float, Any] = {}  # client timeout -> the vendor SDK's client

    def unavailable_reason(self) -> str | None:
        return None if self._api_key else f"{self.key_setting} is not set"

    def _target(self, request: FetchRequest) -> tuple[str, str, DomainPolicy]:
        """The URL to scrape, its host and the host's policy; refuses without a key."""
        url = str(httpx.URL(request.url, params=request.params)) if request.params else request.url
        host = (urlsplit(url).hostname or "").lower()
        if not self._api_key:
            raise PermanentFetchError(
                f"{self.key_setting} is not set", url=url, host=host, engine=self.name
            )
        return url, host, self.policies.for_host(host)

    def _engine_options(self, policy: DomainPolicy, host: str) -> dict[str, Any]:
        """The host policy's ``engine_options`` for this engine, unknown keys refused."""
        extra = dict(policy.engine_options.get(self.name, {}))
        unknown = sorted(set(extra) - self.option_keys)
        if unknown:
            raise PolicyError(
                f"policy for {host!r}: unknown engine_options.{self.name} key(s) {unknown}; "
                f"valid: {', '.join(sorted(self.option_keys))}"
            )
        return extra
