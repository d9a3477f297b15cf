"""``rareindex.catalog``: the format registry (detection, ``format=`` forcing, the unknown-name
error), the generic JSON lines / CSV reader and the Pokémon TCG layout, on files in ``tmp_path``
and the real sample in ``fixtures/catalogs``. No database."""

from __future__ import annotations

import doctest
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import rareindex.catalog
import rareindex.catalog.formats
import rareindex.catalog.generic
import rareindex.catalog.pokemon_tcg
import rareindex.storage.catalog_plan
from rareindex.catalog import FORMAT_NAMES, detect_format, read_catalog
from rareindex.errors import ConfigError
from rareindex.settings import REPO_ROOT

SAMPLE = REPO_ROOT / "fixtures/catalogs/pokemon-tcg-sample"
LINE = {
    "external_id": "z1",
    "title": "1999 Pokémon Base Set Charizard 4/102",
    "category": "tcg_card",
}
CSV = (
    "external_id,title,category,year,set_code,collector_number\n"
    "z1,Charizard 4/102,tcg_card,1999,BS,4\n"
)


def _sample_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "pokemon-tcg"))


def _edit_cards(folder: Path, set_id: str, edit: Any) -> None:
    path = folder / "cards/en" / f"{set_id}.json"
    cards = json.loads(path.read_text(encoding="utf-8"))
    edit(cards)
    path.write_text(json.dumps(cards, ensure_ascii=False), encoding="utf-8")


@pytest.mark.parametrize(
    "module",
    [
        rareindex.catalog,
        rareindex.catalog.formats,
        rareindex.catalog.generic,
        rareindex.catalog.pokemon_tcg,
        rareindex.storage.catalog_plan,
    ],
)
def test_the_docstring_examples_run(module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)  # the examples name fixtures/ relative to the checkout
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result


def test_the_real_sample_reads_whole_in_set_order() -> None:
    items = read_catalog(SAMPLE)
    assert len(items) == 1175
    assert len({i.external_id for i in items}) == 1175
    per_set = Counter(i.external_id.rsplit("-", 1)[0] for i in items)
    assert len(per_set) == 11 and per_set["base1"] == 102 and per_set["swsh9tg"] == 30
    assert {i.brand for i in items} == {"Pokémon"} and {i.language for i in items} == {"English"}


def test_each_layout_is_recognised(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(CSV, encoding="utf-8")
    (tmp_path / "a.jsonl").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    assert detect_format(SAMPLE) == "pokemon-tcg"
    assert detect_format(tmp_path / "a.csv") == "csv"
    assert detect_format(tmp_path / "a.jsonl") == "jsonl"
    assert detect_format(tmp_path / "a.txt") == "jsonl"  # any file that is not CSV
    csv_item, jsonl_item = read_catalog(tmp_path / "a.csv"), read_catalog(tmp_path / "a.txt")
    assert csv_item[0].identifiers.set_code == "BS" and csv_item[0].year == 1999
    assert jsonl_item[0].external_id == "z1"


def test_format_forces_a_reader_whatever_the_name(tmp_path: Path) -> None:
    lines = tmp_path / "export.csv"  # JSON lines under a misleading name
    lines.write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    table = tmp_path / "export.txt"  # CSV under a name that means JSON lines
    table.write_text(CSV, encoding="utf-8")
    assert [i.external_id for i in read_catalog(lines, format="jsonl")] == ["z1"]
    assert [i.identifiers.collector_number for i in read_catalog(table, format="csv")] == ["4"]
    with pytest.raises(ConfigError, match=r"export\.txt:1: not JSON"):
        read_catalog(table)  # detected as JSON lines
    with pytest.raises(ConfigError, match="is not a Pokémon TCG data folder"):
        read_catalog(lines, format="pokemon-tcg")
    with pytest.raises(ConfigError, match="is a folder, not a JSON lines file"):
        read_catalog(SAMPLE, format="jsonl")


def test_an_unknown_format_lists_the_known_ones(tmp_path: Path) -> None:
    assert FORMAT_NAMES == ("csv", "jsonl", "pokemon-tcg")
    with pytest.raises(ConfigError) as caught:
        read_catalog(SAMPLE, format="tcgplayer")
    assert str(caught.value) == (
        "unknown catalog format 'tcgplayer'; known formats: csv, jsonl, pokemon-tcg"
    )
    with pytest.raises(ConfigError) as caught:
        read_catalog(tmp_path)  # an empty folder: no layout recognises it
    assert str(caught.value) == (
        f"no catalog format recognises {tmp_path} (a folder); "
        "known formats: csv, jsonl, pokemon-tcg"
    )
    with pytest.raises(ConfigError, match="no catalog file at"):
        read_catalog(tmp_path / "missing.jsonl")


def test_jsonl_lifts_top_level_identifier_keys(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {**LINE, "set_code": "BS", "collector_number": "4/102", "upc": "820650123456"},
        {**LINE, "external_id": "z2", "set_code": "BS", "identifiers": {"sku": "Z-2"}},
        {**LINE, "external_id": "z3", "identifiers": {"set_code": "BS"}},  # as before
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    first, second, third = read_catalog(path)
    assert first.identifiers.model_dump(exclude_none=True) == {
        "set_code": "BS",
        "collector_number": "4/102",
        "upc": "820650123456",
    }
    assert second.identifiers.model_dump(exclude_none=True) == {"set_code": "BS", "sku": "Z-2"}
    assert third.identifiers.set_code == "BS"


def test_jsonl_refuses_an_identifier_given_twice_differently(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    same = {**LINE, "set_code": "BS", "identifiers": {"set_code": "BS"}}
    clash = {**LINE, "set_code": "BS", "identifiers": {"set_code": "B2"}}
    path.write_text(json.dumps(same) + "\n" + json.dumps(clash) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_catalog(path)
    assert str(caught.value) == (
        f"{path}:2: set_code is 'BS' at the top level but 'B2' in identifiers"
    )


def test_a_bad_identifier_names_its_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(LINE) + "\n" + json.dumps({**LINE, "upc": "12"}) + "\n")
    with pytest.raises(ConfigError, match=rf"^{path}:2: .*identifiers\.upc"):
        read_catalog(path)


def test_a_pokemon_card_without_a_field_names_file_card_and_field(tmp_path: Path) -> None:
    folder = _sample_copy(tmp_path)
    _edit_cards(folder, "base2", lambda cards: cards[6].pop("name"))
    with pytest.raises(ConfigError) as caught:
        read_catalog(folder)
    assert str(caught.value) == f"{folder}/cards/en/base2.json: card 7: field 'name' is missing"


def test_a_pokemon_card_with_a_bad_value_names_file_card_id_and_field(tmp_path: Path) -> None:
    folder = _sample_copy(tmp_path)

    def long_name(cards: list[dict[str, Any]]) -> None:
        cards[2]["name"] = "x" * 3000  # the title outgrows CatalogItem.title's 2,000 characters

    _edit_cards(folder, "sm8", long_name)
    with pytest.raises(ConfigError) as caught:
        read_catalog(folder, format="pokemon-tcg")
    message = str(caught.value)
    assert message.startswith(f"{folder}/cards/en/sm8.json: card 3 (sm8-3): title: "), message
