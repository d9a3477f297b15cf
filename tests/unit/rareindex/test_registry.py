"""The registry loads connectors from files, refuses broken ones with one clear line, and mirrors
them into the database without touching operator-owned state."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sqlalchemy import Engine, update

from rareindex.errors import ConfigError
from rareindex.registry import load_registry
from rareindex.storage import upgrade
from rareindex.storage.connector_rows import list_connectors, source_slug, sync_connectors
from rareindex.storage.schema import connectors

CONNECTOR = textwrap.dedent(
    """
    from rareindex_connectors import ConnectorHealth, ConnectorMeta

    class CoinShop:
        meta = ConnectorMeta(id={slug!r}, source="Coin Shop & Co", engines=("api",),
                             categories=("coin",), capabilities=("listing",),
                             refresh_class={refresh!r})
        version = "1"
        parser_version = "1"

        async def crawl(self, ctx):
            if False:
                yield None

        def normalize(self, raw):
            return []

        async def health_check(self, ctx):
            return ConnectorHealth(status="UP")

        async def lookup(self, url, ctx):
            return []

    connector = CoinShop()
    """
)


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_loads_code_connectors_and_ignores_policy_files(tmp_path: Path) -> None:
    write(tmp_path, "domains.json", "{}")
    write(tmp_path, "domains.d/coin-shop.json", "{}")
    write(tmp_path, "api/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="HOT"))
    write(tmp_path, "api/_helpers.py", "raise RuntimeError('private helpers are not connectors')")
    registry = load_registry(tmp_path)
    assert [c.meta.id for c in registry] == ["coin-shop"]
    assert registry.get("coin-shop").meta.refresh_class == "HOT"


@pytest.mark.parametrize(
    ("relative", "text", "message"),
    [
        (
            "api/coin-shop.py",
            CONNECTOR.format(slug="other", refresh="HOT"),
            "connector id 'other' must equal the file name 'coin-shop'",
        ),
        (
            "api/coin-shop.py",
            CONNECTOR.format(slug="coin-shop", refresh="SOMETIMES"),
            "refresh_class",
        ),
        ("api/coin-shop.py", "x = 1\n", "define a module-level `connector = YourConnector()`"),
        ("api/coin-shop.py", "connector = object()\n", "not a Connector; missing meta"),
        ("api/coin-shop.py", "import nonexistent_module\n", "ModuleNotFoundError"),
        ("api/coin-shop.py", "def broken(:\n", "SyntaxError"),
        (
            "ebay/coin-shop.toml",
            'base_url = "https://x.example"\n',
            "no config-only connector kind 'ebay'; installed kinds: shopify, woocommerce",
        ),
        (
            "shopify/coin-shop.toml",
            'base_url = "https://x.example"\n',
            "StoreConfig: source: Field required",
        ),
    ],
)
def test_broken_connector_files_are_one_line_problems_and_others_still_load(
    tmp_path: Path, relative: str, text: str, message: str
) -> None:
    path = write(tmp_path, relative, text)
    write(tmp_path, "api/good-shop.py", CONNECTOR.format(slug="good-shop", refresh="HOT"))
    registry = load_registry(tmp_path)
    assert [c.meta.id for c in registry] == ["good-shop"]
    assert len(registry.problems) == 1
    problem = registry.problems[0]
    assert problem.path == path
    assert message in problem.message and str(path) in problem.message
    assert "\n" not in problem.message
    with pytest.raises(ConfigError, match="good-shop|" + path.stem):
        registry.raise_for_problems()


def test_duplicate_slugs_and_unknown_lookups(tmp_path: Path) -> None:
    write(tmp_path, "api/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="HOT"))
    registry = load_registry(tmp_path)
    with pytest.raises(ConfigError, match="known connectors: coin-shop"):
        registry.get("coin-shp")
    write(tmp_path, "firecrawl/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="HOT"))
    problems = load_registry(tmp_path).problems
    assert len(problems) == 1 and "duplicate connector id 'coin-shop'" in problems[0].message


def test_missing_directory_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="RI_CONNECTORS_DIR"):
        load_registry(tmp_path / "nope")


def test_sync_is_idempotent_and_keeps_operator_state(tmp_path: Path, sqlite_engine: Engine) -> None:
    upgrade(sqlite_engine)
    root = tmp_path / "connectors"
    write(root, "api/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="HOT"))
    with sqlite_engine.begin() as conn:
        assert sync_connectors(conn, load_registry(root)) == 1
        conn.execute(update(connectors).values(status="paused", cursor={"page": 7}))
    write(root, "api/coin-shop.py", CONNECTOR.format(slug="coin-shop", refresh="ARCHIVE"))
    with sqlite_engine.begin() as conn:
        sync_connectors(conn, load_registry(root))
        sync_connectors(conn, load_registry(root))
        rows = list_connectors(conn)
    assert len(rows) == 1
    row = rows[0]
    assert (row.id, row.source_id, row.refresh_class) == ("coin-shop", "coin-shop-co", "ARCHIVE")
    assert row.status == "paused" and row.cursor == {"page": 7} and row.runs == 0


def test_source_slug() -> None:
    assert source_slug("Heritage Auctions") == "heritage-auctions"
    assert source_slug("  PSA / Collectors  ") == "psa-collectors"
