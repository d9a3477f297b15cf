"""The marketplace's listings (:mod:`.market` serves them), titled with real-world noise.

Each listing sells one world copy (or a lot of several copies of its item). Titles carry the noise
docs/domain.md#title-noise-and-red-flags lists, and :attr:`Listing.flags` records which kinds each
one got:

``emoji`` (🔥💎📈🚀), ``hype`` (``L@@K``, ``INVEST``, ``HOF``, ``RARE``, ``MUST SEE``), ``lot``
(``lot of 3``, ``(10)``, ``x10``), ``negated`` (``NOT PSA``), ``speculative`` (``PSA 10?``),
``comp`` (``PSA 10 comp``), ``cert`` (a cert near its grader: ``PSA 10 GEM MINT #12345678``,
``BGS 9.5 0012345678``, ``CGC 9.8 4321000-001``, ``Cert# 12345678``), ``item_id`` (a 12-digit
listing id in the title), ``serial`` (``23/99``), ``best_offer`` (the price shown is the list price,
struck through; the accepted price is hidden).

After every generated listing come :data:`MISTITLED` planted ones, flagged ``mistitled``: the real
cert of a graded copy a store holds, in a title naming another card (another player of the same set
and year, or the same player's card of another year). Their :attr:`Listing.copy` is what the
listing *claims* (the titled item, with the real slab's grade and cert), so the title resolves to
the claimed item; the grading registry still answers the cert with the real one — the mismatch the
cert-verify stage must raise. They were sold weeks ago, past the first page of sold results.

:attr:`Listing.grader` is the ground truth after the negation rules: ``None`` for raw copies even
when the title names a grader.

Prices scatter (±30 %, a lot at its size) around the copy's true value in the week it sold, an
active listing's around today's (:func:`.prices.price_truth`: each category's index path).
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from ._web import NOW, gbp, moment, site_rng, usd
from .catalog import Item
from .prices import price_truth
from .world import Copy, World, world

__all__ = ["HOST", "MISTITLED", "Listing", "MarketData", "build_market", "market_data"]

HOST = "market.fake.test"
EMOJI = ("🔥", "💎", "📈", "🚀", "🔥🔥", "💎🙌")
HYPE = ("L@@K", "INVEST", "HOF", "RARE", "MUST SEE", "HOT", "GOAT")
SELLERS = ("cardshark", "vintage", "slabking", "pokemaster", "comicvault", "coinhound", "breakroom")
SUFFIXES = ("_22", ".breaks", "-collectibles", "99", "_hobby", "-cards")
SPEC_GRADERS = {
    "PSA": "Professional Sports Authenticator (PSA)",
    "BGS": "Beckett Grading Services (BGS)",
    "CGC": "Certified Guaranty Company (CGC)",
    "SGC": "Sportscard Guaranty (SGC)",
    "PCGS": "Professional Coin Grading Service (PCGS)",
    "NGC": "Numismatic Guaranty Company (NGC)",
}
MISTITLED = 2
"""Planted mis-titled listings (module docstring), appended after the generated ones."""


@dataclass(frozen=True, slots=True)
class Listing:
    """One listing. ``price`` is in minor units of ``currency`` (what the result page shows)."""

    item_id: str
    title: str
    copy: Copy
    status: Literal["sold", "active"]
    sale_type: Literal["auction", "fixed", "best_offer"]
    price: int
    currency: Literal["USD", "GBP"]
    price_text: str
    shipping: int
    when: datetime
    """Sold: the sale time. Active: when the listing ends."""
    seller: str
    bids: int | None
    lot_size: int
    grader: str | None
    cert: str | None
    """The cert in the item specifics (graded copies); :attr:`cert_in_title` if the title has it."""
    cert_in_title: str | None
    flags: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"/itm/{self.item_id}"

    @property
    def is_lot(self) -> bool:
        return self.lot_size > 1

    @property
    def price_visibility(self) -> Literal["exact", "hidden"]:
        return "hidden" if self.sale_type == "best_offer" else "exact"


@dataclass(frozen=True, slots=True)
class MarketData:
    listings: tuple[Listing, ...]
    by_id: dict[str, Listing]

    def sold(self) -> tuple[Listing, ...]:
        """Sold listings, most recent first (the search order)."""
        return tuple(sorted((x for x in self.listings if x.status == "sold"), key=_recent))

    def active(self) -> tuple[Listing, ...]:
        """Active listings, ending soonest first."""
        chosen = (x for x in self.listings if x.status == "active")
        return tuple(sorted(chosen, key=lambda x: (x.when, x.item_id)))


def _recent(listing: Listing) -> tuple[float, str]:
    return (-listing.when.timestamp(), listing.item_id)


@functools.lru_cache(maxsize=4)
def market_data(seed: int) -> MarketData:
    """The marketplace for ``seed`` (ground truth for tests)."""
    return build_market(seed, world(seed))


def build_market(seed: int, world_: World) -> MarketData:
    """Build every listing from the world's market copies (uncached)."""
    rng = site_rng(seed, HOST)
    shared = {c.key for c in world_.shared}
    ids: set[str] = set()
    listings = []
    for copy in world_.market:
        item_id = ""
        while not item_id or item_id in ids:
            item_id = f"{rng.choice(('125', '256', '395', '226'))}{rng.randrange(10**9):09d}"
        ids.add(item_id)
        listings.append(_listing(rng, seed, item_id, copy, copy.key in shared))
    listings.extend(_mistitled(seed, world_, ids))
    return MarketData(tuple(listings), {x.item_id: x for x in listings})


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if len(w) > 2}


