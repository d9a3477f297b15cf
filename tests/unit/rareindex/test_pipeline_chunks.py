"""process() takes raw ids in chunks: each chunk normalized, then resolved with the records it
stored handed over, progress reported after each; the summaries add up."""

from __future__ import annotations

from typing import Any

import pytest

import rareindex.pipeline as pipeline
from rareindex.cli.crawl_cmd import index_line


def test_chunks_are_normalized_then_resolved_in_order_with_their_own_handoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, Any]] = []

    def normalize_raw(engine: Any, registry: Any, raw_ids: Any, **kwargs: Any) -> Any:
        calls.append(("normalize", list(raw_ids)))
        kwargs["handoff"].keep(f"nrm_{raw_ids[0]}", object())
        return pipeline.NormalizeSummary(raw=len(raw_ids), records=2 * len(raw_ids))

    def resolve_pending(engine: Any, **kwargs: Any) -> Any:
        calls.append(("resolve", len(kwargs["handoff"])))
        return pipeline.ResolveSummary(resolved=3, matched=2, unmatched=1)

    monkeypatch.setattr(pipeline, "normalize_raw", normalize_raw)
    monkeypatch.setattr(pipeline, "resolve_pending", resolve_pending)
    done: list[int] = []
    raw_ids = ["r1", "r2", "r3", "r4", "r5"]
    result = pipeline.process(None, None, raw_ids, blobs=None, chunk=2, on_chunk=done.append)  # type: ignore[arg-type]
    assert calls == [
        ("normalize", ["r1", "r2"]),
        ("resolve", 1),
        ("normalize", ["r3", "r4"]),
        ("resolve", 1),
        ("normalize", ["r5"]),
        ("resolve", 1),
    ]
    assert done == [2, 4, 5]
    assert (result.normalized.raw, result.normalized.records) == (5, 10)
    assert (result.resolved.resolved, result.resolved.matched) == (9, 6)
    assert result.normalize_seconds >= 0 and result.resolve_seconds >= 0
    line = index_line(result)
    assert line.startswith("indexed: 5 raw records -> 10 records (0 failed) in ")
    assert "resolved 9 in " in line and line.endswith(": 6 matched, 3 unmatched")


def test_no_raw_ids_still_resolves_what_is_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved: list[int] = []
    monkeypatch.setattr(pipeline, "normalize_raw", lambda *a, **k: pipeline.NormalizeSummary())
    monkeypatch.setattr(
        pipeline,
        "resolve_pending",
        lambda *a, **k: resolved.append(1) or pipeline.ResolveSummary(resolved=4),
    )
    assert pipeline.process(None, None, [], blobs=None).resolved.resolved == 4  # type: ignore[arg-type]
    assert resolved == [1]


def test_a_chunk_must_hold_a_raw_id() -> None:
    with pytest.raises(ValueError, match="chunk must be 1 or more"):
        pipeline.process(None, None, ["r1"], blobs=None, chunk=0)  # type: ignore[arg-type]
