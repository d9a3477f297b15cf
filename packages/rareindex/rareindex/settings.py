"""Settings from ``RI_*`` environment variables (pydantic-settings).

The mode follows from configuration, with no flag:

* **embedded** (default): ``RI_DATABASE_URL`` and ``RI_BROKER_URL`` unset. SQLite file
  ``./rareindex.db``, blobs under ``./data/``, no broker: the pipeline runs in-process.
* **fleet**: ``RI_BROKER_URL=redis://…`` (or ``amqp://…``) with
  ``RI_DATABASE_URL=postgresql+psycopg://…``: dramatiq workers on any number of machines.

Example:
    >>> s = Settings(_env_file=None, database_url=None, broker_url=None)
    >>> s.mode, s.database_url_or_default().startswith("sqlite:///")
    ('embedded', True)

API keys are :class:`pydantic.SecretStr`: ``repr`` and logs show ``**********``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .errors import ConfigError

__all__ = ["REPO_ROOT", "Settings", "load_settings"]

REPO_ROOT = Path(__file__).resolve().parents[3]
"""The checkout this package runs from (``packages/rareindex/rareindex`` is three levels down)."""

_DB_SCHEMES = {
    "postgresql+psycopg": "postgresql+psycopg",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
    "sqlite": "sqlite",
}
_BROKER_SCHEMES = ("redis", "rediss", "amqp", "amqps")


class Settings(BaseSettings):
    """All of RareIndex's configuration. Read once at process entry, passed down."""

    model_config = SettingsConfigDict(env_prefix="RI_", extra="ignore", frozen=True)

    database_url: str | None = Field(default=None, description="unset: SQLite at data_dir")
    broker_url: str | None = Field(default=None, description="unset: no broker (embedded)")
    data_dir: Path = Path(".")
    connectors_dir: Path = REPO_ROOT / "connectors"
    migrations_dir: Path = REPO_ROOT / "migrations"
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    log_format: Literal["auto", "json", "console"] = "auto"
    max_run_minutes: int = Field(default=40, ge=1, le=24 * 60)
    fx_stale_days: int = Field(
        default=7, ge=0, description="an FX rate this many days older than a sale is stale"
    )
    run_lease_seconds: float = Field(
        default=300, gt=0, description="a crawl run's lease, renewed at every commit"
    )
    firecrawl_api_key: SecretStr | None = None
    scrapfly_api_key: SecretStr | None = None
    firecrawl_api_url: str = "https://api.firecrawl.dev"
    scrapfly_api_url: str = "https://api.scrapfly.io"
    firecrawl_credit_budget: float | None = Field(default=None, ge=0, description="per run")
    scrapfly_credit_budget: float | None = Field(default=None, ge=0, description="per run")
    gates_url: str | None = Field(
        default=None, description="Redis for shared host gates; default: RI_BROKER_URL if redis"
    )
    policy_override: Path | None = Field(default=None, description="stricter local policy file")
    private_hosts: list[str] = Field(
        default_factory=list,
        description="hosts allowed to resolve to private or loopback addresses, besides the "
        'private_hosts of domains.json (JSON in RI_PRIVATE_HOSTS, e.g. ["nas.lan.test"])',
    )
    broker_heartbeat_seconds: float = Field(
        default=30,
        ge=1,
        description="a worker silent this long is dead: its prefetched messages go to others",
    )
    api_max_body_bytes: int = Field(
        default=64 * 1024,
        ge=1024,
        description="the largest request body the admin API reads (413 above it)",
    )
    events_retention_days: int = Field(
        default=30, ge=1, description="rareindex events prune deletes events older than this"
    )
    events_heartbeat_seconds: float = Field(
        default=15, gt=0, description="an idle event stream sends a keep-alive comment this often"
    )
    events_token_check_seconds: float = Field(
        default=60,
        gt=0,
        le=60,
        description="an event stream re-checks its token this often (a revoked one ends it)",
    )
    events_poll_seconds: float = Field(
        default=0.5,
        gt=0,
        description="how often event streams look for new events without LISTEN/NOTIFY "
        "(SQLite); on PostgreSQL NOTIFY wakes them and this is a fallback of 10x",
    )
    connect_to: dict[str, str] = Field(
        default_factory=dict,
        description='host -> "ip[:port]" ahead of DNS, e.g. {"cards-shop.fake.test": '
        '"127.0.0.1:8765"} (JSON in RI_CONNECT_TO); addresses are still SSRF-checked',
    )

    @field_validator("database_url")
    @classmethod
    def _database_scheme(cls, value: str | None) -> str | None:
        if not value:
            return None
        scheme, sep, rest = value.partition("://")
        if not sep or scheme not in _DB_SCHEMES:
            raise ValueError(
                f"scheme {scheme!r} is not supported; use postgresql+psycopg://user@host/db "
                "(postgresql:// and postgres:// are read as that) or sqlite:///path/to/file.db"
            )
        return f"{_DB_SCHEMES[scheme]}://{rest}"

    @field_validator("broker_url")
    @classmethod
    def _broker_scheme(cls, value: str | None) -> str | None:
        if not value:
            return None
        scheme = value.partition("://")[0]
        if scheme not in _BROKER_SCHEMES:
            raise ValueError(
                f"scheme {scheme!r} is not supported; use redis://host:6379/0 or amqp://host"
            )
        return value

    @model_validator(mode="after")
    def _fleet_needs_postgres(self) -> Settings:
        if self.broker_url and not (self.database_url or "").startswith("postgresql"):
            raise ValueError(
                "RI_BROKER_URL is set but the database is SQLite; workers on several machines "
                "need RI_DATABASE_URL=postgresql+psycopg://…"
            )
        return self

    @property
    def mode(self) -> Literal["embedded", "fleet"]:
        """``fleet`` when a broker is configured, else ``embedded``."""
        return "fleet" if self.broker_url else "embedded"

    def database_url_or_default(self) -> str:
        """The configured database, or the embedded SQLite file under ``data_dir``."""
        return self.database_url or f"sqlite:///{(self.data_dir / 'rareindex.db').resolve()}"

    def gates_url_or_default(self) -> str | None:
        """Where host gates are shared: ``RI_GATES_URL``, else a Redis broker, else in-process."""
        if self.gates_url:
            return self.gates_url
        if self.broker_url and self.broker_url.startswith(("redis://", "rediss://")):
            return self.broker_url
        return None

    @property
    def blob_dir(self) -> Path:
        """Where content-addressed snapshots live (filesystem blob store)."""
        return self.data_dir / "data" / "blobs"

    def secret_values(self) -> tuple[str, ...]:
        """The raw secrets, so the log pipeline can scrub them wherever they appear."""
        secrets = (self.firecrawl_api_key, self.scrapfly_api_key)
        return tuple(s.get_secret_value() for s in secrets if s and s.get_secret_value())


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment; a bad value becomes one :class:`ConfigError` line."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        name = f"RI_{where.upper()}" if where else "settings"
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{name}: {message}") from None
