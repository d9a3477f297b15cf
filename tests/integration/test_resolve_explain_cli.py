"""``rareindex resolve`` against the real Pokémon TCG sample imported with ``catalog import``:
each line names the catalog item it matched (its external id and title), and ``--explain``
says which candidates were weighed and why each lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rareindex.settings import REPO_ROOT
from tests.cli_helpers import invoke_cli

SAMPLE = REPO_ROOT / "fixtures/catalogs/pokemon-tcg-sample"
TITLES = [
    "Charizard 4/102 Base Set Holo PSA 9",
    "Charizard #4 Holo Rare",
    "Natu 88/214 Lost Thunder",
    "Celebi 7/123 Mysterious Treasures 2015",
    "Lot of 50 Pokemon cards incl Charizard",
]


@pytest.fixture(scope="module")
def resolved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("explain")
    env = {"RI_DATA_DIR": str(tmp), "RI_LOG_LEVEL": "warning"}
    for args in (("db", "upgrade"), ("catalog", "import", str(SAMPLE))):
        done = invoke_cli(*args, env=env)
        assert done.returncode == 0, done.stderr
    titles = Path(tmp) / "titles.txt"
    titles.write_text("\n".join(TITLES) + "\n", encoding="utf-8")
    out = invoke_cli("resolve", str(titles), "--explain", "--limit", "5", env=env)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert [line["title"] for line in lines] == TITLES
    return {line["title"]: line for line in lines}


def _verdicts(line: dict[str, Any]) -> dict[str, str]:
    return {c["external_id"]: c["verdict"] for c in line["explain"]["considered"]}


def test_a_match_names_the_catalog_item_and_why_its_rival_lost(resolved: dict[str, Any]) -> None:
    line = resolved["Charizard 4/102 Base Set Holo PSA 9"]
    assert line["external_id"] == "base1-4" and line["asset_title"] == "Charizard 4/102 Base"
    assert line["asset_id"].startswith("ast_") and line["variant"] == {
        "grader": "PSA",
        "grade": "9",
    }
    assert line["explain"]["path"] == "numbered"
    verdicts = _verdicts(line)
    assert verdicts["base1-4"] == "accepted" and verdicts["base4-4"] == "wrong_total"
    considered = line["explain"]["considered"]
    assert len(considered) == 5 and line["explain"]["more"] > 0  # --limit 5
    assert considered[0]["external_id"] == "base1-4"  # closest first


def test_an_ambiguous_title_names_whom_it_could_not_choose_between(
    resolved: dict[str, Any],
) -> None:
    line = resolved["Charizard #4 Holo Rare"]
    assert line["asset_id"] is None and line["reject_reason"] == "ambiguous"
    rivals = {c["external_id"]: c["title"] for c in line["explain"]["ambiguous_with"]}
    assert rivals == {"base1-4": "Charizard 4/102 Base", "base4-4": "Charizard 4/130 Base Set 2"}


def test_refusals_say_wrong_number_subject_and_year(resolved: dict[str, Any]) -> None:
    natu = _verdicts(resolved["Natu 88/214 Lost Thunder"])
    assert natu["sm8-87"] == "wrong_number" and natu["sm8-88"] == "wrong_subject"
    celebi = resolved["Celebi 7/123 Mysterious Treasures 2015"]
    assert celebi["reject_reason"] == "no_candidate"
    assert _verdicts(celebi)["dp2-7"] == "wrong_year"


def test_a_lot_is_refused_before_any_candidate(resolved: dict[str, Any]) -> None:
    line = resolved["Lot of 50 Pokemon cards incl Charizard"]
    assert line["reject_reason"] == "not_one_item" and line["flags"] == ["lot"]
    assert line["explain"]["considered"] == []
