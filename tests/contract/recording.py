"""Record a connector's raw captures from the fake web, and its golden normalized output.

``python -m tests.contract.recording [SLUG ...]`` (``make golden``) serves the fake web, takes the
first page of every registered connector (or the ones named), and writes
``fixtures/connectors/<slug>/raw.jsonl`` (the raw records, as the connector yielded them) and
``fixtures/connectors/<slug>/golden.jsonl`` (what ``normalize()`` makes of them). The contract
test replays the raw file and compares with the golden one, so a mapping change shows up as a
diff to review, not as a silent change in the index.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from rareindex.check import as_raw, capture_first_page
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex_connectors import Connector
from rareindex_connectors.errors import ParseError
from rareindex_connectors.records import RawRecord
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb

FIXTURES = REPO_ROOT / "fixtures" / "connectors"
RECORDED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def normalized_lines(connector: Connector, raws: list[RawRecord]) -> list[dict[str, Any]]:
    """``normalize()`` of each raw record: its records, or the ParseError it failed closed with."""
    lines: list[dict[str, Any]] = []
    for raw in raws:
        try:
            records = [json.loads(r.model_dump_json()) for r in connector.normalize(raw)]
            lines.append({"raw": raw.id, "records": records})
        except ParseError as exc:
            lines.append({"raw": raw.id, "error": exc.reason.value, "field": exc.field})
    return lines


def write_jsonl(path: Path, lines: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(line, sort_keys=True, ensure_ascii=False) + "\n" for line in lines)
    )


def record_all(slugs: list[str]) -> None:
    registry = load_registry(REPO_ROOT / "connectors")
    registry.raise_for_problems()
    connectors = [registry.get(s) for s in slugs] if slugs else list(registry)
    web = FakeWeb()
    with serve_asgi(web.app) as base_url:
        port = urlsplit(base_url).port
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )
        for connector in connectors:
            captured, _ = asyncio.run(capture_first_page(connector, settings))
            # A fixed capture time keeps re-recordings diffable: only real changes show.
            raws = [
                as_raw(connector, r.model_copy(update={"fetched_at": RECORDED_AT}), i)
                for i, r in enumerate(captured)
            ]
            folder = FIXTURES / connector.meta.id
            write_jsonl(folder / "raw.jsonl", [json.loads(r.model_dump_json()) for r in raws])
            write_jsonl(folder / "golden.jsonl", normalized_lines(connector, raws))
            print(f"{connector.meta.id}: {len(raws)} raw records -> {folder}")


if __name__ == "__main__":
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    record_all(sys.argv[1:])
