"""The config file of a store connector: what a connector author writes, and nothing else.

``connectors/shopify/<slug>.toml``::

    source = "Demo Cards"
    base_url = "https://cards.example"
    currency = "USD"
    categories = ["tcg_card", "sports_card"]
    refresh_class = "ACTIVE"

The slug is the file name. Unknown keys are refused, with a guess for a misspelt one; a bad value
names its field and the valid values.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._meta import Capability, ConnectorMeta, RefreshClass
from .._money import currency_minor_unit
from .._normalized import Category
from .._raw import EngineName

__all__ = ["StoreConfig"]


class StoreConfig(BaseModel):
    """A Shopify or WooCommerce store, as a config-only connector declares it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = Field(default=None, description="defaults to the file name; must match it")
    source: str = Field(min_length=1, description="the shop's name, shown in reports")
    base_url: str = Field(pattern=r"^https?://[^/\s?#]+/?$", description="the store's origin")
    currency: str = Field(description="ISO-4217; Shopify feeds do not state it")
    categories: tuple[Category, ...] = Field(min_length=1)
    geography: tuple[str, ...] = ("global",)
    refresh_class: RefreshClass = "ACTIVE"
    engines: tuple[EngineName, ...] = ("api",)
    collections: tuple[str, ...] = Field(
        default=(), description="Shopify collection handles, or WooCommerce category slugs"
    )
    page_size: int = Field(default=0, ge=0, description="0: the platform's maximum")
    max_pages: int = Field(default=200, ge=1, description="safety net per collection and run")
    variations: bool = Field(
        default=True,
        description="WooCommerce: fetch each variation of a variable product by id (a request "
        "each); false: a variable product gives no listing. A Shopify product carries its variants",
    )

    @field_validator("currency")
    @classmethod
    def _iso_currency(cls, value: str) -> str:
        try:
            currency_minor_unit(value)
        except KeyError:
            raise ValueError(
                f"{value!r} is not an ISO-4217 currency code (USD, EUR, JPY…)"
            ) from None
        return value.upper()

    def meta(self, slug: str, *, platform: Literal["shopify", "woocommerce"]) -> ConnectorMeta:
        """The connector's declared identity."""
        if self.id is not None and self.id != slug:
            raise ValueError(f"id {self.id!r} must equal the file name {slug!r} (or be left out)")
        origin = self.base_url.rstrip("/")
        product_path = "/products/" if platform == "shopify" else "/product/"
        capabilities: tuple[Capability, ...] = ("listing", "url_lookup")
        return ConnectorMeta(
            id=slug,
            source=self.source,
            engines=self.engines,
            categories=self.categories,
            geography=self.geography,
            capabilities=capabilities,
            refresh_class=self.refresh_class,
            url_patterns=(_escape(origin) + product_path,),
        )

    @property
    def origin(self) -> str:
        return self.base_url.rstrip("/")

    @property
    def default_category(self) -> Category | None:
        """The category of products whose own type and tags say nothing (one declared: it)."""
        return self.categories[0] if len(self.categories) == 1 else None


def _escape(text: str) -> str:
    import re

    return "^" + re.escape(text)


def from_mapping(data: Any) -> StoreConfig:
    """Validate a parsed TOML/JSON mapping."""
    return StoreConfig.model_validate(data)
