"""Every JSON shape the admin API answers with, as pydantic models: the OpenAPI schema is built
from these, so ``/openapi.json`` documents each field.

Money and credits are decimal **strings** (``"12.50"``), never floats; times are ISO-8601 UTC.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from rareindex_connectors import CrawlMode

from ..certs.extract import GRADERS

__all__ = [
    "Breaker",
    "BudgetLeft",
    "CheckResult",
    "ConnectorCost",
    "ConnectorView",
    "ConnectorsResponse",
    "CoverageResponse",
    "CoverageRow",
    "DeadLetterView",
    "DeadLettersResponse",
    "ErrorBody",
    "HealthView",
    "HostGateView",
    "Liveness",
    "LookupRequest",
    "Readiness",
    "RequeueResponse",
    "RunView",
]

Breaker = Literal["closed", "half_open", "open"]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class ErrorBody(_Out):
    """Every error: a short machine-readable code and one human sentence."""

    error: str = Field(examples=["unsafe_url"], description="stable code, snake_case")
    detail: str = Field(examples=["http://10.0.0.5/ resolves to a private address"])


class RunView(_Out):
    """A connector's most recent run (queued, running or finished)."""

    id: str
    mode: CrawlMode
    status: str = Field(description="queued, running, succeeded, failed or cancelled")
    outcome: str | None = Field(description="complete, max_pages, time_boxed, failed…")
    failure_reason: str | None = Field(description="closed vocabulary: blocked, transient…")
    queued_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    pages: int
    records: int
    dupes: int


class HealthView(_Out):
    """The latest ``connector_health`` snapshot (written by the health worker)."""

    status: Literal["UP", "DEGRADED", "BROKEN", "DISABLED", "MAINTENANCE"]
    checked_at: datetime
    success_rate: float | None
    records_per_run: float | None
    blocked_rate: float | None
    breaker_state: str | None
    schema_drift: bool
    freshness_seconds: int | None
    details: dict[str, Any] | None = Field(description="the reasons behind the status")


class BudgetLeft(_Out):
    """Requests a host may still receive, from the gate state and the host's policy.

    ``None``: the policy sets no such budget."""

    per_minute: int | None
    per_day: int | None
    budget_per_minute: int | None
    budget_per_day: int | None


class HostGateView(_Out):
    """A host's circuit breaker and budgets, as the (shared) host gates see them now."""

    host: str
    breaker: Breaker
    failures: int = Field(description="consecutive failures counted by the breaker")
    reopens_at: datetime | None = Field(description="when an open breaker allows a trial")
    budget: BudgetLeft


class ConnectorCost(_Out):
    """Paid-engine credits since the 1st of the month (UTC), exact."""

    month: str = Field(examples=["2026-12"])
    credits: Decimal
    by_engine: dict[str, Decimal]


class ConnectorView(_Out):
    id: str
    source_id: str
    source_name: str
    status: Literal["active", "paused", "maintenance", "disabled"]
    refresh_class: Literal["HOT", "ACTIVE", "NORMAL", "ARCHIVE"]
    engines: list[str]
    categories: list[str]
    last_run: RunView | None
    health: HealthView | None = Field(description="None until the health worker ran")
    hosts: list[HostGateView]
    cost_this_month: ConnectorCost


class ConnectorsResponse(_Out):
    generated_at: datetime
    gates: Literal["shared", "process", "unavailable"] = Field(
        description="shared: read from Redis, as every worker sees them; process: this API "
        "process's own gates (embedded mode), which crawls in other processes do not touch; "
        "unavailable: the shared gates could not be read (see gates_error), so no connector "
        "lists its hosts"
    )
    gates_error: str | None = Field(
        default=None, description="why the gates could not be read (a Redis outage)"
    )
    connectors: list[ConnectorView]


class CoverageRow(_Out):
    """One category of one source. ``category`` null: observations not resolved to an asset."""

    category: str | None
    source_id: str
    source_name: str
    assets: int = Field(description="distinct assets observed (sales, listings, lots, prices)")
    variants: int = Field(description="distinct graded/raw variants observed")
    sales_30d: int = Field(description="sales dated within the window")
    newest_sale_at: datetime | None
    newest_observation_at: datetime | None = Field(description="newest price observation")
    newest_raw_fetch_at: datetime | None = Field(description="newest raw capture of the source")
    connectors_up: int = Field(description="the source's connectors whose health is UP/DEGRADED")
    connectors_down: int = Field(description="… BROKEN, DISABLED or MAINTENANCE")
    connectors_unchecked: int = Field(description="… without a health snapshot yet")


class FxMissing(_Out):
    """Sales of one currency left unpriced, and why (``fx_missing_reason`` of the views)."""

    currency: str
    reason: Literal["no_ecb_rate", "no_rate_on_date"]
    sales: int


