"""The api engine against ``bodies.fake.test`` over real sockets: bodies as servers send them.

br and zstd are decoded, stacked encodings undone in order, bombs in any encoding stop at the same
cap; a body cut short (no end marker, fewer bytes than Content-Length) is ``truncated_body`` after
one retry; an encoding nobody decodes is permanent. ``FakeWeb.bodies`` counts what the host saw.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from typing import Any

import pytest

from rareindex_connectors._engines import FetchRequest
from rareindex_connectors.errors import (
    PermanentFetchError,
    ResponseTooLarge,
    TruncatedBody,
    UndecodableBody,
)
from rareindex_fakeweb.fake_web import FakeWeb
from rareindex_fakeweb.sites.bodies import HOST, PRODUCTS, bombs
from tests.integration.fetch_helpers import api_engine, running_fake_web

LIMIT = 1024 * 1024


def _policy(**extra: Any) -> dict[str, Any]:
    return FakeWeb.policy(
        **{
            HOST: {
                "max_retries": 3,
                "circuit_failures": 100,
                "max_response_bytes": LIMIT,
                "engine_options": {"api": {"backoff_base_ms": 5}},
                **extra,
            }
        }
    )


def _fetch_each(
    paths: list[str], *, measure: bool = False, **policy: Any
) -> tuple[FakeWeb, list[Any]]:
    """Fetch every path once; each answer is a FetchResult or the error it raised. With
    ``measure``, the last answer is followed by the peak memory the fetches traced."""
    with running_fake_web() as (web, base):
        engine = api_engine(_policy(**policy))

        async def go() -> list[Any]:
            try:
                return await asyncio.gather(
                    *(engine.fetch(FetchRequest(web.url(base, HOST, p))) for p in paths),
                    return_exceptions=True,
                )
            finally:
                await engine.aclose()

        if not measure:
            return web, asyncio.run(go())
        tracemalloc.start()  # the fake web is built: its own 11 MB bomb is not counted
        try:
            answers = asyncio.run(go())
            return web, [*answers, tracemalloc.get_traced_memory()[1]]
        finally:
            tracemalloc.stop()


def test_br_zstd_and_stacked_bodies_decode_to_the_same_document() -> None:
    paths = ["/plain", "/gzip", "/br", "/zstd", "/gzip-deflate"]
    web, answers = _fetch_each(paths)
    for path, answer in zip(paths, answers, strict=True):
        assert not isinstance(answer, BaseException), (path, answer)
        assert answer.status == 200 and json.loads(answer.content) == PRODUCTS, path
        assert web.bodies.count(path) == 1, path  # decoded the first time: no retry


@pytest.mark.parametrize("path", ["/gzip-truncated", "/deflate-truncated", "/br-truncated"])
def test_a_compressed_body_without_its_end_is_truncated_after_one_retry(path: str) -> None:
    web, [answer] = _fetch_each([path])
    assert isinstance(answer, TruncatedBody), answer
    assert "stream ended before its end marker" in str(answer)
    assert web.bodies.count(path) == 2  # retried once, not max_retries (3) times


def test_a_body_shorter_than_its_content_length_is_truncated_after_one_retry() -> None:
    web, [answer] = _fetch_each(["/short"])
    assert isinstance(answer, TruncatedBody), answer
    assert "4096 bytes of the body of 8192" in str(answer)
    assert web.bodies.count("/short") == 2


def test_a_body_cut_short_once_is_whole_on_the_retry() -> None:
    web, [answer] = _fetch_each(["/flaky-truncated?key=once"])
    assert not isinstance(answer, BaseException), answer
    assert json.loads(answer.content) == PRODUCTS
    assert web.bodies.count("/flaky-truncated?key=once") == 2


@pytest.mark.parametrize("path", ["/compress", "/gzip-corrupt"])
def test_a_body_we_cannot_decode_is_permanent_and_never_retried(path: str) -> None:
    web, [answer] = _fetch_each([path])
    assert isinstance(answer, UndecodableBody) and isinstance(answer, PermanentFetchError)
    assert web.bodies.count(path) == 1


def test_bombs_in_every_encoding_stop_at_the_same_cap() -> None:
    paths = ["/gzip-bomb", "/br-bomb", "/zstd-bomb"]
    assert all(len(bomb) < 64 * 1024 for bomb, _ in bombs().values())  # built before measuring
    web, [*answers, peak] = _fetch_each(paths, measure=True)
    for path, answer in zip(paths, answers, strict=True):
        assert isinstance(answer, ResponseTooLarge), (path, answer)
        assert f"passed {LIMIT} bytes" in str(answer)
        assert web.bodies.count(path) == 1, path
    assert peak < 4 * LIMIT, peak  # three concurrent 8 MB bombs, never held, each stopped at 1 MB
