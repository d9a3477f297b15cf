"""Build the fetch stack (policy, gates, engines, router) from the settings.

Embedded mode shares gates between the processes of the machine through lock files under
``RI_DATA_DIR/data/gates`` (two ``rareindex crawl`` commands are as polite as one); a fleet shares
them through Redis (``RI_GATES_URL``, or the broker when it is Redis), so every worker on every
machine respects one host's limits, and ``rareindex worker`` refuses to start without either. Paid
engines get their keys and API URLs from settings (never from policy files); without a key they
stay registered and the router skips them with the reason logged.

Example:
    >>> stack = build_fetch_stack(load_settings())           # doctest: +SKIP
    >>> result = await stack.router.fetch(url, engines=("api",))   # doctest: +SKIP
    >>> await stack.aclose()                                 # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rareindex_connectors import ConnectorMeta
from rareindex_connectors.records import EngineName
from rareindex_connectors.runtime import (
    ApiEngine,
    CostEntry,
    FileGateBackend,
    FirecrawlEngine,
    GateBackend,
    HostGates,
    MemoryGateBackend,
    PolicySet,
    RedisGateBackend,
    Router,
    SafeResolver,
    ScrapflyEngine,
)

from .errors import ConfigError
from .settings import Settings

__all__ = [
    "FetchStack",
    "build_fetch_stack",
    "embedded_gates_dir",
    "load_policies",
    "require_runnable",
]


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
    """``domains.json`` + ``domains.d/`` under the connectors directory, then the override;
    ``RI_PRIVATE_HOSTS`` adds to the operator's private-network list."""
    return PolicySet.load(
        settings.connectors_dir,
        override=settings.policy_override,
        private_hosts=settings.private_hosts,
    )


def embedded_gates_dir(settings: Settings) -> Path:
    """Where embedded processes keep the host gates they share (beside the blobs)."""
    return settings.data_dir.resolve() / "data" / "gates"


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
    backend: GateBackend
    if gates_url:
        backend = RedisGateBackend.from_url(gates_url)
    elif settings.mode == "embedded":
        backend = FileGateBackend(embedded_gates_dir(settings))
    else:  # a fleet without RI_GATES_URL: `rareindex worker` refuses to start before this
        backend = MemoryGateBackend()
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


def require_runnable(
    meta: ConnectorMeta, settings: Settings, env: Mapping[str, str] | None = None
) -> None:
    """Refuse, with the variable to set, a connector that cannot fetch anything here: one whose
    ``requires`` are unset, or whose every engine is a paid one without its key.

    Commands that run one named connector (``crawl ID``, ``connectors check ID``) call this
    first, so a missing key is one ``error:`` line instead of a failed run.
    """
    env = os.environ if env is None else env
    missing = meta.missing_requires(env)
    if missing:
        raise ConfigError(
            f"connector {meta.id!r} needs {', '.join(missing)} (its meta.requires); "
            f"set {'them' if len(missing) > 1 else 'it'} in the environment and run again"
        )
    keys = {
        "firecrawl": ("RI_FIRECRAWL_API_KEY", settings.firecrawl_api_key),
        "scrapfly": ("RI_SCRAPFLY_API_KEY", settings.scrapfly_api_key),
    }
    unkeyed = [keys[e][0] for e in meta.engines if e in keys and not keys[e][1]]
    if unkeyed and len(unkeyed) == len(meta.engines):
        engines = " and ".join(meta.engines)
        raise ConfigError(
            f"connector {meta.id!r} fetches only with {engines}, and {' / '.join(unkeyed)} "
            f"{'is' if len(unkeyed) == 1 else 'are'} not set: export {unkeyed[0]}=<your key>, "
            'or add "api" to its engines'
        )
