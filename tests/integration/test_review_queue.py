"""The review queue on SQLite and PostgreSQL, from the resolve stage to a decision through the
CLI and the admin API: a sale or a listing priced beyond its limit against the variant's
reference (the median of its recent sales before an index exists, its estimate after) is
quarantined — stored, out of the index, ``quarantined`` in the multi-currency views; accepting
it puts it into the index at once (and emits ``review.accepted``), rejecting it keeps it, marked;
a replay keeps every decision; a category's limit is the operator's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import structlog
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select, text, update
from typer.testing import CliRunner, Result

from rareindex.api import create_app
from rareindex.cli import _common, app
from rareindex.health import RunRecord, assess
from rareindex.indexer import resolve_pending
from rareindex.normalizer import normalize_raw
from rareindex.settings import Settings
from rareindex.storage import BlobStore, RawRecordStore, make_engine
from rareindex.storage.health_store import load_health_inputs
from rareindex.storage.pricing_store import rebuild, stored_estimate
from rareindex.storage.review_store import list_items
from rareindex.storage.schema import (
    events,
    normalized_records,
    price_observations,
    priced_sales,
    review_items,
)
from rareindex.storage.tokens import create_token
from tests.integration.test_pipeline_statements import (
    REGISTRY,
    ZARD,
    _listing,
    _raw,
    _sale,
    _seen,
    _setup,
    _store,
)

TITLE = f"{ZARD} PSA 10"


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    yield
    structlog.reset_defaults()


def _pipeline(engine: Engine, tmp_path: Path, name: str, day: int, records: list[Any]) -> Any:
    store = RawRecordStore(BlobStore(tmp_path / "blobs"))
    ids = _store(engine, store, [_raw(name, _seen(day), records)])
    normalize_raw(engine, REGISTRY, ids, blobs=store.blobs)
    return resolve_pending(engine)


def cli(engine: Engine, tmp_path: Path, *args: str) -> Result:
    env = {
        "RI_DATABASE_URL": engine.url.render_as_string(hide_password=False),
        "RI_DATA_DIR": str(tmp_path),
        "RI_LOG_LEVEL": "warning",
        "LOGNAME": "alice",
    }
    created: list[Engine] = []

    def tracked(url: str, **kwargs: Any) -> Engine:
        made = make_engine(url, **kwargs)
        created.append(made)
        return made

    with mock.patch.object(_common, "make_engine", tracked):
        result = CliRunner().invoke(app, list(args), env=env)
    for made in created:
        made.dispose()
    return result


def _item(engine: Engine, **where: Any) -> dict[str, Any]:
    with engine.connect() as conn:
        query = select(review_items)
        for key, value in where.items():
            query = query.where(review_items.c[key] == value)
        return dict(conn.execute(query).mappings().one())


def _in_index(engine: Engine, sale_id: str) -> bool:
    with engine.connect() as conn:
        found = conn.execute(
            select(priced_sales.c.sale_id).where(priced_sales.c.sale_id == sale_id)
        )
        return found.first() is not None


def _view_flag(engine: Engine, view: str, row_id: str) -> bool:
    with engine.connect() as conn:
        value = conn.execute(
            text(f"SELECT quarantined FROM {view} WHERE id = :id"),  # noqa: S608 - a test's own
            {"id": row_id},
        ).scalar_one()
    return bool(value)


def test_quarantine_accept_reject_through_the_cli_and_the_api(
    any_engine: Engine, tmp_path: Path
) -> None:
    engine = any_engine
    _setup(engine)
    normal = [
        _sale(f"N{i}", TITLE, p, i) for i, p in enumerate(("100", "96", "104", "100", "99"), 1)
    ]
    summary = _pipeline(engine, tmp_path, "week1", 5, normal)
    assert summary.quarantined == 0
    assert list_items(engine) == []

    # before any index: the reference is the median of the variant's recent sales (100)
    _pipeline(engine, tmp_path, "dear", 6, [_sale("HIGH", TITLE, "450", 6)])
    high = _item(engine, kind="sale")
    assert (high["reason"], high["reference_basis"]) == ("above_limit", "median")
    assert (Decimal(high["reference"]), Decimal(high["ratio"])) == (Decimal("100"), Decimal("4.5"))
    assert high["status"] == "pending" and high["category"] == "tcg_card"
    assert _view_flag(engine, "sales_multi_currency", high["sale_id"])

    # the index built now leaves the quarantined sale out; its estimate rests on the others
    rebuild(engine)
    assert not _in_index(engine, high["sale_id"])
    with engine.connect() as conn:
        before = stored_estimate(conn, high["variant_id"])
    assert before is not None and before.n_sales == 5

    # with an estimate, the reference is the estimate: an ask below a third of it is held too
    _pipeline(engine, tmp_path, "cheap", 7, [_listing("L9", "20"), _sale("OK", TITLE, "101", 7)])
    ask = _item(engine, kind="ask")
    assert (ask["reason"], ask["reference_basis"]) == ("below_limit", "estimate")
    assert ask["listing_id"] and _view_flag(engine, "listings_multi_currency", ask["listing_id"])
    assert len(list_items(engine)) == 2  # the sale at 101 is within its limit

    # the CLI lists the queue and accepts the sale: into the index now, with an event
    listed = cli(engine, tmp_path, "review", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert {i["id"] for i in json.loads(listed.stdout)} == {high["id"], ask["id"]}
    accepted = cli(
        engine, tmp_path, "review", "accept", high["id"], "--reason", "a real sale, checked"
    )
    assert accepted.exit_code == 0, accepted.output
    decided = _item(engine, id=high["id"])
    assert (decided["status"], decided["decided_by"], decided["decision_reason"]) == (
        "accepted",
        "user:alice",
        "a real sale, checked",
    )
    assert decided["decided_at"] is not None
    assert _in_index(engine, high["sale_id"])
    assert not _view_flag(engine, "sales_multi_currency", high["sale_id"])
    with engine.connect() as conn:
        after = stored_estimate(conn, high["variant_id"])
        emitted = conn.execute(
            select(events.c.payload).where(events.c.type == "review.accepted")
        ).scalar_one()
    assert after is not None and after.n_sales == before.n_sales + 2  # the accepted + "OK"
    assert emitted["review_id"] == high["id"] and emitted["decided_by"] == "user:alice"
    again = cli(engine, tmp_path, "review", "accept", high["id"], "--reason", "twice")
    assert again.exit_code == 1 and "accepted already" in again.stderr

    # the API rejects the ask (admin only), with the token as who; it stays stored and marked
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        data_dir=tmp_path,
        database_url=None,
        broker_url=None,
        gates_url=None,
    )
    client = TestClient(create_app(settings, engine=engine))
    admin = {"Authorization": f"Bearer {create_token(engine, 'ops').token}"}
    reader = {"Authorization": f"Bearer {create_token(engine, 'grafana', role='read').token}"}
    pending = client.get("/api/review", headers=reader).json()["items"]
    assert [i["id"] for i in pending] == [ask["id"]]
    path = f"/api/review/{ask['id']}/reject"
    assert client.post(path, headers=reader, json={"reason": "no"}).status_code == 403
    rejected = client.post(path, headers=admin, json={"reason": "a typo of 200"})
    assert rejected.status_code == 200, rejected.text
    body = rejected.json()
    assert (body["status"], body["decided_by"], body["decision_reason"]) == (
        "rejected",
        "token:ops",
        "a typo of 200",
    )
    conflict = client.post(f"/api/review/{ask['id']}/accept", headers=admin, json={"reason": "x"})
    assert (conflict.status_code, conflict.json()["error"]) == (409, "already_decided")
    unknown = client.post("/api/review/rev_nope/accept", headers=admin, json={"reason": "x"})
    assert (unknown.status_code, unknown.json()["error"]) == (404, "unknown_review_item")
    assert _view_flag(engine, "listings_multi_currency", ask["listing_id"])
    everything = client.get("/api/review?status=all", headers=reader).json()["items"]
    assert {(i["id"], i["status"]) for i in everything} == {
        (high["id"], "accepted"),
        (ask["id"], "rejected"),
    }
    assert client.get("/api/review", headers=reader).json() == {"items": []}

    # a replay of every record keeps every decision and queues nothing twice
    with engine.begin() as conn:
        conn.execute(update(normalized_records).values(status="pending"))
    resolve_pending(engine)
    assert {(i.id, i.status) for i in list_items(engine, status=None)} == {
        (high["id"], "accepted"),
        (ask["id"], "rejected"),
    }
    assert _in_index(engine, high["sale_id"])


def test_a_category_limit_set_by_the_operator(any_engine: Engine, tmp_path: Path) -> None:
    engine = any_engine
    _setup(engine)
    normal = [_sale(f"N{i}", TITLE, p, i) for i, p in enumerate(("100", "96", "104"), 1)]
    _pipeline(engine, tmp_path, "base", 4, normal)
    assert cli(engine, tmp_path, "review", "limit", "tcg_card", "1").exit_code == 2
    limited = cli(engine, tmp_path, "review", "limit", "tcg_card", "5")
    assert limited.exit_code == 0, limited.output
    assert "tcg_card: 5" in cli(engine, tmp_path, "review", "limits").stdout
    _pipeline(engine, tmp_path, "four", 5, [_sale("X4", TITLE, "400", 5)])  # 4x: within 5x
    assert list_items(engine) == []
    _pipeline(engine, tmp_path, "six", 6, [_sale("X6", TITLE, "600", 6)])
    [item] = list_items(engine)
    assert (item.reason, item.limit_factor, item.ratio) == ("above_limit", Decimal(5), Decimal(6))
    text_list = cli(engine, tmp_path, "review", "list")
    assert item.id in text_list.stdout and "1 pending review items" in text_list.stdout


def test_an_anomaly_within_the_limit_is_quarantined_and_accepting_it_overrides_the_flag(
    any_engine: Engine, tmp_path: Path
) -> None:
    engine = any_engine
    _setup(engine)
    same = [_sale(f"N{i}", TITLE, "100", i) for i in range(1, 6)]
    _pipeline(engine, tmp_path, "flat", 6, same)
    rebuild(engine)
    _pipeline(engine, tmp_path, "odd", 7, [_sale("ODD", TITLE, "250", 7)])  # 2.5x: within 3x
    [item] = list_items(engine)
    assert (item.reason, item.anomaly_reason, item.ratio) == (
        "anomaly",
        "iqr_fence",
        Decimal("2.5"),
    )
    assert not _in_index(engine, str(item.sale_id))
    result = cli(engine, tmp_path, "review", "accept", item.id, "--reason", "a better copy")
    assert result.exit_code == 0, result.output
    assert _in_index(engine, str(item.sale_id))  # in, although the anomaly flag stays


def test_a_jump_in_quarantined_observations_makes_the_connector_degraded(
    any_engine: Engine, tmp_path: Path
) -> None:
    engine = any_engine
    _setup(engine)
    steady = [_sale(f"N{i}", TITLE, "100", i % 20 + 1) for i in range(20)]
    _pipeline(engine, tmp_path, "steady", 21, steady)
    wild = [_sale(f"W{i}", TITLE, str(1000 + i), 22) for i in range(6)]  # 10x the median
    _pipeline(engine, tmp_path, "wild", 22, wild)
    assert len(list_items(engine)) == 6
    with engine.begin() as conn:  # the steady sales: written days before
        conn.execute(
            update(price_observations)
            .where(price_observations.c.source_item_id.like("N%"))
            .values(created_at=datetime.now(UTC) - timedelta(days=3))
        )
        inputs = load_health_inputs(conn, "echo-shop", now=datetime.now(UTC))
    assert inputs is not None and inputs.quarantine is not None
    assert (inputs.quarantine.recent, inputs.quarantine.recent_quarantined) == (6, 6)
    assert (inputs.quarantine.baseline, inputs.quarantine.baseline_quarantined) == (20, 0)
    now = datetime.now(UTC)  # and a healthy run, so that the rows after row 3 are judged
    run = RunRecord(id="run_1", status="succeeded", records=26, finished_at=now)
    snapshot = assess(replace(inputs, runs=(run,), last_success_at=now))
    assert (snapshot.status, snapshot.reasons) == ("DEGRADED", ["quarantine_jump"])
