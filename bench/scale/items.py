"""Item makers for :mod:`.scale_catalog`: near-miss siblings of an item, and an endless bulk fill.

Every item made here is a :class:`~.sites.catalog.Item` with an empty key, so its canonical title
is written exactly as the fake web's catalog writes it. The caller decides what enters a catalog
(unique identity, title and numbered slot); the rest can serve as held-out near misses.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, NamedTuple

from rareindex_fakeweb.sites import names, site_rng
from rareindex_fakeweb.sites.catalog import Item, upc_check_digit

from . import names as sn
from .noise import trap_serial

__all__ = ["ItemMaker", "Player", "Roster"]

LAST_YEAR = 2025
FILL_MIX = (("sports", 62), ("tcg", 18), ("comic", 12), ("coin", 8))
PRINT_RUNS = (5, 10, 25, 49, 50, 75, 99, 149, 150, 199, 249, 299)
COINS = {**names.COIN_TYPES, **sn.COIN_TYPES_EXT}
BRANDS = {s.name: s.brand for s in reversed(sn.SPORTS_SETS)} | {"Diamond Stars": "National Chicle"}
JR_SR = {name: pair for pair in sn.JR_SR_PAIRS for name in (pair.senior, pair.junior)}
TCG_META = {s[0]: s for s in sn.TCG_SETS}
RUNS = names.COMIC_RUNS + sn.COMIC_RUNS_EXT
WOTC_FINISHES = ("1st Edition Holo", "Unlimited Holo", "1st Edition", "Unlimited")
COVER_INDEX = {"": 1, "Direct Edition": 1, "Newsstand": 2}


class Player(NamedTuple):
    name: str
    sport: str
    debut: int


class Roster:
    """Players by sport with a debut year: real ones, made-up ones, and Jr./Sr. families."""

    def __init__(self, seed: int) -> None:
        rng = site_rng(seed, "scale-roster")
        debuts = {card.player: card.year for card in names.KEY_CARDS}
        players = [
            Player(name, sport, debuts.get(name, rng.randint(2015, 2021)))
            for sport, roster in names.PLAYERS.items()
            for name in roster
        ]
        players += [Player(c.player, c.sport, c.year) for c in names.KEY_CARDS]
        players += [Player(p.senior, p.sport, p.senior_years[0]) for p in sn.JR_SR_PAIRS]
        players += [Player(p.junior, p.sport, p.junior_years[0]) for p in sn.JR_SR_PAIRS]
        taken = {p.name for p in players}
        for sport in names.PLAYERS:
            for _ in range(700):
                name = f"{rng.choice(sn.FIRST_NAMES)} {rng.choice(sn.LAST_NAMES)}"
                debut = rng.randint(1952, LAST_YEAR)
                if name in taken:
                    continue
                taken.add(name)
                players.append(Player(name, sport, debut))
                if rng.random() < 0.04 and f"{name} Jr." not in taken:  # a son, 26 years later
                    taken.add(f"{name} Jr.")
                    players.append(Player(f"{name} Jr.", sport, min(LAST_YEAR, debut + 26)))
        self.players = list({p.name: p for p in players}.values())
        self._active: dict[tuple[str, int], list[Player]] = {}

    def active(self, sport: str, year: int) -> list[Player]:
        """Players of ``sport`` with a card in ``year`` (their first 16 seasons)."""
        key = (sport, year)
        if key not in self._active:
            pool = [p for p in self.players if p.sport == sport and p.debut <= year <= p.debut + 15]
            self._active[key] = pool or [p for p in self.players if p.sport == sport]
        return self._active[key]


def family(set_name: str, sport: str | None) -> tuple[names.Parallel, ...]:
    """The parallels a product prints."""
    if set_name in names.PARALLELS:
        return names.PARALLELS[set_name]
    for spec in sn.SPORTS_SETS:
        if spec.name == set_name and spec.sport == sport:
            return sn.PARALLEL_FAMILIES[spec.family]
    return ()


def split_number(number: str) -> tuple[str, int | None]:
    """``BDC-12`` -> (``BDC-``, 12); ``BDC-EX`` -> (``BDC-EX``, None)."""
    match = re.fullmatch(r"(.*?)(\d+)", number)
    return (match[1], int(match[2])) if match else (number, None)


def collector(number: str, index: int) -> str | None:
    """``199/165`` with ``index`` 5 -> ``005/165``; ``4/102`` with 3 -> ``3/102``."""
    match = re.fullmatch(r"([A-Z]*)(\d+)/([A-Z]*)(\d+)", number)
    if not match or index < 1:
        return None
    width = len(match[2]) if len(match[2]) == len(match[4]) else 0
    return f"{match[1]}{index:0{width}d}/{match[3]}{match[4]}"


def covers(year: int) -> tuple[str, ...]:
    """The era's cover variants: ratio and virgin, direct vs newsstand, or price variants."""
    if year >= 2008:
        return sn.MODERN_COVERS
    return sn.DIRECT_COVERS if year >= 1976 else sn.VINTAGE_COVERS


