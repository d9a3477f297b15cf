"""The config file of a store connector: what a connector author writes, and nothing else.

``connectors/shopify/<slug>.toml``::

    source = "Demo Cards"
    base_url = "https://cards.example"
    currency = "USD"
    categories = ["tcg_card", "sports_card"]
    refresh_class = "ACTIVE"

``base_url`` may carry a market or locale sub-folder (Shopify Markets: ``https://cards.example/en-eu``;
a WordPress in a sub-directory: ``https://example.com/shop``): every request of the connector
(feed pages, collections, product pages and lookups) keeps it.

The slug is the file name. Unknown keys are refused, with a guess for a misspelt one; every other
error states the field's rule in words with an example (:data:`RULES`), never a bare pattern.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from rareindex_connectors import Capability, ConnectorMeta, RefreshClass
from rareindex_connectors.records import Category, EngineName, currency_minor_unit

__all__ = ["RULES", "StoreConfig"]


def _choices(kind: Any) -> str:
    return ", ".join(get_args(kind))


RULES: dict[str, str] = {
    "id": 'the connector id, equal to the file name or left out, e.g. id = "demo-cards" '
    "in demo-cards.toml",
    "source": 'the shop\'s name as reports show it, not empty, e.g. source = "Demo Cards"',
    "base_url": "the store's address: http:// or https://, a host name, and optionally a market "
    "or locale sub-folder, without a query, a fragment or a feed path, e.g. "
    'base_url = "https://cards.example" or base_url = "https://cards.example/en-eu"',
    "currency": 'an ISO-4217 code of three letters, e.g. currency = "USD"',
    "categories": f"a non-empty list of {_choices(Category)}, e.g. "
    'categories = ["tcg_card", "sports_card"]',
    "geography": 'a list of markets the shop serves, e.g. geography = ["US", "CA"]',
    "refresh_class": f'one of {_choices(RefreshClass)}, e.g. refresh_class = "ACTIVE"',
    "engines": f"a non-empty list of {_choices(EngineName)} in the order to try them, e.g. "
    'engines = ["api"]',
    "collections": "a list of Shopify collection handles or WooCommerce category slugs, e.g. "
    'collections = ["pokemon", "graded"]',
    "page_size": "a whole number of products a page, 0 for the platform's maximum (Shopify 250, "
    "WooCommerce 100), e.g. page_size = 100",
    "max_pages": "a whole number of pages, at least 1, per collection and run, e.g. "
    "max_pages = 200",
    "variations": "true or false, e.g. variations = false",
}
"""Each config key's rule in words, with an example: appended to every error about the key."""

_SEGMENT = re.compile(r"^[A-Za-z0-9._~-]+$")
_FEED_PATHS = ("products.json", "collections", "products", "wp-json", "product")


class StoreConfig(BaseModel):
    """A Shopify or WooCommerce store, as a config-only connector declares it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = Field(default=None, description="defaults to the file name; must match it")
    source: str = Field(min_length=1, description="the shop's name, shown in reports")
    base_url: str = Field(description="the store's origin, and its market sub-folder if any")
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

    @model_validator(mode="wrap")
    @classmethod
    def _explain(cls, data: Any, handler: ModelWrapValidatorHandler[StoreConfig]) -> StoreConfig:
        try:
            return handler(data)
        except ValidationError as exc:
            raise _explained(exc) from None

    @field_validator("base_url")
    @classmethod
    def _store_address(cls, value: str) -> str:
        text = value.strip()
        parts = urlsplit(text)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http:// or https:// address")
        if "@" in parts.netloc or any(c.isspace() for c in text):
            raise ValueError(f"{value!r} carries a user name or spaces")
        if parts.query or parts.fragment or text.endswith(("?", "#")):
            raise ValueError(f"{value!r} has a query or a fragment")
        segments = [s for s in parts.path.split("/") if s]
        if not all(_SEGMENT.match(s) for s in segments):
            raise ValueError(f"{value!r} has a path that is not a plain sub-folder")
        feed = next((s for s in segments if s.lower() in _FEED_PATHS), None)
        if feed is not None:
            raise ValueError(
                f"{value!r} points into the feed ({feed!r}); give the store's address and the "
                "connector adds the feed's path"
            )
        return f"{parts.scheme}://{parts.netloc}" + "".join(f"/{s}" for s in segments)

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
            raise ValueError(
                f"id {self.id!r} must equal the file name {slug!r}: leave it out, or write "
                f'id = "{slug}"'
            )
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
        """Where every request starts: the scheme and host, and the market sub-folder if any
        (``https://cards.example/en-eu``), without a trailing slash."""
        return self.base_url.rstrip("/")

    @property
    def default_category(self) -> Category | None:
        """The category of products whose own type and tags say nothing (one declared: it)."""
        return self.categories[0] if len(self.categories) == 1 else None


def _escape(text: str) -> str:
    import re

    return "^" + re.escape(text)


def _explained(exc: ValidationError) -> ValidationError:
    """``exc`` with each message followed by its key's rule and an example (pydantic's own
    messages say what was wrong, and some, such as a pattern mismatch, say nothing more)."""
    details: list[InitErrorDetails] = []
    for error in exc.errors(include_url=False):
        key = str(error["loc"][0]) if error["loc"] else ""
        rule = RULES.get(key)
        text = f"{error['msg']}; {key} is {rule}" if rule else error["msg"]
        details.append(
            {
                "type": PydanticCustomError(error["type"], "{text}", {"text": text}),
                "loc": error["loc"],
                "input": error.get("input"),
            }
        )
    return ValidationError.from_exception_data(exc.title, details)


def from_mapping(data: Any) -> StoreConfig:
    """Validate a parsed TOML/JSON mapping."""
    return StoreConfig.model_validate(data)
