"""Per-host gates: concurrency, minimum interval, budgets and a circuit breaker, enforced before
a request leaves the process; in-process (embedded) or shared through Redis (fleet)."""

from .gates import GateBackend, HostGates, Permit
from .memory import MemoryGateBackend
from .redis import RedisGateBackend
from .state import GateLimits, HostState, Outcome

__all__ = [
    "GateBackend",
    "GateLimits",
    "HostGates",
    "HostState",
    "MemoryGateBackend",
    "Outcome",
    "Permit",
    "RedisGateBackend",
]
