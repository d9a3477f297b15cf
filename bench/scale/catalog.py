"""A 50,000-item fake catalog full of near-miss siblings, and noisy titles with ground truth.

:func:`scale_catalog` holds every item of :func:`~.sites.catalog.world_catalog` (same ids), then
near-miss siblings of each (the traps of docs/domain.md#title-noise-and-red-flags: Prizm ↔ Mosaic ↔
Select, Topps Chrome ↔ Sapphire, Base Set 4/102 ↔ Base Set 2 4/130 ↔ Legendary Collection 4/110,
neighbouring card numbers, adjacent years, other parallels and print runs, ``Ken Griffey`` next to
``Ken Griffey Jr.``, Japanese ↔ English, cover variants and printings, other mint marks and dates),
then checklists of made-up players, Pokémon sets, comic runs and coin dates up to ``size``.
Identities (category, year, set, number, subject, parallel, edition, language, print run, mint
mark), titles and ids are unique; a (set, year, number) names one subject.

:func:`noisy_titles` labels titles with the catalog id they describe: every fake-marketplace
listing, titles of catalog items dressed in seller noise (:func:`.scale_noise.dress`), and ~10%
titles of :func:`held_out` items, absent from the catalog (``expected=None``), so that precision
can be measured. Item makers live in :mod:`.scale_items`, vocabularies in :mod:`.scale_names`.

Example:
    >>> from bench.scale.catalog import noisy_titles, scale_catalog
    >>> catalog = scale_catalog(7)                                      # doctest: +SKIP
    >>> titles = noisy_titles(7, 5_000, catalog)                        # doctest: +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from rareindex_connectors.records import CatalogItem
from rareindex_fakeweb.sites import site_rng
from rareindex_fakeweb.sites.catalog import CATEGORY_OF, Item, catalog_record
from rareindex_fakeweb.sites.catalog import items as world_items
from rareindex_fakeweb.sites.market_data import market_data

from .items import ItemMaker, Roster
from .noise import dress

__all__ = [
    "LabeledTitle",
    "build_scale_catalog",
    "held_out",
    "identity",
    "noisy_titles",
    "scale_catalog",
]

DEFAULT_SIZE = 50_000
HELD_OUT_SHARE = 0.10
KEEP_SIBLING = 0.85  # the rest stay out of the catalog: near misses for held-out titles
Identity = tuple[object, ...]


class LabeledTitle(NamedTuple):
    """A marketplace-style title and the ``external_id`` it describes (``None``: not catalogued)."""

    title: str
    expected: str | None
    category: str
    noise: tuple[str, ...]


def identity(record: CatalogItem) -> Identity:
    """The catalog identity of a record: what no two items of a catalog may share."""
    return (
        record.category,
        record.year,
        record.set_name,
        record.number,
        record.subject,
        record.parallel,
        record.edition,
        record.language,
        record.print_run,
        record.mint_mark,
    )


def _item_identity(item: Item) -> Identity:
    """:func:`identity` of ``catalog_record(item)``, without building the record."""
    edition, parallel = None, item.variant or None
    for name in ("1st Edition", "Shadowless", "Unlimited"):
        if item.variant.startswith(name):
            edition, parallel = name, item.variant[len(name) :].strip() or None
    return (
        CATEGORY_OF[item.category],
        item.year,
        item.set_name,
        item.number or None,
        item.subject,
        parallel,
        edition,
        item.language,
        item.print_run,
        item.mint_mark,
    )


def _slot(item: Item) -> tuple[Identity, object] | None:
    """A numbered slot and who fills it: one subject per card number, one year per issue."""
    if item.category == "coin":
        return None
    if item.category == "comic":
        return ("comic", item.set_name, item.volume_year, item.number), (item.year, item.subject)
    key = (item.category, item.set_name, item.year, item.number, item.language)
    return key, item.subject


class _Registry:
    """What a catalog already holds: identities, titles, numbered slots and UPCs."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self.items: list[Item] = []
        self.identities: set[Identity] = set()
        self.titles: set[str] = set()
        self.slots: dict[Identity, object] = {}
        self.upcs: set[str] = set()
        for item in items:
            self.add(item, force=True)

    def fits(self, item: Item) -> bool:
        if _item_identity(item) in self.identities or item.title.casefold() in self.titles:
            return False
        slot = _slot(item)
        return slot is None or self.slots.get(slot[0], slot[1]) == slot[1]

    def add(self, item: Item, *, force: bool = False) -> bool:
        if not force and not self.fits(item):
            return False
        if not force:  # siblings are copies of their item: a fresh id
            item = replace(item, key=f"sx{len(self.items) + 1:06d}")
        if item.upc and item.upc in self.upcs:
            item = replace(item, upc=None)
        self.items.append(item)
        self.identities.add(_item_identity(item))
        self.titles.add(item.title.casefold())
        if slot := _slot(item):
            self.slots.setdefault(slot[0], slot[1])
        if item.upc:
            self.upcs.add(item.upc)
        return True


@dataclass(frozen=True, slots=True)
class _Built:
    items: tuple[Item, ...]
    records: tuple[CatalogItem, ...]
    traps: int
    """The first ``traps`` items are the world and its near-miss siblings."""


