"""A connector's health as its own ``health_check()`` reports it.

Example:
    >>> ConnectorHealth(status="UP", latency_ms=42).status
    'UP'
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue

__all__ = ["ConnectorHealth", "HealthStatus"]

HealthStatus = Literal["UP", "DEGRADED", "BROKEN", "DISABLED", "MAINTENANCE"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class ConnectorHealth(BaseModel):
    """One health observation. The health worker combines it with recent runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: HealthStatus
    checked_at: AwareDatetime = Field(default_factory=_utcnow)
    latency_ms: int | None = Field(default=None, ge=0)
    message: str | None = None
    details: dict[str, JsonValue] = Field(default_factory=dict)
