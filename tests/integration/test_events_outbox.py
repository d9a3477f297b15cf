"""The outbox on SQLite and PostgreSQL: every event type is written by the transaction of its
change (a rolled-back batch leaves no event, and none is written twice by a replay), with cursors
that count up from 1 without a gap, and pruning raises a horizon that readers are told about.

The records come from the scripted connector of ``test_pipeline_statements`` (its payload spells
out the sales, listings and lots that reach the writers).
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select, update

from rareindex.health import HealthSnapshot
from rareindex.indexer import resolve_pending
from rareindex.normalizer import normalize_raw
from rareindex.storage import BlobStore, RawRecordStore
from rareindex.storage.cert_store import add_pending
from rareindex.storage.events_store import CursorExpired, EventFilter, head, prune, read_after
from rareindex.storage.health_store import save_health
from rareindex.storage.outbox import emit, event, pending
from rareindex.storage.schema import (
    certificate_sightings,
    certificates,
    event_cursor,
    events,
    normalized_records,
    sources,
)
from tests.integration.test_pipeline_statements import (
    ECHO,
    FIRST,
    REGISTRY,
    SECOND,
    ZARD,
    _listing,
    _lot,
    _raw,
    _sale,
    _seen,
    _setup,
    _store,
    _usd,
)


def _events(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(select(events).order_by(events.c.cursor)).mappings()]


def _pipeline(engine: Engine, tmp_path: Path, raws: list[Any]) -> None:
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    ids = _store(engine, store, raws)
    normalize_raw(engine, REGISTRY, ids, blobs=store.blobs)
    resolve_pending(engine)


def test_the_observation_writes_emit_their_events_once(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine)
    _pipeline(any_engine, tmp_path, FIRST)
    first = _events(any_engine)
    kinds = Counter(e["type"] for e in first)
    # FIRST: listings L1 and L3 appear; sales S1, S2, S8 are new
    assert kinds == {"listing.appeared": 2, "sale.recorded": 3}
    assert [e["cursor"] for e in first] == list(range(1, len(first) + 1))
    sale = next(e for e in first if e["payload"].get("external_id") == "S8")
    assert sale["payload"]["price"] == "300.00" and sale["payload"]["currency"] == "USD"
    assert sale["asset_id"] and sale["variant_id"] and sale["category"] == "tcg_card"
    assert sale["stream"] == f"asset:{sale['asset_id']}" and sale["connector_id"] == ECHO.meta.id

    _pipeline(any_engine, tmp_path, SECOND)
    second = _events(any_engine)[len(first) :]
    kinds = Counter(e["type"] for e in second)
    # S3..S7, S9 and the auction sale of lot 8 (a merge of lot-8's sale row) are new sales
    assert kinds["sale.recorded"] == 8
    assert kinds["listing.appeared"] == 2  # L2 listed, L1 relisted
    assert kinds["listing.price_changed"] == 3  # L1 100->120, L2 50->55, L1 120->125
    assert kinds["listing.ended"] == 2  # L1 on day 13, L2 on day 14
    assert kinds["auction_lot.result"] == 2  # lots 7 and 8, sold (as the batch left them)
    changed = [e for e in second if e["type"] == "listing.price_changed"]
    first_change = next(e for e in changed if e["payload"]["new"] == "120.00")
    assert first_change["payload"]["old"] == "100.00"
    assert first_change["payload"]["ratio"] == "1.2"
    relisted = [e for e in second if e["type"] == "listing.appeared" and e["payload"]["relisted"]]
    assert len(relisted) == 1
    lot = next(
        e for e in second if e["type"] == "auction_lot.result" and e["payload"]["lot_number"] == "8"
    )
    assert lot["payload"]["status"] == "sold" and lot["payload"]["price_realised"] == "550.00"
    assert lot["payload"]["hammer_price"] == "480.00"
    cursors = [e["cursor"] for e in _events(any_engine)]
    assert cursors == list(range(1, len(cursors) + 1))

    # a replay of everything changes no row, so it records no event
    before = len(_events(any_engine))
    with any_engine.begin() as conn:
        conn.execute(update(normalized_records).values(status="pending"))
    resolve_pending(any_engine)
    assert len(_events(any_engine)) == before


def test_a_lot_result_that_changes_is_an_event_again(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine)
    page = _lot("lot-1", "A9", "1", status="passed", closes_at=_seen(3).isoformat())
    _pipeline(any_engine, tmp_path, [_raw("p1", _seen(4), [page])])
    _pipeline(any_engine, tmp_path, [_raw("p2", _seen(5), [page])])  # the same result: nothing
    sold = _lot("lot-1", "A9", "1", price_realised=_usd("90.00"), closes_at=_seen(3).isoformat())
    _pipeline(any_engine, tmp_path, [_raw("p3", _seen(6), [sold])])
    results = [e for e in _events(any_engine) if e["type"] == "auction_lot.result"]
    assert [(e["payload"]["status"], e["payload"]["previous_status"]) for e in results] == [
        ("passed", None),
        ("sold", "passed"),
    ]


def test_a_rolled_back_batch_leaves_no_event(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine)
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    ids = _store(any_engine, store, [_raw("r1", _seen(1), [_sale("S1", ZARD, "10.00", 1)])])
    normalize_raw(any_engine, REGISTRY, ids, blobs=store.blobs)

    class Boom(Exception):
        pass

    import rareindex.indexer as indexer

    original = indexer.update_after_batch

    def fail(conn: Any, touched: Any) -> None:
        assert pending(conn) == 1  # the sale's event waits in the transaction...
        raise Boom

    indexer.update_after_batch = fail  # type: ignore[assignment]
    try:
        with pytest.raises(Boom):
            resolve_pending(any_engine)
    finally:
        indexer.update_after_batch = original
    assert _events(any_engine) == []  # ... and went with its rollback
    with any_engine.connect() as conn:
        assert head(conn).last == 0
    resolve_pending(any_engine)  # the retry writes the sale and its event, cursor 1
    assert [(e["cursor"], e["type"]) for e in _events(any_engine)] == [(1, "sale.recorded")]


def test_a_transaction_whose_events_get_no_cursor_does_not_commit(any_engine: Engine) -> None:
    """The cursor is allocated in the commit: if that fails, the change fails with it."""
    from rareindex.storage import upgrade

    upgrade(any_engine)
    with any_engine.begin() as conn:
        conn.execute(event_cursor.delete())
    # whatever the driver raises: the counter has no row to update
    with pytest.raises(Exception), any_engine.begin() as conn:  # noqa: B017
        conn.execute(insert(sources).values(id="s1", name="S1"))
        emit(conn, [event("listing.ended", connector_id="c", payload={})])
    with any_engine.connect() as conn:
        assert conn.execute(select(sources.c.id)).all() == []
        assert conn.execute(select(events.c.cursor)).all() == []


def test_health_changes_are_events(any_engine: Engine, tmp_path: Path) -> None:
    _setup(any_engine)
    now = datetime(2026, 12, 1, tzinfo=UTC)

    def snap(status: str, at: int) -> HealthSnapshot:
        reasons = {"reasons": ["blocked_rate 0.30 > 0.20"]} if status != "UP" else {}
        return HealthSnapshot(
            ECHO.meta.id,
            status,
            now + timedelta(minutes=at),
            details=reasons,  # type: ignore[arg-type]
        )

    for status, at in (("UP", 0), ("UP", 30), ("BROKEN", 60), ("BROKEN", 90), ("UP", 120)):
        with any_engine.begin() as conn:
            save_health(conn, snap(status, at))
    found = [e for e in _events(any_engine) if e["type"] == "connector.health_changed"]
    assert [(e["payload"]["previous_status"], e["payload"]["status"]) for e in found] == [
        (None, "UP"),
        ("UP", "BROKEN"),
        ("BROKEN", "UP"),
    ]
    assert found[1]["stream"] == f"connector:{ECHO.meta.id}"
    assert found[1]["payload"]["reasons"] == ["blocked_rate 0.30 > 0.20"]


def test_a_cert_mismatch_is_an_event(any_engine: Engine, tmp_path: Path) -> None:
    from rareindex.certs.sightings import refresh_mismatches
    from rareindex.storage.cert_store import save_certificates
    from rareindex.storage.observation_store import connector_sources

    _setup(any_engine)
    title = "2000 Pokemon Base Set Blastoise PSA 10 cert 12345678"
    _pipeline(
        any_engine,
        tmp_path,
        [_raw("r1", _seen(1), [{**_listing("L9", "10.00"), "title": title}])],
    )
    with any_engine.begin() as conn:
        source = connector_sources(conn)[ECHO.meta.id]
        [cert_id] = add_pending(conn, [("PSA", "12345678")]).values()
        conn.execute(
            insert(certificate_sightings).values(
                id="cs_1",
                certificate_id=cert_id,
                cert_number="12345678",
                grader="PSA",
                attribution="attributed",
                source_id=source,
                listing_external_id="L9",
                url="http://echo.test/L9",
                seen_at=_seen(1),
                title_hash=_title_hash(title),
            )
        )
    with any_engine.begin() as conn:
        cert = dict(
            conn.execute(select(certificates).where(certificates.c.id == cert_id)).mappings().one()
        )
        save_certificates(
            conn, [{**cert, "status": "verified", "subject": "Charizard", "year": 1999}]
        )
        refresh_mismatches(conn, [cert_id])
    found = [e for e in _events(any_engine) if e["type"] == "cert.mismatch"]
    assert len(found) == 1
    assert found[0]["payload"]["cert_number"] == "12345678"
    assert found[0]["payload"]["mismatch"] and found[0]["payload"]["sighting_id"] == "cs_1"
    assert found[0]["stream"] == f"certificate:{cert_id}"
    with any_engine.begin() as conn:  # the same signal again: no new event
        refresh_mismatches(conn, [cert_id])
    assert len([e for e in _events(any_engine) if e["type"] == "cert.mismatch"]) == 1


def _title_hash(title: str) -> str:
    from rareindex.certs.sightings import title_hash

    return title_hash(title)


def test_filters_pages_and_the_pruning_horizon(any_engine: Engine) -> None:
    from rareindex.storage import upgrade

    upgrade(any_engine)
    for i in range(6):
        with any_engine.begin() as conn:
            emit(
                conn,
                [
                    event(
                        "listing.ended" if i % 2 else "sale.recorded",
                        connector_id=f"c{i % 3}",
                        category="coin" if i < 3 else "comic",
                        payload={"i": i},
                    )
                ],
            )
    with any_engine.connect() as conn:
        assert [e["cursor"] for e in read_after(conn, 0)] == [1, 2, 3, 4, 5, 6]
        assert [e["cursor"] for e in read_after(conn, 2, limit=2)] == [3, 4]
        only = EventFilter(types=("sale.recorded",), categories=("comic",))
        page = read_after(conn, 0, only)
        assert [e["cursor"] for e in page] == [5]
        assert all(only.matches(e) for e in page)
        assert [e["cursor"] for e in read_after(conn, 0, EventFilter(connectors=("c1",)))] == [2, 5]
        assert page[0]["stream"] == "category:comic"
    old = datetime.now(UTC) - timedelta(days=30)
    with any_engine.begin() as conn:
        conn.execute(update(events).where(events.c.cursor <= 3).values(created_at=old))
        result = prune(conn, before=datetime.now(UTC) - timedelta(days=7))
    assert (result.deleted, result.pruned_through) == (3, 3)
    with any_engine.connect() as conn:
        with pytest.raises(CursorExpired) as expired:
            read_after(conn, 2)
        assert expired.value.oldest_cursor == 4
        assert [e["cursor"] for e in read_after(conn, 3)] == [4, 5, 6]
        assert head(conn).last == 6


def test_the_prune_command_keeps_the_retention(any_engine: Engine, tmp_path: Path) -> None:
    from rareindex.storage import upgrade
    from tests.cli_helpers import invoke_cli

    upgrade(any_engine)
    for i in range(4):
        with any_engine.begin() as conn:
            emit(conn, [event("listing.ended", connector_id="c", payload={"i": i})])
    with any_engine.begin() as conn:
        ten_days = datetime.now(UTC) - timedelta(days=10)
        conn.execute(update(events).where(events.c.cursor <= 2).values(created_at=ten_days))
    env = {
        "RI_DATABASE_URL": any_engine.url.render_as_string(hide_password=False),
        "RI_DATA_DIR": str(tmp_path),
        "RI_EVENTS_RETENTION_DAYS": "30",
    }
    kept = invoke_cli("events", "prune", env=env)
    assert kept.returncode == 0, kept.stderr
    assert "pruned 0 events older than 30 days" in kept.stdout
    done = invoke_cli("events", "prune", "--days", "7", env=env)
    assert done.returncode == 0, done.stderr
    assert "pruned 2 events older than 7 days; oldest cursor kept: 3" in done.stdout
    listed = invoke_cli("events", "list", "--after", "2", env=env)
    assert [line.count('"cursor"') for line in listed.stdout.splitlines()] == [1, 1]
    expired = invoke_cli("events", "list", "--after", "1", env=env)
    assert expired.returncode == 2 and "retention horizon" in expired.stdout


def test_an_estimate_moving_beyond_the_threshold_is_an_event(
    any_engine: Engine, tmp_path: Path
) -> None:
    from datetime import date

    from rareindex.pricing.build import PricingResult
    from rareindex.pricing.estimates import Estimate
    from rareindex.storage.pricing_store import write_result
    from rareindex.storage.schema import asset_variants

    _setup(any_engine)
    _pipeline(any_engine, tmp_path, FIRST)
    with any_engine.connect() as conn:
        variant, asset = conn.execute(
            select(asset_variants.c.id, asset_variants.c.asset_id).limit(1)
        ).one()

    def priced(value: float) -> PricingResult:
        estimate = Estimate(
            variant, asset, date(2026, 4, 10), value, value * 0.8, value * 1.2, "USD",
            Decimal(str(value)), Decimal(str(value * 0.8)), Decimal(str(value * 1.2)),
            5, date(2026, 4, 1), date(2026, 4, 9), 0.2, "medium",
        )  # fmt: skip
        return PricingResult(as_of=datetime(2026, 4, 10, tzinfo=UTC), estimates={variant: estimate})

    for value in (100.0, 105.0, 130.0, 128.0):  # first, +5 %, +23.8 %, -1.5 %
        with any_engine.begin() as conn:
            write_result(conn, priced(value), indices=[])
    moved = [e for e in _events(any_engine) if e["type"] == "estimate.moved"]
    assert len(moved) == 1
    assert moved[0]["payload"]["old"] == "105.00" and moved[0]["payload"]["new"] == "130.00"
    assert moved[0]["variant_id"] == variant and moved[0]["category"] == "tcg_card"
    assert moved[0]["payload"]["ratio"] == "1.238095"


def test_a_rolled_back_health_check_or_pricing_leaves_no_event(
    any_engine: Engine, tmp_path: Path
) -> None:
    """The other writers go through the same commit listener: their events live and die with
    their transaction."""
    from rareindex.pricing.build import PricingResult
    from rareindex.storage.pricing_store import write_result

    _setup(any_engine)

    class Boom(Exception):
        pass

    snapshot = HealthSnapshot(ECHO.meta.id, "BROKEN", datetime(2026, 12, 1, tzinfo=UTC))
    with pytest.raises(Boom), any_engine.begin() as conn:
        save_health(conn, snapshot)
        assert pending(conn) == 1
        raise Boom
    with pytest.raises(Boom), any_engine.begin() as conn:
        write_result(conn, PricingResult(as_of=datetime(2026, 12, 1, tzinfo=UTC)), indices=[])
        emit(conn, [event("estimate.moved", variant_id="v", payload={})])
        raise Boom
    assert _events(any_engine) == []
    with any_engine.begin() as conn:  # and the next transaction starts with nothing waiting
        assert pending(conn) == 0
        save_health(conn, snapshot)
    assert [(e["cursor"], e["type"]) for e in _events(any_engine)] == [
        (1, "connector.health_changed")
    ]
