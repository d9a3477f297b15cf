"""Bounded body decoding: every encoding we offer, stacked ones, cut-short streams, bombs."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable

import brotli  # type: ignore[import-untyped]
import pytest
import zstandard

from rareindex_connectors._engines.body import (
    SUPPORTED_ENCODINGS,
    BodyTooLarge,
    BodyTruncated,
    BodyUndecodable,
    BoundedBody,
    encodings,
)

DATA = b'{"id": 4, "title": "1999 Pokemon Base Set Charizard #4 PSA 9"}\n' * 400


def _raw_deflate(data: bytes) -> bytes:
    squeeze = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()


ENCODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda b: gzip.compress(b, mtime=0),
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
}


def _decode(encoding: str | None, payload: bytes, *, limit: int = 10**7, step: int = 7) -> bytes:
    reader = BoundedBody(encoding, limit=limit)
    for i in range(0, len(payload), step):
        reader.feed(payload[i : i + step])
    return reader.finish()


def test_accept_encoding_offers_exactly_what_is_decoded() -> None:
    assert encodings(SUPPORTED_ENCODINGS) == ["gzip", "deflate", "br", "zstd"]
    for name in encodings(SUPPORTED_ENCODINGS):
        assert _decode(name, ENCODERS[name](DATA)) == DATA


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_each_encoding_decodes_in_small_chunks(name: str) -> None:
    assert _decode(name, ENCODERS[name](DATA)) == DATA
    assert _decode(name.upper(), ENCODERS[name](DATA), step=4096) == DATA


def test_raw_deflate_without_a_zlib_header_is_decoded() -> None:
    assert _decode("deflate", _raw_deflate(DATA)) == DATA


@pytest.mark.parametrize(
    "stack",
    [("gzip", "deflate"), ("deflate", "gzip"), ("br", "gzip"), ("gzip", "zstd", "br")],
)
def test_stacked_encodings_are_undone_last_applied_first(stack: tuple[str, ...]) -> None:
    payload = DATA
    for name in stack:  # the order of the header is the order they were applied
        payload = ENCODERS[name](payload)
    assert _decode(", ".join(stack), payload) == DATA
    with pytest.raises(BodyUndecodable):  # the reverse order is not the same body
        _decode(", ".join(reversed(stack)), payload)


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_a_stream_cut_anywhere_before_its_end_is_truncated(name: str) -> None:
    payload = ENCODERS[name](DATA)
    for cut in range(1, len(payload), max(1, len(payload) // 23)):
        with pytest.raises(BodyTruncated):
            _decode(name, payload[:cut])


def test_a_gzip_body_without_its_trailer_is_truncated() -> None:
    payload = gzip.compress(DATA)
    with pytest.raises(BodyTruncated, match="gzip stream ended before its end marker"):
        _decode("gzip", payload[:-8])  # all the data, not the CRC and size


def test_gzip_members_are_all_decoded_and_padding_after_them_ignored() -> None:
    two = gzip.compress(DATA) + gzip.compress(b"second member")
    assert _decode("gzip", two) == DATA + b"second member"
    assert _decode("gzip", gzip.compress(DATA) + b"\0" * 16) == DATA
    frames = ENCODERS["zstd"](DATA) + ENCODERS["zstd"](b"second frame")
    assert _decode("zstd", frames) == DATA + b"second frame"


def test_an_empty_body_with_an_encoding_is_empty() -> None:
    for name in ENCODERS:  # a 304 or 204 keeps the Content-Encoding of the representation
        assert BoundedBody(name, limit=10).finish() == b""


@pytest.mark.parametrize("header", ["compress", "gzip, compress", "x-rareindex"])
def test_an_encoding_we_do_not_decode_is_refused_at_once(header: str) -> None:
    with pytest.raises(BodyUndecodable, match="unsupported content-encoding"):
        BoundedBody(header, limit=10)


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_bytes_that_are_not_the_declared_encoding_are_undecodable(name: str) -> None:
    garbage = b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4 if name == "gzip" else bytes(range(256))
    with pytest.raises(BodyUndecodable):
        _decode(name, garbage, step=64)


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_every_encoding_stops_at_the_limit_without_holding_the_bomb(name: str) -> None:
    limit = 512 * 1024
    zeros = b"\0" * (16 * 1024 * 1024)
    fast = {"br": lambda b: brotli.compress(b, quality=4), "gzip": lambda b: gzip.compress(b, 6)}
    bomb = fast.get(name, ENCODERS[name])(zeros)
    del zeros
    assert len(bomb) < 64 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            _decode(name, bomb, limit=limit, step=16 * 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * limit, peak  # never anywhere near the 16 MB it inflates to


def test_an_inner_layer_is_bounded_too() -> None:
    # A gzip stream of a million empty stored blocks: 5 MB that decodes to nothing, wrapped in
    # deflate (about 5 KB). The body stays empty; the gzip layer must still count against the cap.
    empty_block = b"\x00\x00\x00\xff\xff"
    inner = gzip.compress(b"", mtime=0)[:10] + empty_block * 1_000_000 + b"\x03\x00" + b"\0" * 8
    assert zlib.decompress(inner, 16 + zlib.MAX_WBITS) == b""
    payload = zlib.compress(inner, 9)
    assert len(payload) < 64 * 1024
    with pytest.raises(BodyTooLarge, match="deflate layer"):
        _decode("gzip, deflate", payload, limit=1024 * 1024, step=64 * 1024)
