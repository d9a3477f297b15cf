"""The catalog in the database: brands, sets and assets from ``catalog_item`` records.

:func:`import_catalog` upserts by natural key (brand name, ``(category, set, year)``, asset
key) with stable ids, so importing the same file twice changes nothing and two databases fed the
same catalog agree on every id. :func:`load_catalog` gives the items back (``external_id`` =
asset id) for building a :class:`~rareindex.resolution.Resolver`.

Example:
    >>> import_catalog(engine, items)                     # doctest: +SKIP
    CatalogImport(items=884, assets=884, sets=97, brands=31)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, func, select

from rareindex_connectors import CatalogItem

from ..resolution import asset_key, fold
from .ids import stable_id
from .schema import assets, brands, sets
from .upsert import upsert

__all__ = ["CatalogImport", "asset_ids_by_key", "catalog_version", "import_catalog", "load_catalog"]

BATCH = 2_000


@dataclass(frozen=True, slots=True)
class CatalogImport:
    items: int
    assets: int
    sets: int
    brands: int


def _set_id(item: CatalogItem) -> str | None:
    if not item.set_name:
        return None
    return stable_id("set", item.category, fold(item.set_name), item.year or "")


def _brand_id(item: CatalogItem) -> str | None:
    return stable_id("brd", fold(item.brand)) if item.brand else None


def import_catalog(
    engine: Engine, items: Iterable[CatalogItem], *, conn: Connection | None = None
) -> CatalogImport:
    """Upsert ``items`` as assets (with their sets and brands) in batches; returns the counts.

    Each batch commits on its own, unless ``conn`` is given: then everything joins its
    transaction.
    """
    total = 0
    seen_assets: set[str] = set()
    seen_sets: set[str] = set()
    seen_brands: set[str] = set()
    batch: list[CatalogItem] = []

    def flush() -> None:
        brand_rows: dict[str, dict[str, object]] = {}
        set_rows: dict[str, dict[str, object]] = {}
        asset_rows: dict[str, dict[str, object]] = {}
        for item in batch:
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
            key = asset_key(item)
            asset_rows[key] = {
                "id": stable_id("ast", key),
                "asset_key": key,
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
            }
        if conn is not None:
            _write(conn, brand_rows, set_rows, asset_rows)
        else:
            with engine.begin() as own:
                _write(own, brand_rows, set_rows, asset_rows)
        seen_brands.update(brand_rows)
        seen_sets.update(set_rows)
        seen_assets.update(asset_rows)
        batch.clear()

    for item in items:
        total += 1
        batch.append(item)
        if len(batch) >= BATCH:
            flush()
    flush()
    return CatalogImport(total, len(seen_assets), len(seen_sets), len(seen_brands))


def _write(
    conn: Connection,
    brand_rows: dict[str, dict[str, object]],
    set_rows: dict[str, dict[str, object]],
    asset_rows: dict[str, dict[str, object]],
) -> None:
    upsert(conn, brands, list(brand_rows.values()), conflict=["normalized_name"])
    upsert(conn, sets, list(set_rows.values()), conflict=["id"])
    upsert(
        conn,
        assets,
        list(asset_rows.values()),
        conflict=["asset_key"],
        update=["title", "identifiers", "attributes"],
    )


def load_catalog(conn: Connection) -> list[CatalogItem]:
    """Every asset as a :class:`CatalogItem` whose ``external_id`` is the asset id."""
    rows = conn.execute(select(assets.c.id, assets.c.attributes).order_by(assets.c.id))
    items = []
    for asset_id, attributes in rows:
        if attributes:
            items.append(CatalogItem.model_validate({**attributes, "external_id": asset_id}))
    return items


def asset_ids_by_key(conn: Connection) -> dict[str, str]:
    rows = conn.execute(select(assets.c.asset_key, assets.c.id))
    return {key: asset_id for key, asset_id in rows}


def catalog_version(conn: Connection) -> tuple[int, object]:
    """How many assets and when the newest changed: a re-import that only updates items (same
    count) still makes a cached resolver stale."""
    count, newest = conn.execute(select(func.count(), func.max(assets.c.updated_at))).one()
    return int(count), newest
