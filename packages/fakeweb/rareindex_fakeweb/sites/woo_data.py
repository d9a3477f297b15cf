"""The two WooCommerce stores' catalogues (:mod:`.woo` serves them), shaped like Store API products.

``comics-woo.fake.test`` sells comics in GBP (``currency_minor_unit`` 2); ``coins-woo.fake.test``
sells US coins in Kuwaiti dinars, whose minor unit is **3** (``"125500"`` = 125.500 KWD). Prices are
strings in minor units (docs/domain.md#store-feeds). Raw comics are sometimes ``variable`` products
with a ``Condition`` attribute: the list carries only their variations' ids, and each variation (its
own price per condition) is served by id; graded ones carry grader, grade and cert as product
attributes.

URLs inside products use the store's configured address (``http://<host>``); the handler
rewrites it to the origin the client used.
"""

from __future__ import annotations

import functools
import html
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple

from ._web import esc, grouped, moment, site_rng, slugify
from .world import Copy, World, world

__all__ = [
    "COINS_HOST",
    "COMICS_HOST",
    "GBP",
    "KWD",
    "Currency",
    "WooData",
    "build_woo",
    "woo_data",
]

COMICS_HOST = "comics-woo.fake.test"
COINS_HOST = "coins-woo.fake.test"
COMIC_CONDITIONS = (("VF/NM 9.0", 1.0), ("VF 8.0", 0.7), ("FN 6.0", 0.45))


class Currency(NamedTuple):
    code: str
    symbol: str
    minor_unit: int
    decimal_separator: str
    thousand_separator: str
    prefix: str
    suffix: str
    per_usd: float
    symbol_html: str


GBP = Currency("GBP", "£", 2, ".", ",", "£", "", 0.79, "&pound;")
KWD = Currency("KWD", "د.ك", 3, ".", ",", "", " د.ك", 0.307, "&#x62f;.&#x643;")


@dataclass(frozen=True, slots=True)
class WooData:
    """One store: products in the API's default order (newest first)."""

    host: str
    currency: Currency
    products: tuple[dict[str, Any], ...]
    copies: dict[int, Copy]
    """Product (or variation) id -> the copy it sells."""
    by_id: dict[int, dict[str, Any]]
    """Products and variations by id (``/products/<id>`` serves both)."""
    variations: dict[int, dict[str, Any]]
    """Variation id -> the variation, as ``/products/<id>`` returns it."""
    by_slug: dict[str, dict[str, Any]]

    @property
    def external_ids(self) -> set[str]:
        """The external ids a full crawl of the store stores: every product's id, and
        ``"<parent>:<id>"`` for every variation of a variable product."""
        products = {str(p["id"]) for p in self.products}
        return products | {f"{v['parent']}:{v['id']}" for v in self.variations.values()}


@functools.lru_cache(maxsize=8)
def woo_data(seed: int, host: str) -> WooData:
    """The store at ``host`` for ``seed`` (ground truth for tests)."""
    return build_woo(seed, host, world(seed))


def build_woo(seed: int, host: str, world_: World) -> WooData:
    """Build one store's catalogue (uncached)."""
    builder = _Builder(site_rng(seed, host), host)
    copies = world_.comics if host == COMICS_HOST else world_.coins
    for copy in copies:
        builder.add(copy)
    products = tuple(builder.products)
    return WooData(
        host=host,
        currency=builder.currency,
        products=products,
        copies=builder.copies,
        by_id={p["id"]: p for p in products} | builder.variations,
        variations=builder.variations,
        by_slug={p["slug"]: p for p in products},
    )


def minor_units(usd_cents: int, currency: Currency, rng: random.Random) -> int:
    """A shelf price in the store's minor units, converted from USD and rounded like a shop."""
    amount = usd_cents / 100 * currency.per_usd
    if currency.minor_unit == 3:
        return max(500, round(amount * 2) * 500)  # to the half dinar: 125.500
    return max(99, int(amount) * 100 + rng.choice((0, 50, 99)))


def price_html(amount: int, currency: Currency) -> str:
    """WooCommerce's ``wc_price`` markup for an amount in minor units."""
    text = _amount_text(amount, currency)
    symbol = f'<span class="woocommerce-Price-currencySymbol">{currency.symbol_html}</span>'
    body = f"{symbol}{text}" if currency.prefix else f"{text}&nbsp;{symbol}"
    return f'<span class="woocommerce-Price-amount amount"><bdi>{body}</bdi></span>'


def _amount_text(amount: int, currency: Currency) -> str:
    if currency.minor_unit == 2:
        return grouped(amount, currency.thousand_separator, currency.decimal_separator)
    units, rest = divmod(amount, 10**currency.minor_unit)
    return f"{units:,}".replace(",", currency.thousand_separator) + f".{rest:03d}"