class FxCoverageOut(_Out):
    """How the ECB rates cover the sales. ``stale``: the newest rate is more than
    ``stale_days`` (``RI_FX_STALE_DAYS``) behind the newest sale: load a newer ECB file."""

    stale: bool
    stale_days: int
    newest_rate_date: date | None
    newest_sale_date: date | None
    lag_days: int | None = Field(description="days from the newest rate to the newest sale")
    converted_sales: int = Field(description="sales priced in USD, CAD, EUR, GBP and JPY")
    stale_sales: int = Field(description="… of them at a rate older than stale_days")
    missing: list[FxMissing] = Field(description="sales that convert to null, by currency")


class CoverageResponse(_Out):
    generated_at: datetime
    window_days: int
    rows: list[CoverageRow]
    fx: FxCoverageOut


class DeadLetterView(_Out):
    id: str = Field(description="the dramatiq message id")
    queue: str
    actor: str
    args: list[Any]
    keyword_args: dict[str, Any] = Field(serialization_alias="kwargs")
    retries: int
    error: str
    failed_at: datetime
    requeued_at: datetime | None


class DeadLettersResponse(_Out):
    dead_letters: list[DeadLetterView]


class RequeueResponse(_Out):
    id: str
    queue: str
    actor: str
    requeued: bool = True


def any_case(word: str) -> str:
    """``"psa"`` -> ``"[Pp][Ss][Aa]"``: JSON Schema patterns have no flags."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


GRADER_PATTERN = "(?:" + "|".join(map(any_case, (*GRADERS, "BECKETT"))) + ")"
"""A grader's token (``BECKETT`` is BGS), in any case."""
CERT_NUMBER_PATTERN = "#?[0-9]{7,10}(?:-[0-9]{3})?"
"""7-10 ASCII digits, optionally ``-NNN``, after an optional ``#``."""
_LABEL = f"{any_case('cert')}(?:{any_case('ification')})?"
_LABEL += f"(?: *(?:{any_case('no')}\\.?|{any_case('number')}))?"
TARGET_PATTERN = f"^(?:{GRADER_PATTERN}[ :#]+)?(?:{_LABEL}[ :#]*)?{CERT_NUMBER_PATTERN}$"
URL_PATTERN = r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$"
"""What the lookup reads as a URL (a scheme, ``://``, no blanks); the SSRF check then refuses any
scheme but http(s) and any private address."""
"""What ``rareindex.certs.lookup`` reads as a cert number, spaces and separators kept simple so
every string the pattern matches is one it accepts: ``PSA 12345678``, ``cert# 4321000-001``. The
lookup route refuses any other target (422 ``bad_input``), so the document says exactly what the
server takes."""

_ONE_OF: list[JsonValue] = [
    {"required": [given], "properties": {given: {"type": "string"}, other: {"type": "null"}}}
    for given, other in (("url", "target"), ("target", "url"))
]
"""The one-of rule of :class:`LookupRequest` in its JSON Schema: one key a string, the other
absent or null (``_one_of`` enforces the same)."""


class LookupRequest(BaseModel):
    """A listing URL or a certificate number: ``{"url": …}`` or ``{"target": …}``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"oneOf": _ONE_OF})

    url: str | None = Field(
        default=None,
        max_length=2048,
        json_schema_extra={"pattern": URL_PATTERN},  # the route checks it: 422 bad_input
        examples=["https://shop.example/p/1"],
        description="an http(s) listing URL; refused (422 unsafe_url, no_connector) when the "
        "SSRF policy refuses it or no connector reads it",
    )
    target: str | None = Field(
        default=None,
        max_length=2048,
        json_schema_extra={"pattern": TARGET_PATTERN},  # the route checks it: 422 bad_input
        examples=["PSA 12345678", "cert# 4321000-001"],
        description="a cert number (7-10 ASCII digits, optionally -NNN), optionally after a "
        "grader and a `cert`/`cert no.` label",
    )

    @model_validator(mode="after")
    def _one_of(self) -> LookupRequest:
        if (self.url is None) == (self.target is None):
            raise ValueError('send exactly one of "url" or "target"')
        return self

    @property
    def value(self) -> str:
        return self.url if self.url is not None else str(self.target)


class Liveness(_Out):
    status: Literal["ok"] = "ok"


class CheckResult(_Out):
    ok: bool
    elapsed_ms: int
    detail: str | None = None


class Readiness(_Out):
    status: Literal["ready", "not_ready"]
    checks: dict[str, CheckResult] = Field(
        description="database (SELECT 1), schema (at the code's migration head), and broker / "
        "gates (Redis PING, or a TCP connect for AMQP) when configured"
    )
