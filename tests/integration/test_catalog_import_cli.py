"""``rareindex catalog import PATH`` as a user runs it (subprocesses), on SQLite and PostgreSQL:
the real Pokémon TCG sample imports whole, a second import changes nothing, a newer dump updates
its assets in place, a bad card names its file, card and field with nothing written, ``--format``
forces a reader, and a JSON lines file may give identifiers at the top level."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from rareindex.settings import REPO_ROOT
from rareindex.storage import make_engine
from rareindex.storage.schema import assets, brands, sets
from tests.cli_helpers import invoke_cli, run_cli

SAMPLE = REPO_ROOT / "fixtures/catalogs/pokemon-tcg-sample"
KNOWN = "known formats: csv, jsonl, pokemon-tcg"


@pytest.fixture(params=["sqlite", "postgresql"])
def cli_db(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[dict[str, str], Engine]]:
    """The CLI's environment and an engine on the same, migrated, database."""
    env = {"RI_DATA_DIR": str(tmp_path), "RI_LOG_LEVEL": "warning"}
    if request.param == "postgresql":
        engine: Engine = request.getfixturevalue("pg_engine")
        env["RI_DATABASE_URL"] = request.getfixturevalue("pg_url")
    else:
        engine = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    upgraded = invoke_cli("db", "upgrade", env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    yield env, engine
    engine.dispose()


def _together(*calls: Callable[[], subprocess.CompletedProcess[str]]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        return [f.result() for f in [pool.submit(call) for call in calls]]


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _error(result: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line of a refused command (exit 2, nothing on stdout)."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0].removeprefix("error: ")


def _counts(path: Path, fmt: str, read: int, ins: int, upd: int, same: int, tail: str) -> str:
    return (
        f"imported {path} ({fmt}): {read} items read; "
        f"assets: {ins} inserted, {upd} updated, {same} unchanged; {tail}"
    )


def _rows(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of assets, sets and brands, timestamps included."""
    with engine.connect() as conn:
        return {
            t.name: sorted((tuple(r) for r in conn.execute(select(t))), key=repr)
            for t in (assets, sets, brands)
        }


def _assets_by_ref(engine: Engine) -> dict[str, Any]:
    with engine.connect() as conn:
        return {r.catalog_ref: r for r in conn.execute(select(assets))}


def _copy_with(tmp_path: Path, name: str, edits: dict[str, dict[str, Any]]) -> Path:
    """A copy of the sample whose cards (by id) get ``edits``, as a newer dump would."""
    folder = Path(shutil.copytree(SAMPLE, tmp_path / name))
    for card_file in (folder / "cards/en").glob("*.json"):
        cards = json.loads(card_file.read_text(encoding="utf-8"))
        hit = [c for c in cards if c["id"] in edits]
        for card in hit:
            for field, value in edits[card["id"]].items():
                if value is None:
                    card.pop(field)
                else:
                    card[field] = value
        if hit:
            card_file.write_text(json.dumps(cards, ensure_ascii=False, indent=2), "utf-8")
    return folder


def test_the_pokemon_sample_imports_then_a_newer_dump_updates_in_place(
    cli_db: tuple[dict[str, str], Engine], tmp_path: Path
) -> None:
    env, engine = cli_db
    first = invoke_cli("catalog", "import", str(SAMPLE), env=env)
    assert _ok(first) == _counts(SAMPLE, "pokemon-tcg", 1175, 1175, 0, 0, "11 sets, 1 brands")
    loaded = _rows(engine)
    assert len(loaded["assets"]) == 1175
    before = _assets_by_ref(engine)
    zard = before["base1-4"]
    assert (zard.subject, zard.title, zard.number) == ("Charizard", "Charizard 4/102 Base", "4")

    newer = _copy_with(
        tmp_path,
        "newer",
        {"base1-4": {"name": "Charizard δ"}, "base2-1": {"rarity": "Rare Holo 1st Print"}},
    )
    broken = _copy_with(tmp_path, "broken", {"base2-7": {"number": None}})
    second, bad = _together(
        lambda: run_cli("catalog", "import", str(SAMPLE), env=env),
        lambda: run_cli("catalog", "import", str(broken), env=env),
    )
    assert _ok(second) == _counts(SAMPLE, "pokemon-tcg", 1175, 0, 0, 1175, "11 sets, 1 brands")
    cards = broken / "cards/en/base2.json"
    position = 1 + [c["id"] for c in json.loads(cards.read_text())].index("base2-7")
    assert _error(bad) == f"{cards}: card {position}: field 'number' is missing"
    assert _rows(engine) == loaded  # same ids, same rows, same timestamps: nothing written

    updated = invoke_cli("catalog", "import", str(newer), env=env)
    assert _ok(updated) == _counts(newer, "pokemon-tcg", 1175, 0, 2, 1173, "11 sets, 1 brands")
    after = _assets_by_ref(engine)
    assert len(after) == 1175
    assert {ref: a.id for ref, a in after.items()} == {ref: a.id for ref, a in before.items()}
    new_zard = after["base1-4"]
    assert (new_zard.subject, new_zard.title) == ("Charizard δ", "Charizard δ 4/102 Base")
    assert new_zard.asset_key != zard.asset_key
    assert after["base2-1"].attributes["rarity"] == "Rare Holo 1st Print"
    assert before["base2-1"].attributes["rarity"] == "Rare Holo"
    same = [ref for ref in after if ref not in ("base1-4", "base2-1")]
    assert all(tuple(after[ref]) == tuple(before[ref]) for ref in same)
    again = invoke_cli("catalog", "import", str(newer), env=env)
    assert _ok(again) == _counts(newer, "pokemon-tcg", 1175, 0, 0, 1175, "11 sets, 1 brands")


def test_format_forcing_unknown_names_and_top_level_identifiers(
    cli_db: tuple[dict[str, str], Engine], tmp_path: Path
) -> None:
    env, engine = cli_db
    zard = {"title": "1999 Pokémon Base Set Charizard 4/102", "subject": "Charizard", "number": "4"}
    blastoise = {"title": "1999 Pokémon Base Set Blastoise 2/102", "subject": "Blastoise"}
    card = {"category": "tcg_card", "year": 1999, "set_name": "Base Set", "brand": "Pokémon"}
    lines = tmp_path / "export.csv"  # JSON lines under a CSV name: only --format reads it
    lines.write_text(
        json.dumps({**card, **zard, "external_id": "z1", "set_code": "BS", "upc": "820650123456"})
        + "\n"
        + json.dumps({**card, **blastoise, "external_id": "z2", "identifiers": {"set_code": "BS"}})
        + "\n",
        encoding="utf-8",
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    detected, folder_as_jsonl, unknown, nothing = _together(
        lambda: run_cli("catalog", "import", str(lines), env=env),
        lambda: run_cli("catalog", "import", str(SAMPLE), "--format", "jsonl", env=env),
        lambda: run_cli("catalog", "import", str(SAMPLE), "--format", "tcgplayer", env=env),
        lambda: run_cli("catalog", "import", str(empty), env=env),
    )
    # read as CSV: the first line is its header, the second a row without the fields
    assert _error(detected) == f"{lines}:2: missing_field at external_id: Field required"
    assert _error(folder_as_jsonl) == f"{SAMPLE} is a folder, not a JSON lines file"
    assert _error(unknown) == f"unknown catalog format 'tcgplayer'; {KNOWN}"
    assert _error(nothing) == f"no catalog format recognises {empty} (a folder); {KNOWN}"
    assert _rows(engine)["assets"] == []

    forced = invoke_cli("catalog", "import", str(lines), "--format", "jsonl", env=env)
    assert _ok(forced) == _counts(lines, "jsonl", 2, 2, 0, 0, "1 sets, 1 brands")
    stored = _assets_by_ref(engine)
    assert stored["z1"].identifiers == {"set_code": "BS", "upc": "820650123456"}
    assert stored["z2"].identifiers == {"set_code": "BS"}
    assert stored["z1"].attributes["identifiers"] == stored["z1"].identifiers
