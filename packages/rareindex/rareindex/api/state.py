"""What every route needs, built once per app: settings, database, host gates, policies, and the
optional ``requeue`` hook. Routes get it through :func:`api_state` (a FastAPI dependency)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request

from rareindex_connectors.runtime import HostGates, PolicySet

from ..fetching import FetchStack, build_fetch_stack
from ..registry import Registry, load_registry
from ..settings import Settings
from ..storage import Engine
from ..storage.dead_letters import DeadLetter

__all__ = ["ApiState", "Requeue", "api_state"]

Requeue = Callable[[DeadLetter], None]
"""Send a dead letter to its queue again (the broker is the workers' business: injected)."""


@dataclass(slots=True)
class ApiState:
    settings: Settings
    engine: Engine
    gates: HostGates
    gates_shared: bool
    owns_gates: bool
    """True when the app built the gates itself (and so closes their Redis client)."""
    policies: PolicySet
    requeue: Requeue | None
    schema_head: str | None
    running: bool = False
    """True inside the server's lifespan: long-lived clients (the lookup stack) may be kept."""
    stack: FetchStack | None = None
    registry: Registry | None = None

    def lookup_tools(self) -> tuple[Registry | None, FetchStack | None]:
        """The connector registry and fetch stack lookups share, built on first use; outside
        the server's lifespan (nobody would close the stack) None, and each lookup builds its
        own."""
        if not self.running:
            return None, None
        if self.registry is None:
            self.registry = load_registry(self.settings.connectors_dir)
        if self.stack is None:
            self.stack = build_fetch_stack(self.settings, policies=self.policies)
        return self.registry, self.stack

    async def aclose(self) -> None:
        if self.stack is not None:
            await self.stack.aclose()
            self.stack = None
        close = getattr(self.gates.backend, "aclose", None)
        if self.owns_gates and close is not None:
            await close()


def api_state(request: Request) -> ApiState:
    state = request.app.state.rareindex
    assert isinstance(state, ApiState)
    return state