def _build(seed: int, size: int) -> _Built:
    world = world_items(seed)
    if size < len(world):
        raise ValueError(f"size {size} is smaller than the {len(world)} world items it must hold")
    rng = site_rng(seed, "scale-catalog")
    registry, maker = _Registry(world), ItemMaker(rng, Roster(seed))
    for item in world:
        for sibling in maker.siblings(item):
            if len(registry.items) < size and rng.random() < KEEP_SIBLING:
                registry.add(sibling)
    traps, misses = len(registry.items), 0
    for item in maker.fill():
        if len(registry.items) >= size:
            break
        misses = 0 if registry.add(item) else misses + 1
        if misses > 100_000:
            break
    if len(registry.items) < size:
        raise ValueError(f"could not generate {size} distinct items (got {len(registry.items)})")
    return _Built(tuple(registry.items), tuple(map(catalog_record, registry.items)), traps)


@functools.lru_cache(maxsize=2)
def _cached(seed: int, size: int) -> _Built:
    return _build(seed, size)


def scale_catalog(seed: int = 7, size: int = DEFAULT_SIZE) -> tuple[CatalogItem, ...]:
    """``size`` catalog records: the world's, their near-miss siblings, then bulk fill (cached)."""
    return _cached(seed, size).records


def build_scale_catalog(seed: int = 7, size: int = DEFAULT_SIZE) -> tuple[CatalogItem, ...]:
    """Like :func:`scale_catalog`, uncached: each call generates afresh."""
    return _build(seed, size).records


# --- Titles ---------------------------------------------------------------------------------------


def _held_out(
    seed: int, built: _Built, records: tuple[CatalogItem, ...], count: int
) -> list[CatalogItem]:
    """``count`` plausible items absent from ``records``: mostly siblings of catalog items."""
    rng = site_rng(seed, "scale-held-out")
    ids = {r.external_id for r in records}
    registry = _Registry(i for i in built.items if i.key in ids)
    absent = {identity(r) for r in records}, {r.title.casefold() for r in records}
    maker = ItemMaker(rng, Roster(seed), first_pcgs=900_000)
    bases = registry.items or list(world_items(seed))
    fill = maker.fill()
    out: list[CatalogItem] = []
    for _ in range(count * 1_000):
        if len(out) == count:
            break
        if rng.random() < 0.7:
            pool = maker.siblings(rng.choice(bases))
            candidate = rng.choice(pool) if pool else None
        else:
            candidate = next(fill, None)
        if candidate is None or not registry.fits(candidate):
            continue
        record = catalog_record(replace(candidate, key=f"ho{len(out) + 1:06d}"))
        if identity(record) in absent[0] or record.title.casefold() in absent[1]:
            continue
        registry.add(candidate)
        out.append(record)
    else:
        raise ValueError(f"could not find {count} items absent from the catalog")
    return out


def held_out(
    seed: int = 7, count: int = 500, catalog: Iterable[CatalogItem] | None = None
) -> tuple[CatalogItem, ...]:
    """``count`` plausible items that ``catalog`` (default: the scale catalog) does not hold.

    Mostly near-miss siblings of catalog items (another year, number, parallel, set or mint mark),
    the rest bulk-fill items that did not make it in; ids are ``ho000001``…
    """
    records = tuple(catalog) if catalog is not None else scale_catalog(seed)
    return tuple(_held_out(seed, _built_for(seed, records), records, count))


def _built_for(seed: int, records: tuple[CatalogItem, ...]) -> _Built:
    """The build ``records`` came from (for its items), or the world alone for other catalogs."""
    built = _cached(seed, len(records)) if len(records) >= len(world_items(seed)) else None
    if built is None or built.records[-1].external_id != records[-1].external_id:
        built = _Built(world_items(seed), (), 0)
    return built


def noisy_titles(
    seed: int = 7, count: int = 5_000, catalog: Iterable[CatalogItem] | None = None
) -> tuple[LabeledTitle, ...]:
    """``count`` labelled titles: the marketplace's, noisy catalog titles and held-out ones.

    ``catalog`` defaults to :func:`scale_catalog(seed) <scale_catalog>`. Market listings come first
    (``expected`` = the listing's item key; lots keep it, labelled ``lot``); the rest are shuffled.
    """
    records = tuple(catalog) if catalog is not None else scale_catalog(seed)
    built = _built_for(seed, records)
    rng = site_rng(seed, "scale-titles")
    market = [
        LabeledTitle(
            x.title,
            x.copy.item.key,
            CATEGORY_OF[x.copy.item.category],
            tuple(f for f in x.flags if f != "best_offer"),
        )
        for x in market_data(seed).listings
    ][:count]
    held = round(count * HELD_OUT_SHARE) if count > len(market) else 0
    drawn = max(0, count - len(market) - held)
    rest: list[LabeledTitle] = []
    for _ in range(drawn):
        traps = built.traps and rng.random() < 0.5
        record = records[rng.randrange(built.traps)] if traps else rng.choice(records)
        title, noise = dress(rng, record)
        rest.append(LabeledTitle(title, record.external_id, record.category, noise))
    for record in _held_out(seed, built, records, held):
        title, noise = dress(rng, record)
        rest.append(LabeledTitle(title, None, record.category, noise))
    rng.shuffle(rest)
    return (*market, *rest)
