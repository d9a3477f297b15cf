"""Fault: sources send broken payloads — malformed, truncated, wrongly encoded and oversized — to
a worker process crawling them, at both levels a payload comes in:

* **feed pages** (a store's paged JSON): cards-shop's page 2 holds two malformed products (a
  ``variants`` that is not a list, a float price) and its page 4 is cut off mid-object;
  comics-woo's page 2 is Latin-1 bytes declared UTF-8; coins-woo's only page is larger than the
  host's ``max_response_bytes`` (64 KiB here);
* **item pages** (card-market's ``/itm/<id>`` HTML): one with malformed ``__NEXT_DATA__`` JSON, one
  cut off mid-script, one in Latin-1 declared UTF-8, one over the size limit, and one whose
  ``__NEXT_DATA__`` is valid JSON nested 5,000 arrays deep (``too_deep``: classified without
  recursing, where a recursive decoder crashed the run). (Its search is limited to the first
  page of 50 items.)

What must hold (invariant 6 of docs/architecture.md, fail closed): the worker never crashes and
every run is closed; a broken page is never skipped silently and never becomes a good record. A
broken *feed page* ends its run ``failed`` with a reason from the closed vocabulary
(``parse_error``, with ``invalid_json`` / ``encoding_error`` and the page in the error;
``permanent`` for the oversized one), keeping what was committed before it, with the cursor left on
the broken page so the next run fetches it again. A malformed *record* and a broken *item page* are
kept as raw records and counted by the normalizer as ``failed`` rows in ``normalized_records`` with
a reason from the closed vocabulary. Every raw record gets a normalized row.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from sqlalchemy import Engine, func, select

from rareindex.normalizer import NORMALIZE_FAILURES
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.normalized_store import unnormalized_raw_ids
from rareindex.storage.queue import enqueue_run
from rareindex.storage.runs import connector_cursor
from rareindex.storage.schema import connector_runs, normalized_records, raw_records
from rareindex_connectors.errors import ParseReason
from rareindex_fakeweb.sites.woo_data import woo_data

from .conftest import FaultyWeb, OwnRedis, Processes, connectors_dir, fleet_env, wait_until

SHOP, COMICS, COINS = "cards-shop.fake.test", "comics-woo.fake.test", "coins-woo.fake.test"
MARKET = "market.fake.test"
LIMIT = 64 * 1024
POLICY = {"domains": {h: {"max_response_bytes": LIMIT} for h in (COINS, MARKET)}}
BROKEN_ITEMS = ("malformed", "truncated", "mis-encoded", "oversized", "deep")
VOCABULARY = {r.value for r in ParseReason} | set(NORMALIZE_FAILURES)


def _json_type(headers: dict[str, str]) -> dict[str, str]:
    return {"content-type": headers.get("content-type", "application/json; charset=utf-8")}


def _latin1(text: str) -> bytes:
    """``text`` with an accented word, as Latin-1 bytes (a page that says UTF-8 and is not)."""
    return text.replace("<title>", "<title>Pokémon ", 1).encode("latin-1", errors="replace")


class Faults:
    """The damaged copies, made from what each site really serves."""

    def __init__(self, web: FaultyWeb) -> None:
        self.web = web
        self.items: dict[str, str] = {}  # item id -> what is wrong with its page

    async def shop(self, path: str, query: str) -> tuple[int, dict[str, str], bytes] | None:
        status, headers, body = await self.web.original(SHOP, f"{path}?{query}")
        if "page=2&" in f"{query}&":
            page = json.loads(body)
            page["products"][0]["variants"] = "oops"
            page["products"][1]["variants"][0]["price"] = 12.5
            return status, _json_type(headers), json.dumps(page).encode()
        if "page=4&" in f"{query}&":
            return status, _json_type(headers), body[: len(body) // 2]
        return None

    async def comics(self, path: str, query: str) -> tuple[int, dict[str, str], bytes] | None:
        status, headers, body = await self.web.original(COMICS, f"{path}?{query}")
        if "page=2&" in f"{query}&":
            text = body.decode().replace('"name":"', '"name":"Édition ', 1)
            text = text.replace('"name": "', '"name": "Édition ', 1)
            headers = {**headers, "content-type": "application/json; charset=utf-8"}
            return status, headers, text.encode("latin-1", errors="replace")
        return None

    async def coins(self, path: str, query: str) -> tuple[int, dict[str, str], bytes] | None:
        status, headers, body = await self.web.original(COINS, f"{path}?{query}")
        return status, _json_type(headers), body + b" " * (LIMIT + 1)  # valid JSON, too big

    async def market(self, path: str, query: str) -> tuple[int, dict[str, str], bytes] | None:
        if path == "/search":
            if "page=1" not in query.split("&"):
                query = re.sub(r"page=\d+", "page=99", query)  # past the end: no more results
            status, headers, body = await self.web.original(MARKET, f"{path}?{query}")
            if not self.items:
                found = re.findall(rb'data-listingid="(\d+)"', body)
                self.items = {
                    found[i].decode(): fault
                    for i, fault in zip((3, 7, 11, 15, 19), BROKEN_ITEMS, strict=True)
                }
            return status, {"content-type": headers["content-type"]}, body
        fault = self.items.get(path.removeprefix("/itm/"))
        if fault is None:
            return None
        status, headers, body = await self.web.original(MARKET, path)
        kind = {"content-type": "text/html; charset=utf-8"}
        script = body.index(b"__NEXT_DATA__")
        if fault == "malformed":
            return status, kind, body.replace(b'"title":', b'"title" ', 1)
        if fault == "truncated":
            return status, kind, body[: script + (len(body) - script) // 2]
        if fault == "mis-encoded":
            return status, kind, _latin1(body.decode())
        if fault == "deep":  # valid JSON, 5,000 arrays deep: past orjson's and Python's limits
            opened = body.index(b">", script) + 1
            closed = body.index(b"</script>", opened)
            return status, kind, body[:opened] + b"[" * 5000 + b"]" * 5000 + body[closed:]
        return status, kind, body.replace(b"</body>", b"<!--" + b"x" * LIMIT + b"--></body>")


def test_broken_payloads_are_kept_counted_and_never_crash_a_worker(
    own_redis: OwnRedis, pg_url: str, pg_engine: Engine, faulty_web: FaultyWeb, tmp_path: Path
) -> None:
    faults = Faults(faulty_web)
    faulty_web.faults.update(
        {SHOP: faults.shop, COMICS: faults.comics, COINS: faults.coins, MARKET: faults.market}
    )
    stores = {"cards-shop": {"page_size": 100}, "comics-woo": {"page_size": 100}, "coins-woo": {}}
    root = connectors_dir(tmp_path, stores, extra=json.dumps(POLICY))
    market = tmp_path / "connectors" / "api"
    market.mkdir()
    (market / "card-market.py").write_text(
        (REPO_ROOT / "connectors" / "api" / "card-market.py").read_text()
    )
    upgrade(pg_engine)
    slugs = ("cards-shop", "comics-woo", "coins-woo", "card-market")
    with pg_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        run_ids = {slug: enqueue_run(conn, slug, "incremental") for slug in slugs}
    fleet = Processes(
        tmp_path,
        fleet_env(
            database_url=pg_url,
            broker_url=own_redis.url,
            connectors_dir=root,
            data_dir=tmp_path / "fleet",
            web_port=faulty_web.port,
        ),
    )
    broker = RedisBroker(url=own_redis.url)  # type: ignore[no-untyped-call]

    def settled() -> bool:
        with pg_engine.connect() as conn:
            open_runs = conn.execute(
                select(func.count()).where(connector_runs.c.status.in_(("queued", "running")))
            ).scalar_one()
            raw = conn.execute(select(func.count()).select_from(raw_records)).scalar_one()
            return open_runs == 0 and raw > 0 and unnormalized_raw_ids(conn, limit=1) == []

    try:
        broker.declare_queue("crawl")
        for run_id in run_ids.values():
            broker.enqueue(
                dramatiq.Message(
                    queue_name="crawl", actor_name="crawl_run", args=(run_id,), kwargs={},
                    options={},
                )
            )  # fmt: skip
        fleet.start("worker", "worker", "--threads", "2")
        wait_until(settled, timeout=90, what="every run closed and every raw record normalized")
        assert fleet.alive(), fleet.logs()
    finally:
        broker.close()
        fleet.stop_all()
    assert fleet.running["worker"].returncode == 0, fleet.logs()

    with pg_engine.connect() as conn:
        runs = {r.connector_id: r for r in conn.execute(select(connector_runs)).all()}
        raw = conn.execute(
            select(
                raw_records.c.connector_id, raw_records.c.external_id, raw_records.c.snapshot_ref
            )
        ).all()
        rows = conn.execute(
            select(
                normalized_records.c.connector_id,
                normalized_records.c.raw_id,
                normalized_records.c.status,
                normalized_records.c.reject_reason,
                raw_records.c.external_id,
            ).join(raw_records, raw_records.c.id == normalized_records.c.raw_id)
        ).all()
    kept = {(c, e) for c, e, _ in raw}

    # Feed pages: the run fails closed at the broken page, keeping what came before it.
    shop, comics, coins = runs["cards-shop"], runs["comics-woo"], runs["coins-woo"]
    assert (shop.status, shop.failure_reason) == ("failed", "parse_error")
    assert "page=4" in shop.error and "truncated" in shop.error  # not a vague invalid_json
    assert connector_cursor(pg_engine, "cards-shop") == {"collection": 0, "page": 4, "sweeps": 0}
    assert len([k for k in kept if k[0] == "cards-shop"]) == 300  # pages 1-3
    assert (comics.status, comics.failure_reason) == ("failed", "parse_error")
    assert "page=2" in comics.error and "encoding_error" in comics.error
    page_1 = woo_data(7, COMICS).products[:100]  # with the variations of its variable products
    variations = {f"{p['id']}:{v['id']}" for p in page_1 for v in p["variations"]}
    assert (
        variations
        and {e for c, e in kept if c == "comics-woo"} == {str(p["id"]) for p in page_1} | variations
    )
    assert (coins.status, coins.failure_reason) == ("failed", "permanent")
    assert "ResponseTooLarge" in coins.error
    assert not [k for k in kept if k[0] == "coins-woo"]
    assert connector_cursor(pg_engine, "coins-woo") is None

    # Malformed records in a good page: kept, and failed by the normalizer with their reason.
    failed = {(c, e): reason for c, _, status, reason, e in rows if status == "failed"}
    shop_failures = {e: r for (c, e), r in failed.items() if c == "cards-shop"}
    assert len(shop_failures) == 2, shop_failures
    assert set(shop_failures.values()) <= VOCABULARY

    # Broken item pages: kept as raw records and failed by the normalizer, never good records.
    assert runs["card-market"].status == "succeeded"
    broken = dict(faults.items)
    assert len(broken) == 5
    market_kept = {e for c, e in kept if c == "card-market"}
    assert len(market_kept) == 50 and set(broken) <= market_kept, broken
    market_failures = {e: r for (c, e), r in failed.items() if c == "card-market"}
    assert set(market_failures) == set(broken), (market_failures, broken)
    assert set(market_failures.values()) <= VOCABULARY

    # Every raw record has its normalized row(s), and every failure reason is in the vocabulary.
    assert len({raw_id for _, raw_id, *_ in rows}) == len(raw)
    reasons = {reason for *_, status, reason, _ in rows if status in ("failed", "rejected")}
    assert reasons <= VOCABULARY, reasons
