"""The Pokémon TCG data layout: ``sets/<lang>.json`` beside ``cards/<lang>/<set id>.json``.

This is the layout of the Pokémon TCG API's public data repository. A set entry gives ``id``,
``name``, ``series``, ``printedTotal``, ``ptcgoCode`` and ``releaseDate`` (``YYYY/MM/DD``); a card
entry gives ``id`` (``<set id>-<number>``), ``name``, ``number`` (a string: ``4``, ``TG12``,
``SV107``) and ``rarity``. Each card becomes one :class:`~rareindex_connectors.records.CatalogItem`:

* ``external_id`` = the card id, ``subject`` = its name, ``number`` = its number as printed
  before the slash, ``rarity`` = its rarity;
* from its set: ``set_name``, ``series``, ``printed_total`` (the ``T`` of ``N/T``), ``year`` (of
  ``releaseDate``; none when the date is unknown) and ``identifiers.set_code`` (``ptcgoCode``);
* ``category`` ``tcg_card``, ``brand`` ``Pokémon``, ``language`` from the folder (``en`` ->
  ``English``).

A set listed without a card file is skipped (a partial dump); a card file whose set is not listed
is an error, as is a card without an ``id``, ``name`` or ``number``.

Example:
    >>> from pathlib import Path
    >>> items = list(read_pokemon_tcg(Path("fixtures/catalogs/pokemon-tcg-sample")))
    >>> zard = next(i for i in items if i.external_id == "base1-4")
    >>> zard.subject, zard.number, zard.printed_total, zard.set_name, zard.year
    ('Charizard', '4', 102, 'Base', 1999)
    >>> zard.identifiers.set_code, zard.series, zard.rarity
    ('BS', 'Base', 'Rare Holo')
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rareindex_connectors.records import CatalogItem, Identifiers

from ..errors import ConfigError

__all__ = ["LANGUAGES", "is_pokemon_tcg", "read_pokemon_tcg"]

LANGUAGES = {"en": "English", "ja": "Japanese", "fr": "French", "de": "German", "es": "Spanish",
             "it": "Italian", "pt": "Portuguese", "ko": "Korean", "zh": "Chinese"}  # fmt: skip
BRAND = "Pokémon"


def is_pokemon_tcg(path: Path) -> bool:
    """Whether ``path`` is a folder in this layout (a ``sets/*.json`` and a ``cards/`` folder)."""
    return path.is_dir() and (path / "cards").is_dir() and any((path / "sets").glob("*.json"))


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from None


def _year(release: object) -> int | None:
    head = str(release or "")[:4]
    return int(head) if head.isdigit() else None


def read_pokemon_tcg(path: Path) -> Iterator[CatalogItem]:
    """Every card of every language folder under ``path``, in set order (see the module)."""
    if not is_pokemon_tcg(path):
        raise ConfigError(f"{path} is not a Pokémon TCG data folder (sets/<lang>.json, cards/)")
    for sets_file in sorted((path / "sets").glob("*.json")):
        lang = sets_file.stem
        sets = _load(sets_file)
        if not isinstance(sets, list):
            raise ConfigError(f"{sets_file}: expected a JSON list of sets")
        by_id = {s.get("id"): s for s in sets if isinstance(s, dict)}
        cards_dir = path / "cards" / lang
        for card_file in sorted(cards_dir.glob("*.json")):
            if card_file.stem not in by_id:
                raise ConfigError(f"{card_file}: set {card_file.stem!r} is not in {sets_file}")
        for set_entry in sets:
            card_file = cards_dir / f"{set_entry.get('id')}.json"
            if card_file.is_file():
                yield from _cards(card_file, set_entry, LANGUAGES.get(lang, lang))


def _cards(card_file: Path, set_entry: dict[str, Any], language: str) -> Iterator[CatalogItem]:
    cards = _load(card_file)
    if not isinstance(cards, list):
        raise ConfigError(f"{card_file}: expected a JSON list of cards")
    set_name = set_entry.get("name")
    total = set_entry.get("printedTotal")
    code = set_entry.get("ptcgoCode") or None
    for position, card in enumerate(cards, start=1):
        where = f"{card_file}: card {position}"
        if not isinstance(card, dict):
            raise ConfigError(f"{where}: expected an object")
        for field in ("id", "name", "number"):
            if not card.get(field):
                raise ConfigError(f"{where}: field {field!r} is missing")
        name, number = str(card["name"]), str(card["number"])
        try:
            yield CatalogItem(
                external_id=str(card["id"]),
                title=f"{name} {number}/{total} {set_name}" if total else f"{name} {number}",
                category="tcg_card",
                year=_year(set_entry.get("releaseDate")),
                brand=BRAND,
                set_name=set_name,
                number=number,
                subject=name,
                language=language,
                printed_total=total if isinstance(total, int) and total > 0 else None,
                rarity=card.get("rarity"),
                series=set_entry.get("series"),
                identifiers=Identifiers(set_code=code, collector_number=number),
            )
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"])
            raise ConfigError(f"{where} ({card['id']}): {field}: {error['msg']}") from None
