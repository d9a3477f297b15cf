"""What a connector declares about itself: :class:`ConnectorMeta`.

Example:
    >>> meta = ConnectorMeta(id="demo-cards", source="Demo Cards", engines=("api",),
    ...                      categories=("tcg_card",), capabilities=("listing",),
    ...                      refresh_class="ACTIVE", url_patterns=(r"^https://cards\\.example/",))
    >>> meta.matches_url("https://cards.example/products/x")
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._normalized import Category, RecordKind
from ._raw import EngineName

__all__ = ["Capability", "ConnectorMeta", "RefreshClass", "refresh_interval"]

RefreshClass = Literal["HOT", "ACTIVE", "NORMAL", "ARCHIVE"]
Capability = (
    RecordKind
    | Literal["cert_lookup", "price_guide", "seller_data", "historical_backfill", "url_lookup"]
)

_REFRESH: dict[str, timedelta] = {
    "HOT": timedelta(minutes=5),
    "ACTIVE": timedelta(minutes=60),
    "NORMAL": timedelta(hours=24),
    "ARCHIVE": timedelta(days=7),
}


def refresh_interval(refresh_class: RefreshClass) -> timedelta:
    """The longest a connector of this class may go between incremental crawls."""
    return _REFRESH[refresh_class]


class ConnectorMeta(BaseModel):
    """A connector's identity and declared abilities. Frozen; unknown keys are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{1,62}$", description="the slug: file, key, policy"
    )
    source: str = Field(min_length=1, description="the website or company the data comes from")
    engines: tuple[EngineName, ...] = Field(min_length=1, description="priority order")
    categories: tuple[Category, ...] = Field(min_length=1)
    geography: tuple[str, ...] = ("global",)
    capabilities: tuple[Capability, ...] = Field(min_length=1)
    refresh_class: RefreshClass = "NORMAL"
    requires: tuple[str, ...] = Field(default=(), description="env vars that must be set to run")
    url_patterns: tuple[str, ...] = ()

    @field_validator("engines", "categories", "capabilities")
    @classmethod
    def _unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"duplicates in {list(value)}")
        return value

    @field_validator("requires")
    @classmethod
    def _env_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
                raise ValueError(f"{name!r} is not an environment variable name")
        return value

    @field_validator("url_patterns")
    @classmethod
    def _regexes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"url pattern {pattern!r} is not a regex: {exc}") from None
        return value

    def matches_url(self, url: str) -> bool:
        """True when one of ``url_patterns`` matches: this connector can ``lookup()`` the URL."""
        return any(re.search(p, url) for p in self.url_patterns)

    def missing_requires(self, env: Mapping[str, str]) -> list[str]:
        """The ``requires`` variables unset (or empty) in ``env``: none means it can run."""
        return [name for name in self.requires if not env.get(name)]
