"""Seller noise for :mod:`.scale_catalog` titles, modelled on the fake marketplace's titles.

:func:`dress` turns a canonical catalog title into a marketplace title and names the kinds of noise
it added: ``grade`` (``PSA 10 GEM MINT``, ``BGS 9.5``, ``CGC 9.8``, ``PCGS MS65``), ``cert`` (a
cert number near its grader token), ``serial`` (``#'d 23/99`` for print-run items), ``negated``
(``NOT PSA``), ``speculative`` (``PSA 10?``), ``comp``, ``lot``, ``hype``, ``emoji``, ``item_id``
(a 12-digit listing id), ``rc`` (``Rookie`` for ``RC``), ``first`` (``1st`` for ``1st Bowman``),
``abbrev`` (``1st Ed``), ``mint_format`` (``1893 S``), ``hash`` / ``no_hash`` (``#`` added to a
collector number or dropped from a card number), ``reorder``, ``typo`` (one character of the
subject), ``ascii`` (accents dropped), ``case`` (all upper or lower) and ``truncated`` (cut at 80
characters at a word boundary, only when the cut falls after every identifying word; the kinds of
noise it cut off stay listed).

Noise never removes identity: year, set, number, subject, parallel, edition, language, print run
and mint mark stay readable, so the expected catalog id remains the only right answer.
"""

from __future__ import annotations

import random
import unicodedata

from rareindex_connectors.records import CatalogItem

from . import names as sn

__all__ = ["dress", "segments", "trap_serial"]

MAX_TITLE = 80
# Segment orders a seller might use; indices past a title's segments are skipped.
ORDERS = {
    "sports_card": ((2, 0, 1, 3, 4), (1, 2, 3, 4, 0), (0, 1, 2, 4, 3), (0, 2, 1, 3, 4)),
    "tcg_card": ((3, 2, 4, 5, 0, 1), (1, 3, 4, 2, 0, 5), (0, 1, 3, 2, 4, 5)),
    "comic": ((0, 1, 3, 2), (2, 0, 1, 3)),
    "coin": ((1, 0, 2), (0, 2, 1)),
}
HEADS = {"sports_card": 4, "tcg_card": 5, "comic": 3, "coin": 1}


def trap_serial(year: int, number: str, print_run: int) -> int:
    """The serial that :mod:`.scale_catalog` also issues as a card number (``#'d 17/50`` vs #17)."""
    return sum(map(ord, f"{year}{number}")) % print_run + 1


def segments(record: CatalogItem) -> list[str]:
    """The canonical title cut into identity segments (``" ".join`` gives the title back)."""
    year = str(record.year)
    if record.category == "sports_card":
        head = [year, record.set_name, record.subject, f"#{record.number}"]
    elif record.category == "tcg_card":
        lang = "" if record.language in (None, "English") else f" {record.language}"
        head = [year, f"Pokémon{lang}", record.set_name, record.subject, record.number]
    elif record.category == "comic":
        head = [record.set_name, f"#{record.number}", f"({year})"]
    else:
        head = [f"{year}-{record.mint_mark}" if record.mint_mark else year]
    if any(part is None for part in head):
        return [record.title]
    joined = " ".join(str(part) for part in head)
    if record.title != joined and not record.title.startswith(joined + " "):
        return [record.title]
    parts = [str(part) for part in head]
    tail = record.title[len(joined) :].strip()
    denomination = f" {record.denomination}"
    if record.category == "coin" and tail.endswith(denomination):
        return [*parts, tail[: -len(denomination)], denomination.strip()]
    return [*parts, tail] if tail else parts


def _typo(rng: random.Random, text: str) -> str:
    words = [i for i, w in enumerate(text.split(" ")) if len(w) >= 5 and w.isalpha()]
    if not words:
        return text
    split = text.split(" ")
    index = rng.choice(words)
    word, at = split[index], rng.randint(1, len(split[index]) - 2)
    kind = rng.choice(("swap", "drop", "double", "replace"))
    if kind == "swap" and word[at] != word[at + 1]:
        word = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    elif kind == "drop":
        word = word[:at] + word[at + 1 :]
    elif kind == "double":
        word = word[:at] + word[at] + word[at:]
    else:
        letter = rng.choice([c for c in "aeiourstnl" if c != word[at].lower()])
        word = word[:at] + letter + word[at + 1 :]
    split[index] = word
    return " ".join(split)


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def _cert(rng: random.Random, grader: str) -> str:
    if grader == "PSA":
        return str(rng.randrange(10**7, 10**9))
    if grader == "BGS":
        return f"00{rng.randrange(10**7, 10**8)}"
    if grader == "SGC":
        return str(rng.randrange(10**6, 10**7))
    if grader in ("NGC", "CGC SS") or rng.random() < 0.3:
        return f"{rng.randrange(10**6, 10**7)}-{rng.randint(1, 20):03d}"
    return str(rng.randrange(10**9, 10**10))


