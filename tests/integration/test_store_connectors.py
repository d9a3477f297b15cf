"""Config-only store connectors against the fake web over real sockets: a TOML file is all a
store needs; crawls return exactly the store's catalogue; prices respect the feed's minor unit."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, select

from rareindex.check import check_connector
from rareindex.crawl import run_connector
from rareindex.fetching import build_fetch_stack
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import raw_records
from rareindex_connectors import Connector
from rareindex_connectors.records import Listing
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.shopify_data import shop_data
from rareindex_fakeweb.sites.woo_data import woo_data
from tests.cli_helpers import run_cli

REGISTRY = load_registry(REPO_ROOT / "connectors")


@pytest.fixture(scope="module")
def local_settings() -> Iterator[Settings]:
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        yield Settings(
            _env_file=None,  # type: ignore[call-arg]
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )


def test_the_shipped_store_connectors_are_short_config_files() -> None:
    for slug in ("cards-shop", "comics-woo", "coins-woo"):
        path = REGISTRY.files[slug]
        assert path.suffix == ".toml"
        assert len(path.read_text().splitlines()) <= 10


def _crawl_all(connector: Connector, db: Engine, settings: Settings, tmp_path: Path):  # type: ignore[no-untyped-def]
    upgrade(db)
    with db.begin() as conn:
        sync_connectors(conn, [connector])

    async def go():  # type: ignore[no-untyped-def]
        stack = build_fetch_stack(settings)
        try:
            return await run_connector(
                connector, db=db, stack=stack, store=RawRecordStore(BlobStore(tmp_path))
            )
        finally:
            await stack.aclose()

    return asyncio.run(go())


def test_a_shopify_crawl_stores_exactly_the_store_s_products(
    sqlite_engine: Engine, local_settings: Settings, tmp_path: Path
) -> None:
    summary = _crawl_all(REGISTRY.get("cards-shop"), sqlite_engine, local_settings, tmp_path)
    truth = {str(p["id"]) for p in shop_data(7).products}
    with sqlite_engine.connect() as conn:
        stored = list(conn.execute(select(raw_records.c.external_id)).scalars())
    assert len(truth) >= 600
    assert sorted(stored) == sorted(truth)
    assert (summary.status, summary.records, summary.dupes) == ("succeeded", len(truth), 0)
    again = _crawl_all(REGISTRY.get("cards-shop"), sqlite_engine, local_settings, tmp_path)
    assert (again.records, again.dupes, again.unchanged) == (0, 0, again.pages)  # all 304s


def test_a_woocommerce_crawl_stores_every_variation_of_a_variable_product(
    sqlite_engine: Engine, local_settings: Settings, tmp_path: Path
) -> None:
    """A variable product's list entry carries only its variations' ids and a price range: the
    crawl fetches each variation by id, and each becomes a listing with its own price."""
    store = woo_data(7, "comics-woo.fake.test")
    connector = REGISTRY.get("comics-woo")
    summary = _crawl_all(connector, sqlite_engine, local_settings, tmp_path)
    variations = {f"{v['parent']}:{v['id']}": v for v in store.variations.values()}
    truth = store.external_ids
    assert truth == {str(p["id"]) for p in store.products} | set(variations)
    assert len(variations) >= 100 and len(store.products) >= 300
    with sqlite_engine.connect() as conn:
        stored = list(conn.execute(select(raw_records.c.external_id)).scalars())
    assert sorted(stored) == sorted(truth)
    assert (summary.status, summary.records) == ("succeeded", len(truth))
    raws = RawRecordStore(BlobStore(tmp_path))
    with sqlite_engine.connect() as conn:
        by_external = {
            raw.external_id: raw
            for raw in raws.get_many(conn, summary.raw_ids, with_snapshot=False).values()
        }
    for external_id, variation in variations.items():
        (listing,) = connector.normalize(by_external[external_id])
        assert isinstance(listing, Listing)
        assert listing.external_id == external_id
        assert listing.price.amount == Decimal(variation["prices"]["price"]).scaleb(-2)
        assert listing.title.endswith(variation["variation"])  # "... - Condition: VF 8.0"
    for product in store.products:
        if product["type"] == "variable":  # a price range is no ask: no listing of its own
            assert connector.normalize(by_external[str(product["id"])]) == []
    again = _crawl_all(connector, sqlite_engine, local_settings, tmp_path)
    assert (again.records, again.dupes, again.unchanged) == (0, 0, again.pages)  # all 304s


def test_woocommerce_minor_units_come_from_the_feed(
    local_settings: Settings, sqlite_engine: Engine, tmp_path: Path
) -> None:
    report = asyncio.run(check_connector(REGISTRY.get("coins-woo"), local_settings))
    assert report.ok and not report.failures
    truth = woo_data(7, "coins-woo.fake.test").by_id
    for listing in report.normalized:
        assert isinstance(listing, Listing) and listing.price.currency == "KWD"
        product = truth[int(listing.external_id.split(":")[0])]
        minor = Decimal(product["prices"]["price"])
        assert listing.price.amount == minor.scaleb(-3)  # three decimals, as the feed says


def test_check_shows_records_from_one_toml_file(tmp_path: Path) -> None:
    connectors_dir = tmp_path / "connectors"
    (connectors_dir / "shopify").mkdir(parents=True)
    (connectors_dir / "shopify" / "my-new-store.toml").write_text(
        'source = "My New Store"\nbase_url = "http://cards-shop.fake.test"\n'
        'currency = "USD"\ncategories = ["sports_card"]\n'
    )
    env = {"RI_CONNECTORS_DIR": str(connectors_dir), "RI_DATA_DIR": str(tmp_path)}
    # The fake web's address is loopback: without the shipped policy entry for *.fake.test the
    # SSRF check refuses it, by configuration and not by a hole in the check.
    refused = run_cli("connectors", "check", "my-new-store", "--fake-web", env=env)
    assert refused.returncode == 1 and "UnsafeURL: 127.0.0.1 is loopback" in refused.stderr
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", connectors_dir / "domains.d")
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", connectors_dir / "domains.json")
    result = run_cli(
        "connectors",
        "check",
        "my-new-store",
        "--fake-web",
        env={"RI_CONNECTORS_DIR": str(connectors_dir), "RI_DATA_DIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert "my-new-store: fetched 25 raw records (api 1/1); normalized to" in result.stdout
    assert "listing" in result.stdout and "USD" in result.stdout


def test_check_warns_when_the_toml_currency_disagrees_with_the_feed(tmp_path: Path) -> None:
    connectors_dir = tmp_path / "connectors"
    (connectors_dir / "woocommerce").mkdir(parents=True)
    (connectors_dir / "woocommerce" / "my-coin-shop.toml").write_text(
        'source = "My Coin Shop"\nbase_url = "http://coins-woo.fake.test"\n'
        'currency = "USD"\ncategories = ["coin"]\n'  # the feed says KWD
    )
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", connectors_dir / "domains.d")
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", connectors_dir / "domains.json")
    result = run_cli(
        "connectors",
        "check",
        "my-coin-shop",
        "--fake-web",
        env={"RI_CONNECTORS_DIR": str(connectors_dir), "RI_DATA_DIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr  # once per run, not once per product
    assert "store.currency_disagreed" in warnings[0]
    assert "configured=USD feed=KWD kept=KWD" in warnings[0]
    assert "KWD" in result.stdout and "USD" not in result.stdout  # the feed's currency wins


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'source = "X"\nbase_url = "http://x.test"\ncurrency = "USD"\ncategories = ["cards"]\n',
            "categories.0: Input should be 'sports_card', 'tcg_card'",
        ),
        (
            'source = "X"\nbase_url = "http://x.test"\ncurrency = "XXX"\ncategories = ["coin"]\n',
            "currency: Value error, 'XXX' is not an ISO-4217 currency",
        ),
        (
            'source = "X"\nbase_url = "http://x.test"\ncurrency = "USD"\n'
            'categories = ["coin"]\ncolections = ["a"]\n',
            "colections: unknown key (did you mean 'collections'?)",
        ),
        (
            'source = "X"\nbase_url = "x.test"\ncurrency = "USD"\ncategories = ["coin"]\n',
            "base_url: Value error, 'x.test' is not an http:// or https:// address; base_url is "
            "the store's address: http:// or https://, a host name, and optionally a market",
        ),
    ],
)
def test_a_bad_store_file_names_file_field_and_valid_values(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "woocommerce").mkdir()
    bad = tmp_path / "woocommerce" / "bad-store.toml"
    bad.write_text(text)
    (tmp_path / "shopify").mkdir()
    (tmp_path / "shopify" / "good-store.toml").write_text(
        'source = "G"\nbase_url = "http://g.test"\ncurrency = "USD"\ncategories = ["coin"]\n'
    )
    registry = load_registry(tmp_path)
    assert [c.meta.id for c in registry] == ["good-store"]
    assert len(registry.problems) == 1
    assert str(bad) in registry.problems[0].message and message in registry.problems[0].message
