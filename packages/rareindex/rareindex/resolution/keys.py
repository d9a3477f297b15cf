"""Canonical keys: one spelling per asset and per variant (docs/domain.md#collectible-identity).

The asset key is the identity without the grade; the variant key adds
``(grader, grade, qualifier, label_type, autograph_grade)``, with ``raw`` for an ungraded copy.
Both are built from folded text, so ``Pokémon`` and ``POKEMON`` agree.

Example:
    >>> from rareindex_connectors.records import CatalogItem, Grading
    >>> item = CatalogItem(external_id="x", title="1999 Pokémon Base Set Charizard 4/102",
    ...     category="tcg_card", year=1999, set_name="Base Set", number="4/102",
    ...     subject="Charizard", parallel="Holo", edition="Unlimited")
    >>> asset_key(item)
    'tcg card|1999|base set|4/102|charizard|holo|unlimited|english||'
    >>> variant_key(asset_key(item), Grading(grader="PSA", grade="10"))[-12:]
    '|||psa|10|||'
    >>> variant_key(asset_key(item), None)[-4:], variant_key("k", None, "1st Edition")
    ('|raw', 'k|raw|1st edition')
"""

from __future__ import annotations

from rareindex_connectors.records import CatalogItem, Grading

from .text import fold

__all__ = ["asset_key", "variant_key"]


def _f(value: object) -> str:
    return "" if value is None else fold(str(value)).replace("|", "/").lstrip("#")


def asset_key(item: CatalogItem) -> str:
    """The asset key of a catalog item: category, year, set, number, subject, parallel, edition,
    language, print run, mint mark."""
    parts = [
        _f(p)
        for p in (
            item.category,
            item.year,
            item.set_name,
            item.number,
            item.subject,
            item.parallel,
            item.edition,
            item.language or "English",
            item.print_run,
            item.mint_mark,
        )
    ]
    if item.number and not parts[3]:  # a number of signs only: Unown "!" and "?" stay apart
        parts[3] = item.number.strip().replace("|", "/")
    return "|".join(parts)


def variant_key(asset: str, grading: Grading | None, print_mark: str | None = None) -> str:
    """The variant key: the asset key plus the grade, or ``|raw`` for an ungraded copy; then
    the print mark the title named for an asset without an edition (``|1st edition``)."""
    if print_mark:
        return f"{variant_key(asset, grading)}|{_f(print_mark)}"
    if grading is None:
        return f"{asset}|raw"
    parts = (
        grading.grader,
        grading.grade,
        grading.qualifier,
        grading.label_type,
        grading.autograph_grade,
    )
    return asset + "|" + "|".join(_f(p) for p in parts)
