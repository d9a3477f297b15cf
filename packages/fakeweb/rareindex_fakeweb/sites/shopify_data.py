"""The Shopify store's catalogue (:mod:`.shopify` serves it), built from the world's shop copies.

Every shop copy becomes one product: graded slabs titled the way stores write grades
(``PSA 10 GEM MINT``, ``BGS 9.5 Gem Mint``), raw singles with a condition (``Raw NM``, ``LP``),
and about half the raw Pokémon singles as one product with a variant per condition. Sealed
product, supplies and price guides carry a ``barcode`` (UPC-A, EAN-13, JAN or ISBN-13, check
digits valid) on their variant. Most graded bodies print the cert (``Cert #: 12345678``); the
slabs shared with other sites always do. :func:`shop_data` is the ground truth for tests.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple

from ._web import decimal_text, esc, moment, site_rng, slugify, us_local_iso
from .catalog import upc_check_digit
from .world import Copy, World, world

__all__ = ["HOST", "ShopData", "build_shop", "shop_data"]

HOST = "cards-shop.fake.test"
CDN = "https://cdn.shopify.com/s/files/1/0612/3456/7890/files"
CONDITIONS = (("Near Mint", 1.0), ("Lightly Played", 0.75), ("Moderately Played", 0.55))
RAW_SUFFIX = {
    "NM": ("Raw NM", "Near Mint", "NM"),
    "LP": ("LP", "Raw LP", "Lightly Played"),
    "MP": ("MP", "Moderately Played"),
    "EX": ("EX", "Raw EX"),
}
# fmt: off
# Sealed product and supplies: (title, vendor, kind, barcode type, barcode prefix, price cents)
SEALED = (
    ("Pokémon TCG Scarlet & Violet 151 Booster Bundle", "Pokémon", "pokemon", "UPC", "820650",
     5499),
    ("Pokémon TCG Prismatic Evolutions Elite Trainer Box", "Pokémon", "pokemon", "UPC", "820650",
     8999),
    ("Pokémon Card Game Scarlet & Violet 151 Booster Box (Japanese)", "Pokémon", "pokemon", "JAN",
     "4521329", 15999),
    ("Pokémon Card Game Terastal Festival ex Booster Box (Japanese)", "Pokémon", "pokemon", "JAN",
     "4521329", 12999),
    ("Pokémon TCG Crown Zenith Elite Trainer Box (EU)", "Pokémon", "pokemon", "EAN", "50", 7499),
    ("2024 Topps Chrome Baseball Hobby Box", "Topps", "sports", "UPC", "887521", 34999),
    ("2024 Topps Series 1 Baseball Jumbo Box", "Topps", "sports", "UPC", "887521", 17999),
    ("2023-24 Panini Prizm Basketball Blaster Box", "Panini", "sports", "UPC", "613297", 7999),
    ("2024 Panini Prizm Football Hobby Box", "Panini", "sports", "UPC", "613297", 79999),
    ("Panini FIFA 365 2025 Sticker Box (EU)", "Panini", "sports", "EAN", "8018190", 4999),
    ("Ultra PRO 3x4 Toploaders (25 ct)", "Ultra PRO", "supplies", "UPC", "074427", 499),
    ("Ultra PRO Card Saver I Semi-Rigid Holders (200 ct)", "Ultra PRO", "supplies", "UPC",
     "074427", 2499),
    ("BCW Magnetic One-Touch Holder 35pt", "BCW", "supplies", "UPC", "733427", 399),
    ("KMC Perfect Size Inner Sleeves (100 ct)", "KMC", "supplies", "JAN", "4516019", 599),
    ("Beckett Baseball Card Price Guide #46", "Beckett", "books", "ISBN", "9781953801", 3499),
    ("The Overstreet Comic Book Price Guide Vol. 54", "Gemstone", "books", "ISBN", "9781603603",
     4495),
)
# fmt: on


@dataclass(frozen=True, slots=True)
class ShopData:
    """The store's catalogue: products in feed order, and the copy behind each single."""

    products: tuple[dict[str, Any], ...]
    copies: dict[str, Copy]
    """Handle -> the copy a single-card product sells (sealed product and supplies have none)."""
    collections: dict[str, tuple[int, ...]]
    """Collection handle -> indexes into :attr:`products`, in feed order."""
    by_handle: dict[str, dict[str, Any]]


@functools.lru_cache(maxsize=4)
def shop_data(seed: int) -> ShopData:
    """The store for ``seed`` (ground truth for tests)."""
    return build_shop(seed, world(seed))


