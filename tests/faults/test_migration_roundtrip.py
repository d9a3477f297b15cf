"""Fault: a migration round trip over payloads the crawler really stores.

Raw records are an archive: their content hash is the SHA-256 of the canonical JSON text the
store wrote. Records with a NUL character (``\\u0000``, which PostgreSQL's ``jsonb`` cannot hold),
non-ASCII text, deep nesting, 64-bit integers and exponent floats are stored through
:class:`~rareindex.storage.RawRecordStore`, the schema goes down to 0001 and up to head again, and
every row must still be readable, hold the same text byte for byte, and hash to its
``content_hash`` — on SQLite and on PostgreSQL (where ``sha256(payload::text)`` is checked in the
database itself).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, insert, text

from rareindex.storage import (
    BlobStore,
    RawRecordStore,
    current_revision,
    downgrade,
    head_revision,
    upgrade,
)
from rareindex.storage.schema import connectors, sources
from rareindex_connectors.records import RawRecordInput, content_hash
from tests.unit.rareindex.api.api_helpers import seed


def _nested(depth: int) -> Any:
    value: Any = {"leaf": "fin \u0000 de la pile"}
    for level in range(depth):
        value = {"level": level, "child": [value]} if level % 2 else [value, level]
    return value


PAYLOADS: list[Any] = [
    {"title": "Pikachu \u0000 Promo", "price": "12.50"},
    {"title": "\u0000", "tags": ["\u0000\u0000", "a\u0000b"]},
    {"title": "Carte Pokémon — ポケモン ✓ 🃏", "rtl": "بطاقة", "sep": "\u2028\u2029"},
    {"b": 1, "a": {"z": True, "y": None, "x": [1, 2.5, -0.0, 1e100]}},
    {"big": 2**63 - 1, "neg": -(2**63), "tiny": 5e-324},
    {"deep": _nested(100)},
    ["a list", "\u0000", {"": ""}],
    "a bare string \u0000",
    None,
]


def _store(engine: Engine, blobs: Path) -> None:
    seed(engine)  # the admin API's index: assets, variants, sales, runs… pointing at each other
    store = RawRecordStore(BlobStore(blobs))
    with engine.begin() as conn:
        conn.execute(insert(sources).values(id="demo", name="Demo"))
        conn.execute(
            insert(connectors).values(
                id="demo-cards",
                source_id="demo",
                version="1",
                parser_version="1",
                refresh_class="ACTIVE",
                meta={},
            )
        )
        records = [
            RawRecordInput(external_id=f"p{i}", url=f"https://s.example/p{i}", payload=payload)
            for i, payload in enumerate(PAYLOADS)
        ]
        records.append(
            RawRecordInput(
                external_id="snap",
                url="https://s.example/snap",
                payload={"title": "with page \u0000"},
                snapshot=b"<html>\x00</html>",
            )
        )
        stored = store.insert_many(
            conn,
            connector_id="demo-cards",
            connector_version="1",
            parser_version="1",
            records=records,
        )
    assert len(stored.raw_ids) == len(records)


def _rows(engine: Engine, blobs: Path) -> dict[str, tuple[str | None, bool]]:
    """Each raw id -> (its payload column's text, whether its content hash still holds)."""
    store = RawRecordStore(BlobStore(blobs))
    postgres = engine.dialect.name == "postgresql"
    query = "SELECT id, payload{}, content_hash FROM raw_records WHERE connector_id = 'demo-cards' "
    query += "ORDER BY id"
    rows: dict[str, tuple[str | None, bool]] = {}
    with engine.connect() as conn:
        for raw_id, as_text, digest in conn.execute(
            text(query.format("::text" if postgres else ""))
        ):
            record = store.get(conn, raw_id)
            holds = content_hash(record.payload, record.snapshot) == digest
            if record.snapshot is None and as_text is not None:
                # The row is the hashed text itself, byte for byte (SQLite: the JSON type's
                # own text, hashed after parsing above).
                holds = holds and (
                    not postgres or hashlib.sha256(as_text.encode()).hexdigest() == digest
                )
            rows[raw_id] = (as_text, holds)
    return rows


def test_downgrade_to_0001_and_upgrade_keeps_every_payload_and_content_hash(
    any_engine: Engine, tmp_path: Path
) -> None:
    blobs = tmp_path / "blobs"
    _store(any_engine, blobs)
    before = _rows(any_engine, blobs)
    assert len(before) == len(PAYLOADS) + 1
    assert all(holds for _, holds in before.values()), before

    downgrade(any_engine, "0001")
    assert current_revision(any_engine) == "0001"
    at_0001 = _rows(any_engine, blobs)
    upgrade(any_engine)
    assert current_revision(any_engine) == head_revision()
    after = _rows(any_engine, blobs)

    broken = sorted(raw_id for raw_id, (_, holds) in after.items() if not holds)
    assert broken == [], f"{len(broken)} of {len(after)} content hashes no longer hold"
    assert after == before  # the same text, byte for byte
    assert at_0001 == before  # and nothing rewritten on the way down either
    if any_engine.dialect.name == "postgresql":
        with any_engine.connect() as conn:
            holding = conn.execute(
                text(
                    "SELECT count(*) FROM raw_records WHERE connector_id = 'demo-cards' "
                    "AND snapshot_ref IS NULL "
                    "AND encode(sha256(convert_to(payload::text, 'UTF8')), 'hex') = content_hash"
                )
            ).scalar_one()
        assert holding == len(PAYLOADS)
