"""The contract suite: every registered connector, replayed from its recorded raw captures,
must normalize exactly to its golden file (``make golden`` re-records both after a deliberate
change). Also: the registry loads with no problems, and each connector honours the contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT
from rareindex_connectors import Connector
from rareindex_connectors.errors import ParseError
from rareindex_connectors.records import RawRecord, parse_normalized
from tests.contract.recording import FIXTURES, normalized_lines

REGISTRY = load_registry(REPO_ROOT / "connectors")
CONNECTORS = list(REGISTRY)


def test_every_connector_file_loads() -> None:
    assert [str(p) for p in REGISTRY.problems] == []


def test_there_are_connectors_to_check() -> None:
    assert CONNECTORS, "no connectors registered under connectors/"


@pytest.mark.parametrize("connector", CONNECTORS, ids=[c.meta.id for c in CONNECTORS])
def test_connector_honours_the_contract(connector: Connector) -> None:
    assert isinstance(connector, Connector)
    assert connector.version and connector.parser_version
    kinds = {
        "sale",
        "listing",
        "auction_lot",
        "price_observation",
        "catalog_item",
        "population_report",
        "news_item",
    }
    assert kinds & set(connector.meta.capabilities), "declare the record kinds it emits"


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("connector", CONNECTORS, ids=[c.meta.id for c in CONNECTORS])
def test_normalize_matches_the_golden_file(connector: Connector) -> None:
    folder = FIXTURES / connector.meta.id
    if not (folder / "raw.jsonl").exists():
        pytest.fail(f"no recorded fixtures for {connector.meta.id}: run `make golden`")
    lines = (folder / "raw.jsonl").read_text().splitlines()
    raws = [RawRecord.model_validate_json(line) for line in lines if line.strip()]
    assert raws, "the recording captured nothing"
    produced = json.loads(json.dumps(normalized_lines(connector, raws), sort_keys=True))
    assert produced == _read(folder / "golden.jsonl")
    assert any(line.get("records") for line in produced), "nothing normalized at all"


@pytest.mark.parametrize("connector", CONNECTORS, ids=[c.meta.id for c in CONNECTORS])
def test_a_stored_record_parses_back_to_the_record_that_was_stored(connector: Connector) -> None:
    """The premise of the pipeline's handoff (``rareindex.handoff``): the resolver may use the
    record the normalizer validated instead of parsing its stored JSON, because they are equal."""
    lines = (FIXTURES / connector.meta.id / "raw.jsonl").read_text().splitlines()
    raws = [RawRecord.model_validate_json(line) for line in lines if line.strip()]
    checked = 0
    for raw in raws:
        try:
            produced = connector.normalize(raw)
        except ParseError:
            continue
        for output in produced:
            record = parse_normalized(output)
            stored = json.loads(json.dumps(record.model_dump(mode="json", exclude_none=True)))
            again = parse_normalized(stored)
            assert type(again) is type(record)
            assert again == record
            assert again.model_dump_json() == record.model_dump_json()
            checked += 1
    assert checked, "nothing normalized at all"
