"""Build the fetch stack (policy, gates, engines, router) from the settings.

Embedded mode gates in-process; a fleet shares gates through Redis (``RI_GATES_URL``, or the
broker when it is Redis), so every worker on every machine respects one host's limits. Paid
engines get their keys and API URLs from settings (never from policy files); without a key they
stay registered and the router skips them with the reason logged.

Example:
    >>> stack = build_fetch_stack(load_settings())           # doctest: +SKIP
    >>> result = await stack.router.fetch(url, engines=("api",))   # doctest: +SKIP
    >>> await stack.aclose()                                 # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rareindex_connectors import (
    ApiEngine,
    CostEntry,
    EngineName,
    FirecrawlEngine,
    HostGates,
    MemoryGateBackend,
    PolicySet,
    RedisGateBackend,
    Router,
    SafeResolver,
    ScrapflyEngine,
)

from .settings import Settings

__all__ = ["FetchStack", "build_fetch_stack", "load_policies"]


@dataclass(slots=True)
class FetchStack:
    """The pieces of one process's fetch layer; close it when done."""

    policies: PolicySet
    gates: HostGates
    router: Router

    async def aclose(self) -> None:
        for engine in self.router.engines.values():
            await engine.aclose()
        backend = self.gates.backend
        if isinstance(backend, RedisGateBackend):
            await backend.aclose()


def load_policies(settings: Settings) -> PolicySet:
    """``domains.json`` + ``domains.d/`` under the connectors directory, then the override."""
    return PolicySet.load(settings.connectors_dir, override=settings.policy_override)


def build_fetch_stack(
    settings: Settings,
    *,
    policies: PolicySet | None = None,
    resolver: SafeResolver | None = None,
    on_cost: Callable[[CostEntry], None] | None = None,
) -> FetchStack:
    """Everything a crawl needs to fetch politely, configured for this mode."""
    policies = policies or load_policies(settings)
    gates_url = settings.gates_url_or_default()
    backend = RedisGateBackend.from_url(gates_url) if gates_url else MemoryGateBackend()
    gates = HostGates(backend)
    resolver = resolver or SafeResolver(static=settings.connect_to)

    def secret(value: object) -> str | None:
        return value.get_secret_value() if value is not None else None  # type: ignore[attr-defined]

    engines = {
        "api": ApiEngine(policies=policies, gates=gates, resolver=resolver),
        "firecrawl": FirecrawlEngine(
            api_key=secret(settings.firecrawl_api_key),
            api_url=settings.firecrawl_api_url,
            policies=policies,
            gates=gates,
            resolver=resolver,
        ),
        "scrapfly": ScrapflyEngine(
            api_key=secret(settings.scrapfly_api_key),
            api_url=settings.scrapfly_api_url,
            policies=policies,
            gates=gates,
            resolver=resolver,
        ),
    }
    budgets: dict[EngineName, float] = {}
    if settings.firecrawl_credit_budget is not None:
        budgets["firecrawl"] = settings.firecrawl_credit_budget
    if settings.scrapfly_credit_budget is not None:
        budgets["scrapfly"] = settings.scrapfly_credit_budget
    router = Router(engines, policies, credit_budget=budgets, on_cost=on_cost)  # type: ignore[arg-type]
    return FetchStack(policies=policies, gates=gates, router=router)