def _card(spec: sn.SetSpec, year: int, number: str, player: Player, **extra: object) -> Item:
    rookie = player.debut == year and not extra.get("first_bowman")
    return Item(
        *("", "sports", year, spec.brand, spec.name, number, player.name),
        sport=spec.sport,
        rookie=rookie,
        **extra,  # type: ignore[arg-type]
    )


def _pokemon(set_name: str, year: int, number: str, name: str, variant: str, lang: str) -> Item:
    return Item("", "tcg", year, "Pokémon", set_name, number, name, variant, language=lang)


def _coin(type_name: str, year: int, mint: str, variety: str, pcgs: int) -> Item | None:
    denomination, first, last, mints, *_ = COINS[type_name]
    carson_city = 1870 <= year <= 1893
    if not first <= year <= last or mint not in mints or (mint == "CC" and not carson_city):
        return None
    return Item(
        *("", "coin", year, "U.S. Mint", type_name, "", type_name, variety),
        denomination=denomination,
        mint_mark=mint or None,
        pcgs_number=pcgs,
    )


class ItemMaker:
    """Makes items from one generator: :meth:`siblings` of an item and a bulk :meth:`fill`."""

    def __init__(self, rng: random.Random, roster: Roster, first_pcgs: int = 100_000) -> None:
        self.rng, self.roster = rng, roster
        self.pcgs = itertools.count(first_pcgs)  # far above the world's PCGS numbers
        self.upc_bodies: dict[tuple[str, int | None], str] = {}

    def siblings(self, item: Item) -> list[Item]:
        """Near misses of ``item``: each a distinct, plausible asset a fuzzy matcher may confuse."""
        if item.category == "sports":
            return list(self._sports_siblings(item))
        if item.category == "tcg":
            return list(self._tcg_siblings(item))
        if item.category == "comic":
            return list(self._comic_siblings(item))
        return [c for c in self._coin_siblings(item) if c is not None]

    def fill(self) -> Iterator[Item]:
        """Items of every category in :data:`FILL_MIX` proportions, until every pool runs dry."""
        pools = {
            "sports": self._sports_fill(),
            "tcg": self._tcg_fill(),
            "comic": self._comic_fill(),
            "coin": self._coin_fill(),
        }
        mix = list(FILL_MIX)
        while mix:
            kind = self.rng.choices([k for k, _ in mix], [w for _, w in mix])[0]
            try:
                yield next(pools[kind])
            except StopIteration:
                mix = [(k, w) for k, w in mix if k != kind]

    # --- sports -----------------------------------------------------------------------------------

    def jr_sr_cards(self, pair: sn.JrSr, near: Item | None, count: int) -> Iterator[Item]:
        """Cards of both generations; the other one in ``near``'s set and year when active."""
        rng = self.rng
        for name, (first, last) in (
            (pair.senior, pair.senior_years),
            (pair.junior, pair.junior_years),
        ):
            if near is not None and near.subject == name:
                continue
            for k in range(count):
                if near is not None and k == 0 and first <= near.year <= last:
                    year, prefix = near.year, split_number(near.number)[0]
                    spec = sn.SetSpec(near.set_name, near.brand, pair.sport, year, year, 400, "")
                    spec = spec._replace(prefix=prefix)
                else:
                    year = rng.randint(first, last)
                    specs = [s for s in sn.SPORTS_SETS if s.sport == pair.sport]
                    spec = rng.choice([s for s in specs if s.first <= year <= s.last] or specs)
                number = f"{spec.prefix}{rng.randint(1, spec.size)}"
                yield _card(spec, year, number, Player(name, pair.sport, first))

    def _sports_siblings(self, item: Item) -> Iterator[Item]:
        rng, base = self.rng, replace(item, variant="", print_run=None)
        for name in sn.SIBLING_SETS.get(item.set_name, ()):
            bowman = name.startswith("Bowman")
            sibling = replace(
                base,
                set_name=name,
                brand=BRANDS.get(name, item.brand),
                first_bowman=item.first_bowman and bowman,
                card_type=item.card_type if bowman else "",
            )
            yield sibling
            if parallels := family(name, item.sport):
                parallel = rng.choice(parallels)
                yield replace(sibling, variant=parallel.name, print_run=parallel.print_run)
        prefix, number = split_number(item.number)
        for step in (-2, -1, 1, 2):
            if number is None:
                break
            player = rng.choice(self.roster.active(item.sport or "Baseball", item.year))
            if rng.random() < 0.3:  # the same player's other card in the set
                player = Player(item.subject, item.sport or "", item.year if item.rookie else 0)
            rookie = player.debut == item.year and not item.first_bowman  # RC xor 1st Bowman
            number_ = f"{prefix}{max(1, number + step)}"
            yield replace(base, number=number_, subject=player.name, rookie=rookie)
        for step in (-1, 1):
            if item.year + step <= LAST_YEAR:
                yield replace(base, year=item.year + step, rookie=False, first_bowman=False)
        for parallel in family(item.set_name, item.sport):
            yield replace(item, variant=parallel.name, print_run=parallel.print_run)
        if item.print_run:
            yield replace(
                item, print_run=rng.choice([r for r in PRINT_RUNS if r != item.print_run])
            )
            serial = trap_serial(item.year, item.number, item.print_run)  # `#'d 17/50` is not #17
            yield replace(base, number=str(serial), card_type="", rookie=False, first_bowman=False)
        if item.first_bowman:  # `1st` is not card #1
            set_name = "Bowman Draft" if "Draft" in item.set_name else "Bowman"
            yield replace(base, set_name=set_name, number="1", card_type="", first_bowman=False)
        if pair := JR_SR.get(item.subject):
            yield from self.jr_sr_cards(pair, item, 2)

    def _sports_fill(self) -> Iterator[Item]:
        rng = self.rng
        for pair in sn.JR_SR_PAIRS:
            yield from self.jr_sr_cards(pair, None, 4)
        while True:  # a checklist block: one product and year, 10-40 cards
            spec = rng.choice(sn.SPORTS_SETS)
            year = rng.randint(spec.first, min(spec.last, LAST_YEAR))
            active, parallels = self.roster.active(spec.sport, year), family(spec.name, spec.sport)
            for _ in range(rng.randint(10, 40)):
                extra: dict[str, object] = {}
                number = f"{spec.prefix}{rng.randint(1, spec.size)}"
                if rng.random() < 0.12:
                    card_type, prefix = rng.choice(sn.INSERTS[:-1])
                    if spec.brand == "Bowman":
                        (card_type, prefix), extra["first_bowman"] = sn.INSERTS[-1], True
                    number, extra["card_type"] = f"{prefix}{rng.randint(1, 60)}", card_type
                card = _card(spec, year, number, rng.choice(active), **extra)
                yield card
                if parallels and rng.random() < 0.35:
                    for parallel in rng.sample(parallels, min(len(parallels), rng.randint(1, 3))):
                        yield replace(card, variant=parallel.name, print_run=parallel.print_run)

    # --- Pokémon ----------------------------------------------------------------------------------

    def _tcg_siblings(self, item: Item) -> Iterator[Item]:
        rng = self.rng
        index = int(re.sub(r"\D", "", item.number.split("/")[0]) or 0)
        for set_name, year, size, finishes, offset in sn.TCG_REPRINTS.get(item.set_name, ()):
            for finish in finishes:  # Base Set 4/102 -> Base Set 2 4/130, Legendary 4/110
                number = f"{index + offset}/{size}"
                yield _pokemon(set_name, year, number, item.subject, finish, "English")
        yield replace(item, language="Japanese" if item.language == "English" else "English")
        for step in (-2, -1, 1, 2):
            if neighbour := collector(item.number, index + step):
                yield replace(item, number=neighbour, subject=rng.choice(sn.POKEMON))
        if item.year >= 2016:  # the same Pokémon's other cards in the set
            total = int(re.sub(r"\D", "", item.number.split("/")[-1]) or 100)
            for _ in range(2):
                number = collector(item.number, rng.randint(1, total)) or item.number
                yield replace(item, number=number, variant=rng.choice(sn.TCG_FINISHES))
            if "Rare" not in item.variant and "Art" not in item.variant:
                yield replace(item, variant="Reverse Holo")
        for set_name in sn.TCG_SIBLINGS.get(item.set_name, ()):
            name, year, size, _, _ = TCG_META[set_name]
            number, finish = f"{rng.randint(1, size):03d}/{size:03d}", rng.choice(sn.TCG_FINISHES)
            yield _pokemon(name, year, number, item.subject, finish, "English")

    def _tcg_fill(self) -> Iterator[Item]:
        rng = self.rng
        while True:  # a block of one set and language
            set_name, year, size, _, era = rng.choice(sn.TCG_SETS)
            language = "Japanese" if rng.random() < 0.15 else "English"
            for _ in range(rng.randint(8, 30)):
                index = rng.randint(1, int(size * 1.15))
                name = rng.choice(sn.POKEMON) + rng.choice(sn.ERA_SUFFIXES.get(era, ("",)))
                number = f"{index:03d}/{size:03d}" if year >= 2020 else f"{index}/{size}"
                if era == "wotc":
                    finish = rng.choice(WOTC_FINISHES)
                else:
                    secret = index > size
                    finish = rng.choice(sn.TCG_SECRET_FINISHES if secret else sn.TCG_FINISHES)
                card = _pokemon(set_name, year, number, name, finish, language)
                yield card
                if index <= size and era not in ("wotc", "ecard") and rng.random() < 0.3:
                    yield replace(card, variant="Reverse Holo")

    # --- comics -----------------------------------------------------------------------------------

    def _upc(self, get: Callable[[str], Any]) -> str | None:
        """A 12-digit body per series volume, then issue (3), cover (1) and printing (1)."""
        number, variant, publisher = get("number"), get("variant"), get("brand")
        if get("year") < 2008 or not number.isdigit() or publisher not in names.UPC_PREFIX:
            return None  # the 5-digit add-on came in around 2008
        key = (get("set_name"), get("volume_year"))
        if key not in self.upc_bodies:
            body = names.UPC_PREFIX[publisher] + f"{self.rng.randrange(10**5):05d}"
            self.upc_bodies[key] = body + upc_check_digit(body)
        printing = {"2nd Printing": 2, "3rd Printing": 3}.get(variant, 1)
        cover = sn.MODERN_COVERS.index(variant) + 1 if variant in sn.MODERN_COVERS else 9
        cover = 1 if printing > 1 else min(9, COVER_INDEX.get(variant, cover))
        return f"{self.upc_bodies[key]}{int(number) % 1000:03d}{cover}{printing}"

    def _issue(self, item: Item, **changes: Any) -> Item:
        upc = self._upc(lambda name: changes[name] if name in changes else getattr(item, name))
        return replace(item, upc=upc, **changes)

    def _comic_siblings(self, item: Item) -> Iterator[Item]:
        era = covers(item.year)
        for cover in self.rng.sample(era, min(3, len(era))):
            yield self._issue(item, variant=cover)
        if not item.number.isdigit():
            return
        issue = int(item.number)
        for step in (-2, -1, 1, 2):
            if issue + step >= 1:
                yield self._issue(item, number=str(issue + step), subject="", variant=era[0])
        for start in sn.COMIC_VOLUMES.get(item.set_name, ()):
            year = start + (issue - 1) // 12
            if start != item.volume_year and year <= LAST_YEAR:
                cover = covers(year)[0]
                yield self._issue(item, volume_year=start, year=year, subject="", variant=cover)
        for series in sn.COMIC_SIBLINGS.get(item.set_name, ()):
            volume: int | None = item.volume_year
            year = item.year
            for _, name, start, first, last, first_year in RUNS:
                if name == series and first <= issue <= last:
                    volume, year = start, first_year + (issue - first) // 12
            changes = {"set_name": series, "volume_year": volume, "year": year, "subject": ""}
            yield self._issue(item, variant=covers(year)[0], **changes)

    def _comic_fill(self) -> Iterator[Item]:
        issues = [(run, issue) for run in RUNS for issue in range(run[3], run[4] + 1)]
        self.rng.shuffle(issues)
        for (publisher, series, volume, first, _, first_year), issue in issues:
            year = first_year + (issue - first) // 12
            item = Item("", "comic", year, publisher, series, str(issue), "", volume_year=volume)
            era = covers(year)
            extra = self.rng.sample(era[1:], self.rng.choice((0, 1, 1, 2, 3)))
            for cover in (era[0], *extra):
                yield self._issue(item, variant=cover)

    # --- coins ------------------------------------------------------------------------------------

    def _coin_siblings(self, item: Item) -> Iterator[Item | None]:
        spec, mint, pcgs = COINS[item.set_name], item.mint_mark or "", self.pcgs
        yield from (_coin(item.set_name, item.year, m, item.variant, next(pcgs)) for m in spec[3])
        for step in (-2, -1, 1, 2):
            yield _coin(item.set_name, item.year + step, mint, "", next(pcgs))
        yield from (_coin(item.set_name, item.year, mint, d, next(pcgs)) for d in spec[6])
        yield _coin(item.set_name, item.year, mint, "", next(pcgs))

    def _coin_fill(self) -> Iterator[Item]:
        combos = [
            (name, year, mint, variety)
            for name, spec in COINS.items()
            for year in range(spec[1], spec[2] + 1)
            for mint in spec[3]
            for variety in spec[6]
        ]
        self.rng.shuffle(combos)
        for name, year, mint, variety in combos:
            if coin := _coin(name, year, mint, variety, next(self.pcgs)):
                yield coin