def _grade(rng: random.Random, category: str, flags: list[str]) -> str:
    table = {"comic": sn.COMIC_GRADES, "coin": sn.COIN_GRADES}.get(category, sn.CARD_GRADES)
    grader, grade, label = rng.choice(table)
    phrase = " ".join(p for p in (grader, grade, label if rng.random() < 0.6 else "") if p)
    flags.append("grade")
    if rng.random() < 0.45:
        flags.append("cert")
        cert = _cert(rng, grader)
        style = rng.random()
        shape = "{} #{}" if style < 0.4 else "{} {}" if style < 0.75 else "{} Cert# {}"
        phrase = shape.format(phrase, cert)
    return phrase


def _identity_noise(rng: random.Random, record: CatalogItem, flags: list[str]) -> str:
    """The identity segments, reworded and reordered the way sellers do."""
    parts = segments(record)
    heads, category = HEADS[record.category], record.category
    structured = len(parts) > 1
    if structured and len(parts) > heads:
        tail = parts[heads]
        if record.print_run and f"/{record.print_run}" in tail and rng.random() < 0.5:
            serial = rng.randint(1, record.print_run)
            if rng.random() < 0.5:
                serial = trap_serial(record.year or 0, record.number or "", record.print_run)
            shown = rng.choice(("#'d {}/{}", "{}/{}", "#{}/{}", "numbered {}/{}"))
            tail = tail.replace(f"/{record.print_run}", shown.format(serial, record.print_run))
            flags.append("serial")
        if (tail.endswith(" RC") or tail == "RC") and rng.random() < 0.3:
            tail = tail[:-2] + rng.choice(("Rookie", "RC Rookie", "Rookie Card", "rc"))
            flags.append("rc")
        if "1st Bowman" in tail and rng.random() < 0.4:
            tail = tail.replace("1st Bowman", rng.choice(("1st", "BOWMAN 1ST", "1st Bowman RC")))
            flags.append("first")
        if "1st Edition" in tail and rng.random() < 0.25:
            tail = tail.replace("1st Edition", rng.choice(("1st Ed", "1st Ed.", "1st Edition!")))
            flags.append("abbrev")
        parts[heads] = tail
    if structured and record.subject and rng.random() < 0.1 and record.subject in parts:
        index = parts.index(record.subject)
        typo = _typo(rng, parts[index])
        if typo != parts[index]:
            parts[index] = typo
            flags.append("typo")
    if structured and category in ("sports_card", "comic") and rng.random() < 0.3:
        number = 3 if category == "sports_card" else 1
        parts[number] = parts[number].lstrip("#")
        flags.append("no_hash")
    if structured and category == "tcg_card" and rng.random() < 0.15:
        parts[4] = f"#{parts[4]}"
        flags.append("hash")
    if structured and category == "coin" and record.mint_mark and rng.random() < 0.3:
        parts[0] = parts[0].replace("-", rng.choice((" ", "")))
        flags.append("mint_format")
    if structured and rng.random() < 0.25:
        order = rng.choice(ORDERS[category])
        parts = [parts[i] for i in order if i < len(parts)]
        flags.append("reorder")
    return " ".join(parts)


def dress(rng: random.Random, record: CatalogItem) -> tuple[str, tuple[str, ...]]:
    """A marketplace title for ``record`` and the kinds of noise it carries."""
    flags: list[str] = []
    core = _identity_noise(rng, record, flags)
    before: list[str] = []
    after: list[str] = []
    graded = {"coin": 0.7, "comic": 0.55}.get(record.category, 0.5)
    card = record.category in ("sports_card", "tcg_card")
    if rng.random() < graded:
        after.append(_grade(rng, record.category, flags))
    elif card and rng.random() < 0.45:
        kind = rng.choice(("negated", "speculative", "comp", "lot"))
        flags.append(kind)
        if kind == "lot":
            size = rng.choice((2, 3, 5, 10))
            before.append(rng.choice((f"Lot of {size}", f"({size})", f"x{size}", f"QTY {size}")))
            after.append("lot")
        else:
            phrases = {"negated": sn.NEGATED, "speculative": sn.SPECULATIVE, "comp": sn.COMPS}
            after.append(rng.choice(phrases[kind]))
    else:
        after.append(rng.choice((*sn.RAW_WORDS, "", "")))
    if rng.random() < 0.3:
        flags.append("hype")
        after.insert(rng.randint(0, len(after)), rng.choice(sn.HYPE))
    if rng.random() < 0.3:
        flags.append("emoji")
        (before if rng.random() < 0.5 else after).append(rng.choice(sn.EMOJI))
    if rng.random() < 0.04:
        flags.append("item_id")
        listing = f"{rng.choice(('125', '256', '395'))}{rng.randrange(10**9):09d}"
        after.append(f"{rng.choice(('same as ', 'see ', ''))}{listing}")
    head = " ".join(w for w in (*before, core) if w)
    title = " ".join(w for w in (head, *after) if w)
    if len(title) > MAX_TITLE and len(head) < MAX_TITLE:
        # sellers cut whole words to fit; only noise after the identity is lost
        title = title[: MAX_TITLE + 1].rsplit(" ", 1)[0]
        flags.append("truncated")
    if rng.random() < 0.25 and _ascii(title) != title:
        title = _ascii(title)
        flags.append("ascii")
    if rng.random() < 0.22:
        title = title.upper() if rng.random() < 0.65 else title.lower()
        flags.append("case")
    return title, tuple(flags)
