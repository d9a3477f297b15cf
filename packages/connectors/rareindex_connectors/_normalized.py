"""Normalized records: the canonical shapes a connector's pure ``normalize()`` returns.

``NormalizedRecord`` is a discriminated union on ``kind``:
``sale · listing · auction_lot · price_observation · catalog_item · population_report · news_item``.
Money is :class:`Money` (exact ``Decimal`` + ISO-4217), datetimes must be timezone-aware, unknown
fields are refused. Validate untrusted dicts with :func:`parse_normalized`, which raises
:class:`ParseError` with a closed-vocabulary reason and the offending field named.

Example:
    >>> rec = parse_normalized({
    ...     "kind": "sale", "external_id": "ebay-1", "title": "2018 Prizm Luka Doncic #280 PSA 10",
    ...     "price": {"amount": "1250.00", "currency": "USD"}, "sale_type": "auction",
    ...     "sold_at": "2026-11-01T18:00:00Z"})
    >>> rec.kind, rec.price.amount
    ('sale', Decimal('1250.00'))
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast, get_args

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ._money import ExactDecimal, Money
from .errors import ParseError, ParseReason

__all__ = [
    "AuctionLot",
    "CatalogItem",
    "Category",
    "Grading",
    "Identifiers",
    "Listing",
    "NewsItem",
    "NormalizedRecord",
    "PopulationReport",
    "PriceObservation",
    "RecordKind",
    "Sale",
    "parse_normalized",
]

RecordKind = Literal[
    "sale",
    "listing",
    "auction_lot",
    "price_observation",
    "catalog_item",
    "population_report",
    "news_item",
]
Category = Literal[
    "sports_card", "tcg_card", "comic", "coin", "toy", "sneaker", "memorabilia", "other"
]
Grader = Literal["PSA", "BGS", "CGC", "SGC", "PCGS", "NGC", "OTHER"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Identifiers(_Model):
    """Product identifiers a source states outright; the strongest signal for entity resolution."""

    upc: str | None = Field(default=None, pattern=r"^[0-9]{12}([0-9]{5})?$")
    ean: str | None = Field(default=None, pattern=r"^[0-9]{13}$")
    jan: str | None = Field(default=None, pattern=r"^4[59][0-9]{11}$")
    isbn: str | None = Field(default=None, pattern=r"^([0-9]{9}[0-9X]|[0-9]{13})$")
    sku: str | None = None
    pcgs_number: str | None = None
    set_code: str | None = None
    collector_number: str | None = None
    cert_number: str | None = None


class Grading(_Model):
    """A grade from a grading company. Part of the *variant*, never of the asset key."""

    grader: Grader
    grade: str = Field(min_length=1, max_length=16, description="'10', '9.5', 'MS65', 'AUTH'")
    qualifier: str | None = Field(default=None, description="PSA qualifier: OC ST PD OF MK MC")
    label_type: str | None = None
    autograph_grade: str | None = None


class _Item(_Model):
    """Fields every observation of an item shares."""

    external_id: str = Field(min_length=1, max_length=512)
    title: str = Field(min_length=1, max_length=2000)
    url: str | None = None
    category: Category | None = None
    identifiers: Identifiers = Identifiers()
    grading: Grading | None = None
    condition: str | None = None
    image_urls: tuple[str, ...] = ()


def _same_currency(*amounts: Money | None) -> None:
    currencies = {m.currency for m in amounts if m is not None}
    if len(currencies) > 1:
        raise PydanticCustomError(
            "currency_mismatch",
            "amounts of one record must share a currency, got {currencies}",
            {"currencies": ", ".join(sorted(currencies))},
        )


class Sale(_Item):
    """One consummated sale of one item (docs/domain.md#observations-and-prices)."""

    kind: Literal["sale"] = "sale"
    price: Money
    shipping: Money | None = None
    buyer_premium: Money | None = None
    sale_type: Literal["auction", "fixed", "best_offer", "auction_house"]
    price_basis: Literal["hammer", "realized_incl_bp", "offer_accepted", "sold_price"] = (
        "sold_price"
    )
    price_visibility: Literal["exact", "hidden"] = "exact"
    sold_at: AwareDatetime
    is_lot: bool = False
    flags: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_currency(self) -> Sale:
        _same_currency(self.price, self.shipping, self.buyer_premium)
        return self


class Listing(_Item):
    """An ask: a store listing or an active buy-it-now. A separate series from sales."""

    kind: Literal["listing"] = "listing"
    price: Money
    compare_at_price: Money | None = None
    available: bool = True
    quantity: int | None = Field(default=None, ge=0)
    listed_at: AwareDatetime | None = None
    seller: str | None = None
    variant_title: str | None = None

    @model_validator(mode="after")
    def _one_currency(self) -> Listing:
        _same_currency(self.price, self.compare_at_price)
        return self


class AuctionLot(_Item):
    """A lot of an auction-house sale. Hammer, premium and price realised are kept apart."""

    kind: Literal["auction_lot"] = "auction_lot"
    auction_id: str = Field(min_length=1)
    auction_title: str | None = None
    lot_number: str = Field(min_length=1)
    status: Literal["upcoming", "open", "sold", "passed", "withdrawn"]
    hammer_price: Money | None = None
    buyer_premium_rate: ExactDecimal | None = Field(default=None, ge=0, le=1)
    price_realised: Money | None = None
    estimate_low: Money | None = None
    estimate_high: Money | None = None
    closes_at: AwareDatetime | None = None

    @model_validator(mode="after")
    def _consistent(self) -> AuctionLot:
        _same_currency(
            self.hammer_price, self.price_realised, self.estimate_low, self.estimate_high
        )
        if self.status == "sold" and self.hammer_price is None and self.price_realised is None:
            raise PydanticCustomError("missing", "a sold lot needs hammer_price or price_realised")
        return self


class PriceObservation(_Item):
    """A price from a price guide or index (not a sale): value of a variant on a date."""

    kind: Literal["price_observation"] = "price_observation"
    price: Money
    basis: Literal["guide", "average", "last_sold", "median"] = "guide"
    observed_at: AwareDatetime


class CatalogItem(_Model):
    """A reference item from a catalog or checklist: identity only, no price."""

    kind: Literal["catalog_item"] = "catalog_item"
    external_id: str = Field(min_length=1, max_length=512)
    title: str = Field(min_length=1, max_length=2000)
    category: Category
    year: int | None = Field(default=None, ge=1800, le=2100)
    brand: str | None = None
    set_name: str | None = None
    number: str | None = None
    subject: str | None = None
    parallel: str | None = Field(
        default=None, description="parallel or finish (Refractor, Holo), cover or coin variety"
    )
    edition: str | None = Field(default=None, description="1st Edition, Shadowless, Unlimited")
    language: str | None = None
    print_run: int | None = Field(default=None, ge=1, description="serial numbering: /99 -> 99")
    mint_mark: str | None = Field(default=None, max_length=4, description="coins: S, D, CC, O")
    denomination: str | None = Field(default=None, description="coins: 1C, 5C, $1")
    printed_total: int | None = Field(
        default=None,
        ge=1,
        description="cards: the set's printed total, the T of a card numbered N/T (4/102 -> 102)",
    )
    rarity: str | None = Field(default=None, description="cards: Rare Holo, Common, Mythic")
    series: str | None = Field(
        default=None, description="the family of sets this set belongs to (Sword & Shield)"
    )
    identifiers: Identifiers = Identifiers()
    url: str | None = None


class PopulationReport(_Model):
    """A grader's population for one spec: how many copies got each grade, as of a date."""

    kind: Literal["population_report"] = "population_report"
    external_id: str = Field(min_length=1, description="the grader's spec id")
    grader: Grader
    title: str = Field(min_length=1)
    category: Category | None = None
    counts: dict[str, int] = Field(description="grade -> count, e.g. {'10': 1520, '9': 4410}")
    total: int = Field(ge=0)
    as_of: AwareDatetime
    url: str | None = None

    @model_validator(mode="after")
    def _counts_fit(self) -> PopulationReport:
        if any(v < 0 for v in self.counts.values()):
            raise PydanticCustomError("invalid_value", "population counts are never negative")
        if sum(self.counts.values()) > self.total:
            raise PydanticCustomError("invalid_value", "counts add up to more than total")
        return self


class NewsItem(_Model):
    """A news article or post from a feed."""

    kind: Literal["news_item"] = "news_item"
    external_id: str = Field(min_length=1, max_length=512)
    title: str = Field(min_length=1)
    url: str
    published_at: AwareDatetime
    summary: str | None = None
    author: str | None = None
    categories: tuple[str, ...] = ()


NormalizedRecord = Annotated[
    Sale | Listing | AuctionLot | PriceObservation | CatalogItem | PopulationReport | NewsItem,
    Field(discriminator="kind"),
]
"""Any canonical record; ``kind`` says which."""

_ADAPTER: TypeAdapter[NormalizedRecord] = TypeAdapter(NormalizedRecord)
_RECORD_TYPES: frozenset[type] = frozenset(
    (Sale, Listing, AuctionLot, PriceObservation, CatalogItem, PopulationReport, NewsItem)
)

# pydantic error type -> our closed vocabulary. Custom errors raised above use our names directly.
_REASONS: dict[str, ParseReason] = {
    "missing": ParseReason.MISSING_FIELD,
    "union_tag_not_found": ParseReason.MISSING_FIELD,
    "union_tag_invalid": ParseReason.UNKNOWN_KIND,
    "extra_forbidden": ParseReason.UNEXPECTED_FIELD,
    "timezone_aware": ParseReason.NAIVE_DATETIME,
    "model_type": ParseReason.UNEXPECTED_SHAPE,
    "model_attributes_type": ParseReason.UNEXPECTED_SHAPE,
    "dict_type": ParseReason.UNEXPECTED_SHAPE,
}
_REASONS.update({reason.value: reason for reason in ParseReason})


def _reason_for(error_type: str) -> ParseReason:
    if error_type in _REASONS:
        return _REASONS[error_type]
    if error_type.endswith("_type") or error_type.endswith("_parsing"):
        return ParseReason.INVALID_TYPE
    return ParseReason.INVALID_VALUE


def _field_path(loc: tuple[int | str, ...]) -> str:
    # The discriminated union puts the tag ("sale") first in the location; it is not a field.
    parts = [str(p) for p in loc]
    if parts and parts[0] in _KINDS:
        parts = parts[1:]
    return ".".join(parts)


_KINDS: frozenset[str] = frozenset(get_args(RecordKind))


def parse_normalized(data: Any) -> NormalizedRecord:
    """Validate one record (a dict, or a model) into its ``NormalizedRecord`` kind.

    A record model is returned as it is: its constructor validated it, and it is frozen, so a
    record is validated once on its way to the index (``model_construct`` and
    ``model_copy(update=…)`` skip validation: a connector never uses them). Any other model is
    dumped and validated.

    Raises:
        ParseError: with the first problem's reason and dotted field path.
    """
    if type(data) in _RECORD_TYPES:
        return cast(NormalizedRecord, data)
    if isinstance(data, BaseModel):
        data = data.model_dump()
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = _field_path(first["loc"]) or (
            "kind" if first["type"].startswith("union_tag") else ""
        )
        snippet = repr(first.get("input"))
        raise ParseError(
            _reason_for(first["type"]), first["msg"], field=field or None, snippet=snippet
        ) from None