class _Builder:
    def __init__(self, rng: random.Random, host: str) -> None:
        self.rng = rng
        self.host = host
        self.base = f"http://{host}"
        self.currency = GBP if host == COMICS_HOST else KWD
        self.products: list[dict[str, Any]] = []
        self.copies: dict[int, Copy] = {}
        self.variations: dict[int, dict[str, Any]] = {}
        self.slugs: set[str] = set()
        self.next_id = 1180
        self.terms: dict[str, int] = {}
        self.when = moment(rng, days=30)

    def new_id(self) -> int:
        self.next_id += self.rng.randrange(1, 8)
        return self.next_id

    def term(self, taxonomy: str, name: str) -> dict[str, Any]:
        slug = slugify(name)
        term_id = self.terms.setdefault(f"{taxonomy}/{slug}", 15 + len(self.terms) * 3)
        path = {"cat": "product-category", "tag": "product-tag", "brand": "brand"}[taxonomy]
        return {"id": term_id, "name": name, "slug": slug, "link": f"{self.base}/{path}/{slug}/"}

    def add(self, copy: Copy) -> None:
        rng, item, grade, cur = self.rng, copy.item, copy.grade, self.currency
        comic = item.category == "comic"
        if grade.graded:
            name = f"{item.title} {grade.phrase}"
            if comic:
                name += f" {grade.page_quality}"
        elif comic:
            name = item.title
        else:
            name = f"{item.title} - {grade.label}"
        variable = comic and not grade.graded and rng.random() < 0.4
        if comic and not grade.graded and not variable:
            name += f" - {grade.label}"
        product_id = self.new_id()
        slug = base = slugify(name)
        n = 2
        while slug in self.slugs:
            slug, n = f"{base}-{n}", n + 1
        self.slugs.add(slug)
        regular = minor_units(copy.value_cents(rng, 0.12), cur, rng)
        on_sale = rng.random() < 0.12
        price = regular * 85 // 100 if on_sale else regular
        attributes = self._attributes(copy)
        variations: list[dict[str, Any]] = []
        price_range = None
        amounts: list[int] = []  # a variable product's price per condition
        if variable:
            amounts = [int(price * f) for _, f in COMIC_CONDITIONS]
            price_range = {"min_amount": str(min(amounts)), "max_amount": str(max(amounts))}
            price = regular = min(amounts)
            variations = [
                {"id": self.new_id(), "attributes": [{"name": "Condition", "value": slugify(c)}]}
                for c, _ in COMIC_CONDITIONS
            ]
            attributes.append(
                {
                    "id": 3,
                    "name": "Condition",
                    "taxonomy": "pa_condition",
                    "has_variations": True,
                    "terms": [
                        {"id": 40 + i, "name": c, "slug": slugify(c), "default": False}
                        for i, (c, _) in enumerate(COMIC_CONDITIONS)
                    ],
                }
            )
        in_stock = rng.random() < 0.92
        if grade.graded:
            sku = f"{grade.grader}-{grade.cert}"
        elif item.upc and rng.random() < 0.7:
            sku = item.upc
        else:
            sku = f"{item.key.upper()}-{copy.key[2:]}"
        self.when -= timedelta(seconds=rng.randrange(600, 86400))
        uploads = f"{self.base}/wp-content/uploads/{self.when:%Y/%m}"
        if comic:
            categories = [self.term("cat", "Graded Comics" if grade.graded else "Raw Comics")]
            categories.append(self.term("cat", item.brand))
            brands = [self.term("brand", item.brand)]
        else:
            categories = [self.term("cat", f"{item.set_name}s"), self.term("cat", "US Coins")]
            brands = []
        tags = [self.term("tag", t) for t in (item.subject if comic and item.subject else "",) if t]
        description = f"<p>{esc(item.title)}.</p>" + (
            f"<p>Graded {esc(grade.phrase)}, certificate {grade.cert}.</p>" if grade.graded else ""
        )
        product = {
            "id": product_id,
            "name": name,
            "slug": slug,
            "parent": 0,
            "type": "variable" if variable else "simple",
            "variation": "",
            "permalink": f"{self.base}/product/{slug}/",
            "sku": sku,
            "short_description": f"<p>{esc(grade.phrase if grade.graded else grade.label)}</p>",
            "description": description,
            "on_sale": on_sale,
            "prices": {
                "price": str(price),
                "regular_price": str(regular),
                "sale_price": str(price),
                "price_range": price_range,
                "currency_code": cur.code,
                "currency_symbol": cur.symbol,
                "currency_minor_unit": cur.minor_unit,
                "currency_decimal_separator": cur.decimal_separator,
                "currency_thousand_separator": cur.thousand_separator,
                "currency_prefix": cur.prefix,
                "currency_suffix": cur.suffix,
            },
            "price_html": self._price_html(price, regular, on_sale, price_range),
            "average_rating": "0",
            "review_count": 0,
            "images": [
                {
                    "id": product_id + 1000,
                    "src": f"{uploads}/{slug}.jpg",
                    "thumbnail": f"{uploads}/{slug}-300x300.jpg",
                    "srcset": f"{uploads}/{slug}.jpg 1024w, {uploads}/{slug}-300x300.jpg 300w",
                    "sizes": "(max-width: 1024px) 100vw, 1024px",
                    "name": f"{slug}.jpg",
                    "alt": "",
                }
            ],
            "categories": categories,
            "tags": tags,
            "brands": brands,
            "attributes": attributes,
            "variations": variations,
            "has_options": variable,
            "is_purchasable": True,
            "is_in_stock": in_stock,
            "is_on_backorder": False,
            "low_stock_remaining": 1 if in_stock and not variable and rng.random() < 0.2 else None,
            "stock_availability": {"text": "In stock", "class": "in-stock"}
            if in_stock
            else {"text": "Out of stock", "class": "out-of-stock"},
            "sold_individually": not variable,
            "add_to_cart": {
                "text": "Select options" if variable else "Add to basket",
                "description": f"Add &ldquo;{html.escape(name)}&rdquo; to your basket",
                "url": f"{self.base}/product/{slug}/" if variable else f"?add-to-cart={product_id}",
                "single_text": "Add to basket",
                "minimum": 1,
                "maximum": 9999 if variable else 1,
                "multiple_of": 1,
            },
            "extensions": {},
        }
        self.products.append(product)
        self.copies[product_id] = copy
        if variable:  # no draw from rng: the rest of the store stays as it was
            for child, (condition, _), amount in zip(
                variations, COMIC_CONDITIONS, amounts, strict=True
            ):
                self.variations[child["id"]] = self._variation(product, child, condition, amount)
                self.copies[child["id"]] = copy

    def _variation(
        self, parent: dict[str, Any], child: dict[str, Any], condition: str, amount: int
    ) -> dict[str, Any]:
        """One variation as the Store API returns it by id: the parent's name, SKU, images and
        categories (WooCommerce falls back to them), its own price and ``variation`` text."""
        cur, variation_id = self.currency, child["id"]
        condition_slug = child["attributes"][0]["value"]
        return {
            "id": variation_id,
            "name": parent["name"],
            "slug": f"{parent['slug']}-{condition_slug}",
            "parent": parent["id"],
            "type": "variation",
            "variation": f"Condition: {condition}",
            "permalink": f"{parent['permalink']}?attribute_pa_condition={condition_slug}",
            "sku": parent["sku"],
            "short_description": "",
            "description": parent["description"],
            "on_sale": False,
            "prices": parent["prices"]
            | {
                "price": str(amount),
                "regular_price": str(amount),
                "sale_price": str(amount),
                "price_range": None,
            },
            "price_html": price_html(amount, cur),
            "average_rating": "0",
            "review_count": 0,
            "images": parent["images"],
            "categories": parent["categories"],
            "tags": parent["tags"],
            "brands": parent["brands"],
            "attributes": [],
            "variations": [],
            "has_options": False,
            "is_purchasable": True,
            "is_in_stock": parent["is_in_stock"],
            "is_on_backorder": False,
            "low_stock_remaining": None,
            "stock_availability": parent["stock_availability"],
            "sold_individually": True,
            "add_to_cart": {
                "text": "Add to basket",
                "description": f"Add &ldquo;{html.escape(parent['name'])}&rdquo; to your basket",
                "url": f"?add-to-cart={variation_id}",
                "single_text": "Add to basket",
                "minimum": 1,
                "maximum": 1,
                "multiple_of": 1,
            },
            "extensions": {},
        }

    def _attributes(self, copy: Copy) -> list[dict[str, Any]]:
        grade, item = copy.grade, copy.item
        values: list[tuple[str, str]] = []
        if grade.graded:
            values += [("Grading Company", grade.grader or ""), ("Grade", grade.grade)]
            values.append(("Certification Number", grade.cert or ""))
            if grade.page_quality:
                values.append(("Page Quality", grade.page_quality))
        if item.pcgs_number:
            values.append(("PCGS Number", str(item.pcgs_number)))
        if item.category == "comic":
            values.append(("Publisher", item.brand))
        return [
            {
                "id": 0,
                "name": name,
                "taxonomy": None,
                "has_variations": False,
                "terms": [{"id": 0, "name": value, "slug": slugify(value), "default": False}],
            }
            for name, value in values
        ]

    def _price_html(
        self, price: int, regular: int, on_sale: bool, price_range: dict[str, str] | None
    ) -> str:
        cur = self.currency
        if price_range:
            low, high = (int(price_range[k]) for k in ("min_amount", "max_amount"))
            return f"{price_html(low, cur)} &ndash; {price_html(high, cur)}"
        if on_sale:
            return (
                f'<del aria-hidden="true">{price_html(regular, cur)}</del> '
                f"<ins>{price_html(price, cur)}</ins>"
            )
        return price_html(price, cur)
