"""frozen_heap: the long-lived heap is left out of the collector's passes during long work, and
given back after it, without touching a freeze the program made itself."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

import rareindex.pipeline as pipeline
from rareindex.heap import frozen_heap


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_heap_is_frozen_inside_the_block_and_given_back_after_it() -> None:
    kept = [object() for _ in range(10)]
    with frozen_heap():
        assert gc.get_freeze_count() >= len(kept)
        with frozen_heap():  # nested: the outer block's freeze holds
            assert gc.get_freeze_count() >= len(kept)
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0


def test_overlapping_blocks_keep_the_heap_frozen_until_the_last_one_ends() -> None:
    """Two crawls on one event loop, or two worker threads: the first to end must not give the
    collector back to the other, which is still running."""
    kept = [object() for _ in range(10)]
    first, second = frozen_heap(), frozen_heap()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert gc.get_freeze_count() >= len(kept)
    second.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0


def test_garbage_made_inside_the_block_is_still_collected() -> None:
    class Node:
        pass

    with frozen_heap():
        before = gc.collect()
        for _ in range(100):
            a, b = Node(), Node()
            a.other, b.other = b, a  # type: ignore[attr-defined]
        del a, b
        assert gc.collect() >= 200 > before


def test_a_freeze_the_program_made_itself_is_left_as_it_was() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    with frozen_heap():
        pass
    assert gc.get_freeze_count() >= frozen > 0


def test_an_error_inside_the_block_unfreezes_the_heap() -> None:
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0


def test_the_pipeline_normalizes_and_resolves_with_the_heap_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[int] = []

    def normalize_raw(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_freeze_count())
        return pipeline.NormalizeSummary()

    def resolve_pending(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_freeze_count())
        return pipeline.ResolveSummary()

    monkeypatch.setattr(pipeline, "normalize_raw", normalize_raw)
    monkeypatch.setattr(pipeline, "resolve_pending", resolve_pending)
    pipeline.process(object(), object(), ["raw_1", "raw_2", "raw_3"], blobs=object(), chunk=2)  # type: ignore[arg-type]
    assert len(seen) == 4 and min(seen) > 0
    assert gc.get_freeze_count() == 0


def test_the_fleet_normalizes_and_resolves_with_the_heap_frozen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from dramatiq.brokers.stub import StubBroker

    import rareindex.indexer
    import rareindex.normalizer
    from rareindex.settings import Settings
    from rareindex.storage import make_engine
    from workers.actors import declare_actors

    seen: list[int] = []
    monkeypatch.setattr(
        rareindex.normalizer, "normalize_raw", lambda *a, **k: seen.append(gc.get_freeze_count())
    )
    monkeypatch.setattr(
        rareindex.indexer, "resolve_pending", lambda *a, **k: seen.append(gc.get_freeze_count())
    )
    settings = Settings(_env_file=None, data_dir=tmp_path)  # type: ignore[call-arg]
    engine = make_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    broker = StubBroker()
    try:
        actors = declare_actors(broker, settings, db=engine)
        actors.normalize.fn(["raw_1"])
        actors.resolve.fn()
    finally:
        broker.close()
        engine.dispose()
    assert len(seen) == 2 and min(seen) > 0
    assert gc.get_freeze_count() == 0
