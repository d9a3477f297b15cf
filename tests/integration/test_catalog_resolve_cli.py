"""``rareindex catalog``, ``resolve`` and ``replay`` as a user runs them: subprocesses on a real
SQLite file. Catalog files load idempotently and a bad line stops the import with ``file:line`` and
nothing written; ``resolve`` prints one JSON line per title; ``replay`` rebuilds from stored raw
records and a second run changes nothing; every mistake is one ``error:`` line, exit 2.

Independent commands run concurrently (each one starts a Python process) to keep this short.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, func, inspect, select

from rareindex.catalog import read_catalog
from rareindex.crawl import run_connector
from rareindex.errors import ConfigError
from rareindex.fetching import build_fetch_stack
from rareindex.pipeline import process
from rareindex.registry import load_registry
from rareindex.resolution import asset_key
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, make_engine, upgrade
from rareindex.storage.catalog_store import import_catalog
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.ids import stable_id
from rareindex.storage.schema import (
    asset_variants,
    assets,
    brands,
    normalized_records,
    price_observations,
    raw_records,
    sales,
    sets,
)
from rareindex_connectors.records import CatalogItem
from rareindex_connectors.runtime import PolicySet
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.catalog import world_catalog
from rareindex_fakeweb.sites.market_data import market_data
from tests.cli_helpers import REPO, run_cli
from tests.subprocess_env import subprocess_env

CATALOG = world_catalog(7)
ZARD = next(i for i in CATALOG if i.external_id == "pk0012")  # Base Set Charizard, Unlimited
RESOLVE_KEYS = {
    "title",
    "asset_id",
    "external_id",
    "asset_title",
    "variant",
    "method",
    "confidence",
    "reject_reason",
    "flags",
}
UPGRADE_HINT = "rareindex db upgrade"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"RI_DATA_DIR": str(tmp_path), "RI_LOG_LEVEL": "warning"}


def _engine(tmp_path: Path) -> Engine:
    return make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")


def _with_stdin(*args: str, env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    """Like :func:`tests.cli_helpers.run_cli`, with ``stdin`` piped in."""
    return subprocess.run(
        [sys.executable, "-m", "workers", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=subprocess_env({"PYTHONIOENCODING": "utf-8", **env}),
        cwd=REPO,
        timeout=120,
        check=False,
    )


def _together(
    *calls: Callable[[], subprocess.CompletedProcess[str]],
) -> list[subprocess.CompletedProcess[str]]:
    """Run independent commands concurrently; results in call order."""
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [f.result() for f in [pool.submit(call) for call in calls]]


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a refused command (exit 2, nothing on stdout)."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def _count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _rows(engine: Engine, *tables: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of ``tables`` without created/updated/resolved timestamps, sorted."""
    out = {}
    with engine.connect() as conn:
        for table in tables:
            columns = [
                c for c in table.c if c.name not in ("created_at", "updated_at", "resolved_at")
            ]
            rows = [tuple(map(_plain, r)) for r in conn.execute(select(*columns))]
            out[table.name] = sorted(rows, key=repr)
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return value


def _resolved(stdout: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stdout.splitlines()]
    for line in lines:
        assert set(line) == RESOLVE_KEYS, line
    return lines


# --- catalog fake / import / resolve ----------------------------------------------------------

CSV_HEADER = (
    "external_id,title,category,year,brand,set_name,number,subject,"
    "set_code,collector_number,upc,pcgs_number,mint_mark,denomination\n"
)
CSV_ZARD = (
    "z1,1999 Pokémon Base Set Charizard 4/102,tcg_card,1999,Pokémon,Base Set,4/102,Charizard,"
    "BS,4/102,820650123456,,,\n"
)
CSV_COIN = (
    "c1,1870-S Seated Liberty Dollar,coin,1870,,Seated Liberty Dollar,,Seated Liberty Dollar,"
    ",,,6978,S,$1\n"
)


def _only_in(name: str, n: int) -> str:
    return json.dumps(
        {"external_id": f"{name}-{n}", "title": f"2020 Nowhere {name} #{n}", "category": "other"}
    )