def _mistitled(seed: int, world_: World, ids: set[str]) -> list[Listing]:
    """The planted mis-titled listings (module docstring), from their own generator so that no
    generated listing changes."""
    rng = site_rng(seed, f"{HOST}/mistitled")
    shared = {c.key for c in world_.shared}
    slabs = [
        c
        for c in world_.shop
        if c.grade.graded and c.item.category == "sports" and c.key not in shared
    ]
    cards = [i for i in world_.items if i.category == "sports"]

    def other_player(real: Item) -> Item | None:
        return next(
            (
                i
                for i in cards
                if (i.year, i.set_name) == (real.year, real.set_name)
                and not _words(i.subject) & _words(real.subject)
            ),
            None,
        )

    def other_year(real: Item) -> Item | None:
        return next((i for i in cards if i.subject == real.subject and i.year != real.year), None)

    planted: list[Listing] = []
    used: set[str] = set()
    for n, (pick, style) in enumerate(((other_player, "#"), (other_year, "Cert# "))[:MISTITLED]):
        real, claimed = next(
            (c, i) for c in slabs if c.key not in used and (i := pick(c.item)) is not None
        )
        used.add(real.key)
        grade = real.grade
        title = f"{claimed.title} {grade.phrase} {style}{grade.cert}"
        item_id = ""
        while not item_id or item_id in ids:
            item_id = f"{rng.choice(('125', '256'))}{rng.randrange(10**9):09d}"
        ids.add(item_id)
        copy = Copy(f"mt{n + 1:05d}", claimed, grade)
        base = copy.value_cents(rng, 0.2)
        when = NOW - timedelta(days=40 + 7 * n, seconds=rng.randrange(86_400))
        true_cents = base * price_truth(seed).level(claimed.category, when)
        price = int(true_cents) // 100 * 100 + 99
        planted.append(
            Listing(
                item_id=item_id,
                title=title,
                copy=copy,
                status="sold",
                sale_type="fixed",
                price=price,
                currency="USD",
                price_text=usd(price),
                shipping=499 if base > 2_000 else 0,
                when=when,
                seller=rng.choice(SELLERS) + rng.choice(SUFFIXES),
                bids=None,
                lot_size=1,
                grader=grade.grader,
                cert=grade.cert,
                cert_in_title=grade.cert,
                flags=("cert", "mistitled"),
            )
        )
    return planted


