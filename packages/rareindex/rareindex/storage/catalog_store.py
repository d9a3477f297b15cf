"""The catalog in the database: brands, sets and assets from ``catalog_item`` records.

:func:`import_catalog` writes a whole catalog in one transaction. Brands and sets are found by
natural key (brand name; ``(category, set, year)``) with stable ids. An asset is found by its
catalog reference first — ``assets.catalog_ref``, the external id of the item it came from — then
by asset key (see :mod:`.catalog_plan`): a newer dump that fixes a card's name updates that
asset in place (same id, new key, title and subject) instead of adding a second one. Assets
written exactly as stored are left alone, so importing the same file twice changes nothing, and
two databases fed the same catalog agree on every id. :func:`load_catalog` gives the items back
(``external_id`` = asset id; the catalog's own id stays in ``attributes``) for building a
:class:`~rareindex.resolution.Resolver`.

Example:
    >>> import_catalog(engine, items)                     # doctest: +SKIP
    CatalogImport(items=884, inserted=884, updated=0, unchanged=0, sets=97, brands=31)
    >>> import_catalog(engine, items).unchanged           # doctest: +SKIP
    884
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, or_, select, update

from rareindex_connectors.records import CatalogItem

from ..resolution import asset_key, fold
from .catalog_plan import ASSET_COLUMNS, AssetPlan, candidate_ids, plan_assets
from .ids import stable_id
from .schema import assets, brands, sets
from .upsert import upsert

__all__ = [
    "CatalogImport",
    "ImportProgress",
    "asset_ids_by_key",
    "catalog_refs",
    "catalog_version",
    "import_catalog",
    "load_catalog",
]

BATCH = 2_000
"""Rows per write statement."""
LOOKUP = 500
"""Items per lookup of the stored assets they may be (three ``IN`` lists of about this size)."""

ImportProgress = Callable[[str, int, int], None]
"""``(phase, done, total)``: ``matching`` counts items looked up, ``writing`` rows written."""


@dataclass(frozen=True, slots=True)
class CatalogImport:
    """What an import did: items read; assets inserted, updated in place and left unchanged;
    the distinct sets and brands the items name."""

    items: int
    inserted: int
    updated: int
    unchanged: int
    sets: int
    brands: int

    @property
    def assets(self) -> int:
        """The distinct assets the items are."""
        return self.inserted + self.updated + self.unchanged


def _quiet(phase: str, done: int, total: int) -> None:
    pass


def _set_id(item: CatalogItem) -> str | None:
    if not item.set_name:
        return None
    return stable_id("set", item.category, fold(item.set_name), item.year or "")


def _brand_id(item: CatalogItem) -> str | None:
    return stable_id("brd", fold(item.brand)) if item.brand else None


def import_catalog(
    engine: Engine,
    items: Iterable[CatalogItem],
    *,
    conn: Connection | None = None,
    by_external_id: bool = True,
    on_progress: ImportProgress | None = None,
) -> CatalogImport:
    """Write ``items`` as assets (with their sets and brands) in one transaction; the counts.

    ``conn``: join its transaction instead of opening one. ``by_external_id``: the items come
    from one catalog whose external ids name them for good (a catalog file); pass ``False`` for
    items whose ids are only unique per source (a connector's ``catalog_item`` records), which are
    then found by asset key alone and set no reference. A :class:`~rareindex.errors.ConfigError`
    (two assets that would become one) leaves nothing written.
    """
    items = list(items)
    if conn is not None:
        return _import(conn, items, by_external_id, on_progress)
    with engine.begin() as own:
        return _import(own, items, by_external_id, on_progress)


def _import(
    conn: Connection,
    items: list[CatalogItem],
    by_external_id: bool,
    on_progress: ImportProgress | None,
) -> CatalogImport:
    report = on_progress or _quiet
    brand_rows: dict[str, dict[str, object]] = {}
    set_rows: dict[str, dict[str, object]] = {}
    asset_rows: list[dict[str, Any]] = []
    for item in items:
        brand = _brand_id(item)
        if brand and item.brand:
            brand_rows[brand] = {
                "id": brand,
                "name": item.brand,
                "normalized_name": fold(item.brand),
            }
        set_id = _set_id(item)
        if set_id and item.set_name:
            set_rows[set_id] = {
                "id": set_id,
                "brand_id": brand,
                "category": item.category,
                "name": item.set_name,
                "normalized_name": fold(item.set_name),
                "year": item.year,
                "set_code": item.identifiers.set_code,
                "language": item.language,
            }
        asset_rows.append(
            {
                "asset_key": asset_key(item),
                "category": item.category,
                "title": item.title,
                "year": item.year,
                "brand_id": brand,
                "set_id": set_id,
                "number": item.number,
                "subject": item.subject,
                "parallel": item.parallel,
                "edition": item.edition,
                "language": item.language,
                "print_run": item.print_run,
                "identifiers": item.identifiers.model_dump(mode="json", exclude_none=True),
                "attributes": item.model_dump(mode="json", exclude_none=True),
                "catalog_ref": item.external_id if by_external_id else None,
            }
        )
    plan = plan_assets(asset_rows, _stored(conn, asset_rows, report))
    _write(conn, list(brand_rows.values()), list(set_rows.values()), plan, report)
    return CatalogImport(
        items=len(items),
        inserted=len(plan.inserts),
        updated=len(plan.updates),
        unchanged=plan.unchanged,
        sets=len(set_rows),
        brands=len(brand_rows),
    )


def _stored(
    conn: Connection, rows: Sequence[dict[str, Any]], report: ImportProgress
) -> list[dict[str, Any]]:
    """Every stored asset that holds a reference, asset key or first candidate id of ``rows``."""
    columns = [assets.c.id, *(assets.c[c] for c in ASSET_COLUMNS)]
    found: dict[str, dict[str, Any]] = {}
    report("matching", 0, len(rows))
    for start in range(0, len(rows), LOOKUP):
        chunk = rows[start : start + LOOKUP]
        refs = sorted({r["catalog_ref"] for r in chunk if r["catalog_ref"]})
        keys = sorted({r["asset_key"] for r in chunk})
        ids = sorted({candidate_ids(r)[0] for r in chunk})
        where = [assets.c.asset_key.in_(keys), assets.c.id.in_(ids)]
        if refs:
            where.append(assets.c.catalog_ref.in_(refs))
        for row in conn.execute(select(*columns).where(or_(*where))).mappings():
            found[row["id"]] = dict(row)
        report("matching", start + len(chunk), len(rows))
    return list(found.values())


def _write(
    conn: Connection,
    brand_rows: list[dict[str, object]],
    set_rows: list[dict[str, object]],
    plan: AssetPlan,
    report: ImportProgress,
) -> None:
    for start in range(0, len(brand_rows), BATCH):
        upsert(conn, brands, brand_rows[start : start + BATCH], conflict=["normalized_name"])
    for start in range(0, len(set_rows), BATCH):
        upsert(conn, sets, set_rows[start : start + BATCH], conflict=["id"])
    total = len(plan.updates) + len(plan.inserts)
    done = 0
    report("writing", done, total)
    by_id = update(assets).where(assets.c.id == bindparam("b_id"))
    if plan.moving:  # let go of the old keys first, so two assets may swap theirs
        conn.execute(
            by_id.values(asset_key=bindparam("b_key")),
            [{"b_id": i, "b_key": f"moving:{i}"} for i in plan.moving],
        )
    rewrite = by_id.values({c: bindparam(f"b_{c}") for c in ASSET_COLUMNS})
    for start in range(0, len(plan.updates), BATCH):
        batch = plan.updates[start : start + BATCH]
        conn.execute(rewrite, [{f"b_{k}": v for k, v in row.items()} for row in batch])
        done += len(batch)
        report("writing", done, total)
    for start in range(0, len(plan.inserts), BATCH):
        batch = plan.inserts[start : start + BATCH]
        upsert(conn, assets, batch, conflict=["asset_key"])
        done += len(batch)
        report("writing", done, total)


def load_catalog(conn: Connection) -> list[CatalogItem]:
    """Every asset as a :class:`CatalogItem` whose ``external_id`` is the asset id."""
    rows = conn.execute(select(assets.c.id, assets.c.attributes).order_by(assets.c.id))
    items = []
    for asset_id, attributes in rows:
        if attributes:
            items.append(CatalogItem.model_validate({**attributes, "external_id": asset_id}))
    return items


def catalog_refs(conn: Connection) -> dict[str, str]:
    """Asset id -> the external id of the catalog item it came from (its ``catalog_ref``, or
    the id the item carried when it was written by key)."""
    rows = conn.execute(select(assets.c.id, assets.c.catalog_ref, assets.c.attributes))
    refs: dict[str, str] = {}
    for asset_id, ref, attributes in rows:
        found = ref or (attributes or {}).get("external_id")
        if found:
            refs[asset_id] = str(found)
    return refs


def asset_ids_by_key(conn: Connection) -> dict[str, str]:
    rows = conn.execute(select(assets.c.asset_key, assets.c.id))
    return {key: asset_id for key, asset_id in rows}


def catalog_version(conn: Connection) -> tuple[int, object]:
    """How many assets and when the newest changed: a re-import that only updates items (same
    count) still makes a cached resolver stale."""
    count, newest = conn.execute(select(func.count(), func.max(assets.c.updated_at))).one()
    return int(count), newest