def test_catalog_fake_import_csv_errors_and_resolve(tmp_path: Path) -> None:
    env = _env(tmp_path)
    catalog = tmp_path / "catalog.jsonl"
    tiny = tmp_path / "tiny.jsonl"
    tiny.write_text(CATALOG[0].model_dump_json() + "\n")

    # Nothing migrated yet: database commands refuse, naming the fix; a bad option is refused
    # before the database is looked at.
    fake, refused_import, refused_replay, bad_since = _together(
        lambda: run_cli("catalog", "fake", str(catalog), env=env),
        lambda: run_cli("catalog", "import", str(tiny), env=env),
        lambda: run_cli("replay", env=env),
        lambda: run_cli("replay", "--since", "notadate", env=env),
    )
    assert fake.returncode == 0, fake.stderr
    assert fake.stdout.strip() == f"wrote 884 catalog items to {catalog}"
    written = [CatalogItem.model_validate_json(line) for line in catalog.read_text().splitlines()]
    assert written == list(CATALOG)
    for refused in (refused_import, refused_replay):
        assert UPGRADE_HINT in _one_line_error(refused)
        assert refused.stdout == ""
    assert _one_line_error(bad_since) == "error: --since 'notadate' is not a date; use YYYY-MM-DD"
    engine = _engine(tmp_path)
    assert "assets" not in inspect(engine).get_table_names()
    upgrade(engine)

    # The catalog, and next to it two files with a bad line after good ones: both refused whole.
    bad_jsonl = tmp_path / "bad.jsonl"
    bad_jsonl.write_text(
        f"{_only_in('jsonl', 1)}\n\n{_only_in('jsonl', 2)}\n"  # a blank line still counts
        '{"external_id": "x", "title": "T", "category": "tcg_card", "year": "nineteen"}\n'
    )
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text(
        CSV_HEADER
        + "csv-1,2020 Nowhere csv #1,other,2020,,,,,,,,,,\n"
        + "z2,Something,tcg_card,soon,,,,,,,,,,\n"
    )
    first, jsonl_error, csv_error = _together(
        lambda: run_cli("catalog", "import", str(catalog), env=env),
        lambda: run_cli("catalog", "import", str(bad_jsonl), env=env),
        lambda: run_cli("catalog", "import", str(bad_csv), env=env),
    )
    error = _one_line_error(jsonl_error)
    assert error.startswith(f"error: {bad_jsonl}:4: invalid_type at year"), error
    error = _one_line_error(csv_error)
    assert error.startswith(f"error: {bad_csv}:3: invalid_type at year"), error
    assert jsonl_error.stdout == csv_error.stdout == ""
    assert first.returncode == 0, first.stderr
    match = re.fullmatch(
        rf"imported {re.escape(str(catalog))} \(jsonl\): 884 items read; "
        r"assets: 884 inserted, 0 updated, 0 unchanged; (\d+) sets, (\d+) brands",
        first.stdout.strip(),
    )
    assert match, first.stdout
    loaded = _rows(engine, assets, sets, brands)
    assert (len(loaded["assets"]), len(loaded["sets"]), len(loaded["brands"])) == (
        884,
        int(match[1]),
        int(match[2]),
    )
    with engine.connect() as conn:
        keys = {a["external_id"] for a in conn.execute(select(assets.c.attributes)).scalars()}
    assert keys == {i.external_id for i in CATALOG}  # nothing from the refused files

    # A CSV with identifier columns.
    good_csv = tmp_path / "mine.csv"
    good_csv.write_text(CSV_HEADER + CSV_ZARD + CSV_COIN, encoding="utf-8")
    imported = run_cli("catalog", "import", str(good_csv), env=env)
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == (
        f"imported {good_csv} (csv): 2 items read; "
        "assets: 2 inserted, 0 updated, 0 unchanged; 2 sets, 1 brands"
    )
    with engine.connect() as conn:
        query = select(assets.c.year, assets.c.identifiers, assets.c.attributes)
        mine = {r.attributes["external_id"]: r for r in conn.execute(query)}
    assert len(mine) == 886
    assert mine["z1"].year == 1999 and mine["c1"].year == 1870
    assert mine["z1"].identifiers == {
        "set_code": "BS",
        "collector_number": "4/102",
        "upc": "820650123456",
    }
    assert mine["c1"].identifiers == {"pcgs_number": "6978"}
    assert (mine["c1"].attributes["mint_mark"], mine["c1"].attributes["denomination"]) == (
        "S",
        "$1",
    )
    after_csv = _rows(engine, assets, sets, brands)

    # Importing the catalog again adds nothing, while titles resolve from stdin and from a file.
    titles = [
        "Base Set Charizard 4/102",  # only the CSV's Charizard has no edition or finish
        "Charizard 4/130 Base Set 2",
        "",
        "🔥 Base Set Charizard 4/102 Unlimited Holo PSA 9 MINT",
        "2024 Nowhere Nothing #1",
    ]
    titles_file = tmp_path / "titles.txt"
    titles_file.write_text("\n".join(titles) + "\n", encoding="utf-8")
    second, from_stdin, from_file = _together(
        lambda: run_cli("catalog", "import", str(catalog), env=env),
        lambda: _with_stdin("resolve", "-", env=env, stdin="\n".join(titles)),
        lambda: run_cli("resolve", str(titles_file), env=env),
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout.replace(
        "884 inserted, 0 updated, 0 unchanged", "0 inserted, 0 updated, 884 unchanged"
    )
    assert _rows(engine, assets, sets, brands) == after_csv  # no new asset, no id changed
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_file.returncode == 0, from_file.stderr
    assert from_stdin.stdout == from_file.stdout
    bare, base_set_2, unlimited, nothing = _resolved(from_stdin.stdout)

    csv_zard = CatalogItem.model_validate(mine["z1"].attributes)
    assert bare["title"] == "Base Set Charizard 4/102"
    assert bare["asset_id"] == stable_id("ast", asset_key(csv_zard))
    assert bare["asset_title"] == "1999 Pokémon Base Set Charizard 4/102"
    assert bare["external_id"] == "z1"  # the catalog's own id of the item
    assert bare["variant"] == {"grader": None}
    assert bare["method"] in ("identifier", "canonical_key", "fuzzy")
    assert bare["reject_reason"] is None and 0.85 <= bare["confidence"] <= 1.0
    assert base_set_2 == {
        "title": "Charizard 4/130 Base Set 2",
        "asset_id": None,
        "external_id": None,
        "asset_title": None,
        "variant": {"grader": None},
        "method": None,
        "confidence": 0.0,
        "reject_reason": "no_candidate",
        "flags": [],
    }
    assert unlimited["title"] == titles[3]
    assert unlimited["asset_id"] == stable_id("ast", asset_key(ZARD))
    assert unlimited["asset_title"] == ZARD.title
    assert unlimited["variant"] == {"grader": "PSA", "grade": "9"}
    assert unlimited["method"] == "canonical_key" and unlimited["reject_reason"] is None
    assert isinstance(unlimited["flags"], list)
    assert nothing["asset_id"] is None and nothing["reject_reason"] == "no_candidate"


def test_a_csv_error_names_the_physical_line_after_a_multiline_field(tmp_path: Path) -> None:
    """Quoted CSV fields may span lines (titles pasted from a spreadsheet); ``file:line`` must
    still point at the line an editor shows. (The reader the CLI uses, in process: no database.)"""
    path = tmp_path / "multiline.csv"
    path.write_text(
        CSV_HEADER
        + 'z1,"1999 Pokémon Base Set\nCharizard 4/102",tcg_card,1999,,Base Set,4/102,,,,,,,\n'
        + "z2,Something,tcg_card,soon,,,,,,,,,,\n"
    )
    assert path.read_text().splitlines()[3].startswith("z2,")  # line 4
    with pytest.raises(ConfigError) as caught:
        read_catalog(path)
    assert str(caught.value).startswith(f"{path}:4: "), str(caught.value)


# --- replay -----------------------------------------------------------------------------------


def _crawl_market(tmp_path: Path) -> None:
    """card-market's sold items from the fake web into the CLI's database and blob store, plus
    the world catalog, normalized and resolved in process."""
    engine = _engine(tmp_path)
    upgrade(engine)
    registry = load_registry(REPO_ROOT / "connectors")
    market = registry.get("card-market")
    with engine.begin() as conn:
        sync_connectors(conn, registry)
    cli_settings = Settings(_env_file=None, data_dir=tmp_path)
    store = RawRecordStore(BlobStore(cli_settings.blob_dir))  # where the CLI looks for blobs
    with serve_asgi(FakeWeb().app) as base:
        port = urlsplit(base).port
        settings = Settings(
            _env_file=None,
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )

        async def crawl() -> Any:
            stack = build_fetch_stack(settings, policies=PolicySet.from_mapping(FakeWeb.policy()))
            try:
                return await run_connector(market, db=engine, stack=stack, store=store)
            finally:
                await stack.aclose()

        summary = asyncio.run(asyncio.wait_for(crawl(), timeout=120))
    assert summary.status == "succeeded"
    import_catalog(engine, CATALOG)
    with engine.connect() as conn:
        raw_ids = list(conn.execute(select(raw_records.c.id)).scalars())
    process(engine, registry, raw_ids, blobs=store.blobs)
    engine.dispose()


REPLAY_LINE = re.compile(
    r"replay: (\d+) raw records \((\d+) normalized anew, (\d+) already\), (\d+) new records, "
    r"(\d+) failed; resolved (\d+): (\d+) matched, (\d+) unmatched"
)


def test_replay_twice_prints_the_same_and_changes_nothing(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _crawl_market(tmp_path)
    sold = len(market_data(7).sold())
    engine = _engine(tmp_path)
    tables = (normalized_records, sales, price_observations, asset_variants)
    before = _rows(engine, *tables)
    assert len(before["sales"]) == sold

    first, unknown = _together(
        lambda: run_cli("replay", env=env),
        lambda: run_cli("replay", "--connector", "nope", env=env),
    )
    error = _one_line_error(unknown)
    assert error == (
        "error: no connector 'nope'; known connectors: auction-house, card-market, cards-shop, "
        "coins-woo, comics-woo, grading-registry, hobby-news"
    )
    assert first.returncode == 0, first.stderr
    counts = REPLAY_LINE.fullmatch(first.stdout.strip())
    assert counts, first.stdout
    raw, anew, already, records, failed, resolved, matched, unmatched = map(int, counts.groups())
    assert (raw, anew, already, records, failed, resolved) == (sold, 0, sold, 0, 0, sold)
    assert matched + unmatched == sold and matched >= 0.95 * sold
    after_first = _rows(engine, *tables)
    assert after_first == before

    second = run_cli("replay", "--connector", "card-market", "--since", "2020-01-01", env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert _rows(engine, *tables) == after_first
    engine.dispose()