def _title(rng: random.Random, copy: Copy, shared: bool) -> tuple[str, int, str | None, list[str]]:
    """Title, lot size, cert shown in the title, and noise flags."""
    item, grade = copy.item, copy.grade
    flags: list[str] = []
    words = [item.title]
    if item.print_run and rng.random() < 0.5:
        serial = rng.randint(1, item.print_run)
        words[0] = words[0].replace(f"/{item.print_run}", f"#'d {serial}/{item.print_run}")
        flags.append("serial")
    lot_size, cert_in_title = 1, None
    if grade.graded:
        phrase = grade.phrase
        if rng.random() < (0.8 if shared else 0.45):
            cert_in_title = grade.cert
            style = rng.random()
            if grade.grader == "PSA" and style < 0.5:
                phrase = f"PSA {grade.grade} {'GEM MINT' if grade.grade == '10' else grade.label}"
                phrase += f" #{grade.cert}"
            elif style < 0.75:
                phrase = f"{phrase} {grade.cert}"
            else:
                phrase = f"{phrase} Cert# {grade.cert}"
            flags.append("cert")
        words.append(phrase)
    elif item.category in ("sports", "tcg") and rng.random() < 0.45:
        kind = rng.choice(("negated", "speculative", "comp", "lot"))
        flags.append(kind)
        if kind == "negated":
            words.append(rng.choice(("Raw NOT PSA", "NOT PSA BGS", "raw - not graded NOT PSA")))
        elif kind == "speculative":
            words.append(rng.choice(("PSA 10?", "PSA 10 candidate?", "BGS 9.5?")))
        elif kind == "comp":
            words.append(rng.choice(("PSA 10 comp", "psa 9 comp", "BGS 9.5 comp")))
        else:
            lot_size = rng.choice((3, 5, 10))
            words = [rng.choice((f"Lot of {lot_size}", f"({lot_size})", f"x{lot_size}")), *words]
            words.append("lot")
    else:
        words.append(rng.choice(("NM", "Raw", "Near Mint", "")))
    if item.rookie and "RC" not in item.title and rng.random() < 0.5:
        words.append("RC")
    if rng.random() < 0.3:
        flags.append("hype")
        words.append(rng.choice(HYPE))
    if rng.random() < 0.3:
        flags.append("emoji")
        mark = rng.choice(EMOJI)
        words = [mark, *words] if rng.random() < 0.5 else [*words, mark]
    if rng.random() < 0.04:
        flags.append("item_id")
        words.append(f"same as {rng.choice(('125', '256'))}{rng.randrange(10**9):09d}")
    return " ".join(w for w in words if w), lot_size, cert_in_title, flags


def _listing(rng: random.Random, seed: int, item_id: str, copy: Copy, shared: bool) -> Listing:
    title, lot_size, cert_in_title, flags = _title(rng, copy, shared)
    status: Literal["sold", "active"] = "sold" if shared or rng.random() < 0.75 else "active"
    sale_type: Literal["auction", "fixed", "best_offer"] = rng.choices(
        ("auction", "fixed", "best_offer"), (50, 40, 10)
    )[0]
    if status == "active" and sale_type == "best_offer":
        sale_type = "fixed"
    if sale_type == "best_offer":
        flags.append("best_offer")
    uk = rng.random() < 0.1
    usd_cents = copy.value_cents(rng, 0.3) * lot_size
    currency: Literal["USD", "GBP"] = "GBP" if uk else "USD"
    price = int(usd_cents * 0.79) if uk else usd_cents
    ending = None
    if sale_type != "auction":
        ending = rng.choice((0, 99, 95))
        price = price // 100 * 100 + ending
    us_prefix = not uk and rng.random() < 0.2
    # shipping follows the copy's size today (the draws stay those of the sites before a truth)
    shipping = rng.choice((0, 0, 499, 500, 599, 1_000, 2_500)) if price > 2_000 else 0
    if status == "sold":
        # shared copies were sold at auction in February to April, and resold after
        when = moment(rng, days=18 if shared else 120)
    else:
        when = NOW + timedelta(seconds=rng.randrange(3600, 7 * 86400))
    # the price scatters around the copy's true value in the week it sold (asks: today's)
    true_cents = usd_cents * price_truth(seed).level(copy.item.category, when)
    price = max(1, int(true_cents * 0.79) if uk else int(true_cents))
    if ending is not None:
        price = price // 100 * 100 + ending
    price_text = gbp(price) if uk else usd(price)
    if us_prefix:
        price_text = f"US {price_text}"
    seller = rng.choice(SELLERS) + rng.choice(SUFFIXES) + ("_uk" if uk else "")
    return Listing(
        item_id=item_id,
        title=title,
        copy=copy,
        status=status,
        sale_type=sale_type,
        price=price,
        currency=currency,
        price_text=price_text,
        shipping=shipping,
        when=when,
        seller=seller,
        bids=rng.randint(1, 60) if sale_type == "auction" else None,
        lot_size=lot_size,
        grader=copy.grade.grader,
        cert=copy.grade.cert,
        cert_in_title=cert_in_title,
        flags=tuple(flags),
    )