def build_shop(seed: int, world_: World) -> ShopData:
    """Build the catalogue for ``seed`` from the world's shop copies (uncached)."""
    builder = _Builder(seed, {c.key for c in world_.shared})
    sealed = list(SEALED)
    every = max(1, len(world_.shop) // (len(sealed) + 1))
    for n, copy in enumerate(world_.shop, start=1):
        builder.single(copy)
        if n % every == 0 and sealed:
            builder.sealed(*sealed.pop(0))
    for spec in sealed:
        builder.sealed(*spec)
    groups: dict[str, list[int]] = {h: [] for h in ("all", "pokemon", "sports", "graded", "sealed")}
    for index, product in enumerate(builder.products):
        for handle in ("all", *builder.groups[product["handle"]]):
            groups[handle].append(index)
    return ShopData(
        products=tuple(builder.products),
        copies=builder.copies,
        collections={k: tuple(v) for k, v in groups.items()},
        by_handle={p["handle"]: p for p in builder.products},
    )


class _Variant(NamedTuple):
    title: str
    sku: str
    cents: int
    grams: int
    available: bool
    barcode: str | None = None


class _Builder:
    def __init__(self, seed: int, shared: set[str]) -> None:
        self.rng = site_rng(seed, HOST)
        self.shared = shared
        self.products: list[dict[str, Any]] = []
        self.copies: dict[str, Copy] = {}
        self.groups: dict[str, tuple[str, ...]] = {}
        self.ids = {"product": 7_981_230_000_000, "variant": 43_912_870_000_000}
        self.ids["image"] = 30_451_200_000_000

    def next_id(self, kind: str) -> int:
        self.ids[kind] += self.rng.randrange(3, 4000)
        return self.ids[kind]

    def single(self, copy: Copy) -> None:
        rng, item, grade = self.rng, copy.item, copy.grade
        cents = _retail(copy.value_cents(rng, 0.1) * 1.15)
        kind = "pokemon" if item.category == "tcg" else "sports"
        tags = {"Pokemon" if kind == "pokemon" else "Sports", str(item.year), item.set_name}
        tags |= {t for t in (item.sport, "Rookie" if item.rookie else None) if t}
        if grade.graded:
            tags |= {"Graded", f"{grade.grader}", f"{grade.grader} {grade.grade}"}
            facts = f"<li>Grading company: {grade.grader}</li><li>Grade: {esc(grade.label)}</li>"
            if rng.random() < 0.8 or copy.key in self.shared:
                facts += f"<li>Cert #: {grade.cert}</li>"
            body = (
                f"<p>{esc(item.title)}</p><ul>{facts}</ul><p>You get the exact slab pictured.</p>"
            )
            sku = rng.choice((f"{grade.grader}{grade.cert}", f"{grade.grader}-{grade.cert}", ""))
            variants = [_Variant("Default Title", sku, cents, 113, rng.random() < 0.9)]
            title = _graded_title(rng, copy)
            product = self.add(
                title,
                body,
                item.brand,
                "Graded Card",
                tags,
                variants,
                images=2,
                groups=(kind, "graded"),
            )
        else:
            tags.add("Raw")
            body = f"<p>Raw, ungraded. Condition: {esc(grade.label)}. Ships in a toploader.</p>"
            split = (
                item.category == "tcg" and grade.label in dict(CONDITIONS) and rng.random() < 0.5
            )
            if split:  # one product, a variant per condition; this copy is the matching one
                language = "" if item.language == "English" else f" ({item.language})"
                title = (
                    f"{item.subject} - {item.number} - {item.set_name} - {item.variant}{language}"
                )
                variants = [
                    _Variant(
                        name,
                        f"{item.key.upper()}-{_initials(name)}",
                        _retail(cents * factor),
                        2,
                        name == grade.label or rng.random() < 0.5,
                    )
                    for name, factor in CONDITIONS
                ]
            else:
                title = (
                    f"{item.title}{rng.choice((' ', ' - '))}{rng.choice(RAW_SUFFIX[grade.grade])}"
                )
                sku = f"{item.key.upper()}-{grade.grade}"
                variants = [_Variant("Default Title", sku, cents, 2, rng.random() < 0.9)]
            product = self.add(
                title,
                body,
                item.brand,
                "Single Card",
                tags,
                variants,
                images=1,
                groups=(kind,),
                option="Condition" if split else "Title",
            )
        self.copies[product["handle"]] = copy

    def sealed(
        self, title: str, vendor: str, kind: str, code: str, prefix: str, cents: int
    ) -> None:
        rng = self.rng
        sku = f"{slugify(vendor)[:3].upper()}-{rng.randrange(10**5):05d}"
        barcode = _barcode(rng, code, prefix)
        variant = _Variant("Default Title", sku, cents, rng.randrange(150, 2000), True, barcode)
        sealed = kind in ("pokemon", "sports")
        product_type = "Sealed Product" if sealed else kind.title()
        groups = (kind, "sealed") if sealed else ("sealed",)
        tags = {"Sealed", vendor, kind.title()}
        body = f"<p>Factory sealed. {esc(title)}.</p>"
        self.add(title, body, vendor, product_type, tags, [variant], images=1, groups=groups)

    def add(
        self,
        title: str,
        body: str,
        vendor: str,
        product_type: str,
        tags: set[str],
        variants: list[_Variant],
        *,
        images: int,
        groups: tuple[str, ...],
        option: str = "Title",
    ) -> dict[str, Any]:
        rng = self.rng
        created = moment(rng, days=420)
        published = created + timedelta(seconds=rng.randrange(0, 3600))
        updated = created + timedelta(seconds=rng.randrange(3600, 30 * 86400))
        created_at, published_at, updated_at = (
            us_local_iso(t, -5) for t in (created, published, updated)
        )
        base = slugify(title)
        handle, n = base, 1
        while handle in self.groups:
            handle, n = f"{base}-{n}", n + 1
        self.groups[handle] = groups
        product_id = self.next_id("product")
        version = int(updated.timestamp())
        product: dict[str, Any] = {
            "id": product_id,
            "title": title,
            "handle": handle,
            "body_html": body,
            "published_at": published_at,
            "created_at": created_at,
            "updated_at": updated_at,
            "vendor": vendor,
            "product_type": product_type,
            "tags": sorted(tags),
            "variants": [
                self.variant(product_id, position, v, created_at, updated_at)
                for position, v in enumerate(variants, start=1)
            ],
            "images": [
                {
                    "id": self.next_id("image"),
                    "created_at": created_at,
                    "position": position,
                    "updated_at": updated_at,
                    "product_id": product_id,
                    "variant_ids": [],
                    "src": f"{CDN}/{handle}-{side}.jpg?v={version}",
                    "width": 1200,
                    "height": 1600 if product_type.endswith("Card") else 1200,
                }
                for position, side in enumerate(("front", "back")[:images], start=1)
            ],
            "options": [{"name": option, "position": 1, "values": [v.title for v in variants]}],
        }
        self.products.append(product)
        return product

    def variant(
        self, product_id: int, position: int, v: _Variant, created_at: str, updated_at: str
    ) -> dict[str, Any]:
        on_sale = self.rng.random() < 0.1
        fields: dict[str, Any] = {
            "id": self.next_id("variant"),
            "title": v.title,
            "option1": v.title,
            "option2": None,
            "option3": None,
            "sku": v.sku,
            "requires_shipping": True,
            "taxable": True,
            "featured_image": None,
            "available": v.available,
            "price": decimal_text(v.cents),
            "grams": v.grams,
            "compare_at_price": decimal_text(_retail(v.cents * 1.25)) if on_sale else None,
            "position": position,
            "product_id": product_id,
            "created_at": created_at,
            "updated_at": updated_at,
        }
        if v.barcode is not None:
            fields["barcode"] = v.barcode
        return fields


def _graded_title(rng: random.Random, copy: Copy) -> str:
    grade = copy.grade
    phrase = grade.phrase
    if grade.grader == "BGS" and rng.random() < 0.4:
        phrase = f"BGS {grade.grade} {grade.label.title()}"
    if grade.label_type == "Black Label":
        phrase += " Black Label"
    return f"{copy.item.title} {phrase}"


def _retail(cents: float) -> int:
    """A shelf price: ``x.99`` under $100, whole dollars or ``x9.99`` above."""
    whole = int(cents) // 100
    if whole < 100:
        return whole * 100 + 99
    return (whole // 10 * 10 + 9) * 100 + 99 if whole % 2 else whole * 100


def _barcode(rng: random.Random, kind: str, prefix: str) -> str:
    length = 11 if kind == "UPC" else 12  # UPC-A has 12 digits; EAN-13, JAN, ISBN-13 have 13
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix)))
    return body + upc_check_digit(body)


def _initials(words: str) -> str:
    return "".join(word[0] for word in words.split())
