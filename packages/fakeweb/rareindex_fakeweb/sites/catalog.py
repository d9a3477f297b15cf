"""The catalog: collectible identities (docs/domain.md#collectible-identity), generated from a seed.

An :class:`Item` is everything that names an asset *except* its grade: a sports card (year,
manufacturer, product, card number, player, parallel, print run, RC / Bowman 1st), a Pokémon card
(set, collector number ``4/102``, edition, finish, language), a comic (publisher, series and volume
year, issue, cover variant, UPC with its 5-digit add-on) or a US coin (date, mint mark, variety,
denomination, PCGS#). Graded and raw *copies* of items live in :mod:`.world`.

Example:
    >>> from rareindex_fakeweb.sites import catalog
    >>> cards = [i for i in catalog.items(7) if i.category == "sports"]
    >>> cards[0].title                                   # doctest: +SKIP
    '1933 Goudey Babe Ruth #53'
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from typing import Literal

from rareindex_connectors.records import CatalogItem, Identifiers

from . import names
from ._web import site_rng

__all__ = ["Category", "Item", "catalog_record", "items", "upc_check_digit", "world_catalog"]

Category = Literal["sports", "tcg", "comic", "coin"]


@dataclass(frozen=True, slots=True)
class Item:
    """One collectible identity. ``value_cents`` is a raw near-mint reference price in USD."""

    key: str
    category: Category
    year: int
    brand: str
    """Manufacturer (Topps, Panini), ``Pokémon``, publisher (Marvel) or ``U.S. Mint``."""
    set_name: str
    """Product (``Topps Chrome``), Pokémon set, comic series, or coin type."""
    number: str
    """Card number (``280``, ``BDC-EX``), collector number (``4/102``), issue; ``""`` for coins."""
    subject: str
    """Player, Pokémon, comic key note, or coin type."""
    variant: str = ""
    """Parallel, edition + finish, cover variant, or coin variety (``""``: base / none)."""
    value_cents: int = 100
    sport: str | None = None
    card_type: str = ""
    rookie: bool = False
    first_bowman: bool = False
    print_run: int | None = None
    language: str = "English"
    volume_year: int | None = None
    upc: str | None = None
    """Comics: the 12-digit UPC followed by the 5-digit add-on (issue, cover, printing)."""
    denomination: str | None = None
    mint_mark: str | None = None
    pcgs_number: int | None = None

    @property
    def title(self) -> str:
        """The canonical title, grade-free: what entity resolution should recover."""
        if self.category == "sports":
            parts = [str(self.year), self.set_name, self.subject, f"#{self.number}"]
            parts += [p for p in (self.card_type, self.variant) if p]
            if self.print_run:
                parts.append(f"/{self.print_run}")
            if self.rookie:
                parts.append("RC")
            if self.first_bowman:
                parts.append("1st Bowman")
            return " ".join(parts)
        if self.category == "tcg":
            lang = "" if self.language == "English" else f" {self.language}"
            variant = f" {self.variant}" if self.variant else ""
            return (
                f"{self.year} Pokémon{lang} {self.set_name} {self.subject} {self.number}{variant}"
            )
        if self.category == "comic":
            variant = f" {self.variant}" if self.variant else ""
            return f"{self.set_name} #{self.number} ({self.year}){variant}"
        date = f"{self.year}-{self.mint_mark}" if self.mint_mark else str(self.year)
        variety = f" {self.variant}" if self.variant else ""
        return f"{date} {self.set_name}{variety} {self.denomination}"


@functools.lru_cache(maxsize=4)
def items(seed: int) -> tuple[Item, ...]:
    """Every item of the world generated from ``seed``: sports, then TCG, comics, coins."""
    return build_items(seed)


def build_items(seed: int) -> tuple[Item, ...]:
    """Like :func:`items`, uncached: each call generates afresh (the determinism tests use it)."""
    rng = site_rng(seed, "catalog")
    built: list[Item] = []
    seen: set[tuple[object, ...]] = set()

    def add(item: Item) -> None:
        identity: tuple[object, ...] = (item.category, item.year, item.set_name, item.number)
        identity += (item.subject, item.variant, item.language, item.mint_mark, item.sport)
        if identity not in seen:
            seen.add(identity)
            built.append(item)

    for make in (_sports, _tcg, _comics, _coins):
        for item in make(rng):
            add(item)
    return tuple(built)


def _sports(rng: random.Random) -> list[Item]:
    out: list[Item] = []
    for card in names.KEY_CARDS:
        options = names.PARALLELS.get(card.set_name, ())
        chosen: list[names.Parallel] = [names.Parallel("", None, 1.0)]
        chosen += rng.sample(options, min(len(options), rng.randint(2, 5)))
        for parallel in chosen:
            out.append(
                Item(
                    key=f"sc{len(out) + 1:04d}",
                    category="sports",
                    year=card.year,
                    brand=card.brand,
                    set_name=card.set_name,
                    number=card.number,
                    subject=card.player,
                    variant=parallel.name,
                    value_cents=int(card.value * parallel.factor),
                    sport=card.sport,
                    card_type=card.card_type,
                    rookie=card.rookie,
                    first_bowman=card.first_bowman,
                    print_run=parallel.print_run,
                )
            )
    while len(out) < 380:
        set_name, brand, sport, size, first, last, prefix = rng.choice(names.FILLER_SETS)
        options = names.PARALLELS.get(set_name, ())
        extra = rng.choice(options) if options and rng.random() < 0.35 else None
        year = rng.randint(first, last)
        rookie = rng.random() < 0.2
        value = rng.randint(150, 2_500) * (3 if rookie else 1)
        out.append(
            Item(
                key=f"sc{len(out) + 1:04d}",
                category="sports",
                year=year,
                brand=brand,
                set_name=set_name,
                number=f"{prefix}{rng.randint(1, size)}",
                subject=rng.choice(names.PLAYERS[sport]),
                variant=extra.name if extra else "",
                value_cents=int(value * (extra.factor if extra else 1.0)),
                sport=sport,
                rookie=rookie,
                print_run=extra.print_run if extra else None,
            )
        )
    return out


def _tcg(rng: random.Random) -> list[Item]:
    out: list[Item] = []

    def add(
        set_name: str,
        year: int,
        number: str,
        name: str,
        variant: str,
        value: int,
        language: str = "English",
    ) -> None:
        out.append(
            Item(
                key=f"pk{len(out) + 1:04d}",
                category="tcg",
                year=year,
                brand="Pokémon",
                set_name=set_name,
                number=number,
                subject=name,
                variant=variant,
                value_cents=value,
                language=language,
            )
        )

    edition_factor = {"1st Edition": 8.0, "Shadowless": 3.0, "Unlimited": 1.0}
    for set_name, year, size, editions, base, cards in names.POKEMON_VINTAGE:
        for index, name, factor in cards:
            for edition in editions:
                value = int(base * factor * edition_factor[edition])
                add(set_name, year, f"{index}/{size}", name, f"{edition} Holo", value)
    for set_name, year, number, name, finish, value in names.POKEMON_MODERN:
        add(set_name, year, number, name, finish, value)
        if rng.random() < 0.4:
            add(set_name, year, number, name, finish, value // 2, language="Japanese")
    modern_sets = sorted({(s, y, n.split("/")[1]) for s, y, n, *_ in names.POKEMON_MODERN})
    while len(out) < 230:
        set_name, year, total = rng.choice(modern_sets)
        finish = rng.choice(("Holo", "Reverse Holo", "Full Art", "Illustration Rare"))
        drawn = rng.randint(1, 200)
        prefix = total.rstrip("0123456789")  # SV94, GG70: the number carries the same prefix
        shown = f"{drawn:03d}/{total}" if not prefix else f"{prefix}{drawn % 90 + 1}/{total}"
        name = rng.choice(names.POKEMON_NAMES)
        add(set_name, year, shown, name, finish, rng.randint(200, 6_000))
    return out


def upc_check_digit(digits: str) -> str:
    """The UPC-A / EAN-13 check digit for the first 11 (or 12) digits."""
    weights = (3, 1) if len(digits) % 2 == 1 else (1, 3)
    total = sum(int(d) * weights[i % 2] for i, d in enumerate(digits))
    return str((10 - total % 10) % 10)


def _upc(rng: random.Random, publisher: str, issue: str, cover: int, printing: int) -> str:
    prefix = names.UPC_PREFIX[publisher]
    body = prefix + f"{rng.randrange(10**5):05d}"
    addon = f"{int(issue) % 1000:03d}{cover}{printing}"
    return body + upc_check_digit(body) + addon


def _comics(rng: random.Random) -> list[Item]:
    out: list[Item] = []

    def add(
        publisher: str,
        series: str,
        volume: int,
        issue: str,
        year: int,
        subject: str,
        variant: str,
        value: int,
        upc: str | None,
    ) -> None:
        out.append(
            Item(
                key=f"cm{len(out) + 1:04d}",
                category="comic",
                year=year,
                brand=publisher,
                set_name=series,
                number=issue,
                subject=subject,
                variant=variant,
                value_cents=value,
                volume_year=volume,
                upc=upc,
            )
        )

    for publisher, series, volume, issue, year, note, value, variants in names.COMIC_KEYS:
        for index, variant in enumerate(variants, start=1):
            factor = 1.0 if index == 1 else rng.choice((0.6, 1.5, 3.0))
            printing = 2 if "2nd Printing" in variant else 1
            upc = _upc(rng, publisher, issue, index, printing) if year >= 2008 else None
            add(publisher, series, volume, issue, year, note, variant, int(value * factor), upc)
    run_state: dict[str, str] = {}
    while len(out) < 170:
        publisher, series, volume, first, last, first_year = rng.choice(names.COMIC_RUNS)
        number = rng.randint(first, last)
        year = first_year + (number - first) // 12
        modern = year >= 2008
        variant = rng.choice(("Cover A", "Cover A", "Cover B", "1:25 Variant")) if modern else ""
        cover = {"Cover A": 1, "Cover B": 2, "1:25 Variant": 3}.get(variant, 1)
        series_key = f"{series}/{volume}"
        run_state.setdefault(series_key, f"{rng.randrange(10**5):05d}")
        upc = None
        if modern:
            body = names.UPC_PREFIX[publisher] + run_state[series_key]
            upc = body + upc_check_digit(body) + f"{number % 1000:03d}{cover}1"
        value = rng.randint(300, 4_000) * (4 if variant == "1:25 Variant" else 1)
        add(publisher, series, volume, str(number), year, "", variant, value, upc)
    return out


def _coins(rng: random.Random) -> list[Item]:
    out: list[Item] = []
    next_pcgs = {name: spec[5] for name, spec in names.COIN_TYPES.items()}

    def add(type_name: str, year: int, mint: str, variety: str, value: int) -> None:
        denomination = names.COIN_TYPES[type_name][0]
        pcgs = next_pcgs[type_name]
        next_pcgs[type_name] += rng.choice((1, 2, 3))
        out.append(
            Item(
                key=f"cn{len(out) + 1:04d}",
                category="coin",
                year=year,
                brand="U.S. Mint",
                set_name=type_name,
                number="",
                subject=type_name,
                variant=variety,
                value_cents=value,
                denomination=denomination,
                mint_mark=mint or None,
                pcgs_number=pcgs,
            )
        )

    for type_name, year, mint, variety, value in names.KEY_COINS:
        add(type_name, year, mint, variety, value)
    while len(out) < 110:
        type_name = rng.choice(sorted(names.COIN_TYPES))
        _, first, last, mints, value, _, _ = names.COIN_TYPES[type_name]
        year = rng.randint(first, last)
        mint = rng.choice(mints)
        if mint == "CC" and not 1878 <= year <= 1893:
            mint = ""
        if any(
            i.set_name == type_name and i.year == year and (i.mint_mark or "") == mint for i in out
        ):
            continue
        add(type_name, year, mint, "", int(value * rng.uniform(0.7, 3.0)))
    return out


CATEGORY_OF: dict[Category, str] = {
    "sports": "sports_card",
    "tcg": "tcg_card",
    "comic": "comic",
    "coin": "coin",
}
_EDITIONS = ("1st Edition", "Shadowless", "Unlimited")


def catalog_record(item: Item) -> CatalogItem:
    """The item as a canonical ``catalog_item`` record (``external_id`` is the item key).

    A Pokémon variant ``1st Edition Holo`` splits into ``edition`` and ``parallel`` (the finish).
    """
    edition, parallel = None, item.variant or None
    for name in _EDITIONS:
        if item.variant.startswith(name):
            edition, parallel = name, item.variant[len(name) :].strip() or None
    identifiers = Identifiers(
        upc=item.upc,
        pcgs_number=str(item.pcgs_number) if item.pcgs_number else None,
        collector_number=item.number if item.category == "tcg" else None,
    )
    return CatalogItem(
        external_id=item.key,
        title=item.title,
        category=CATEGORY_OF[item.category],
        year=item.year,
        brand=item.brand,
        set_name=item.set_name,
        number=item.number or None,
        subject=item.subject,
        parallel=parallel,
        edition=edition,
        language=item.language,
        print_run=item.print_run,
        mint_mark=item.mint_mark,
        denomination=item.denomination,
        identifiers=identifiers,
    )


@functools.lru_cache(maxsize=4)
def world_catalog(seed: int) -> tuple[CatalogItem, ...]:
    """Every item of the fake world as ``catalog_item`` records: the demo's reference catalog."""
    return tuple(catalog_record(item) for item in items(seed))
