"""Reading a response body safely: decoded as the server encoded it, size-limited after
decompression, and checked to be complete.

* ``gzip``/``x-gzip`` and ``deflate`` (zlib-wrapped or raw) with :mod:`zlib`, ``br`` with the
  ``brotli`` library, ``zstd`` with ``zstandard``. Every decoder yields bounded pieces, so a 28 KB
  bomb that inflates to gigabytes is refused at the limit without ever holding more than it.
* Stacked encodings (``Content-Encoding: gzip, deflate``) are undone in reverse order: the last
  one listed was applied last. Every layer's output counts against the limit, so an inner layer
  cannot be a bomb either.
* A compressed stream that stops before its end marker is :class:`BodyTruncated`; so is a body
  shorter than its ``Content-Length`` (checked by the engine, which counts the raw bytes).
* An encoding we cannot decode, or bytes that are not valid data of the declared encoding, is
  :class:`BodyUndecodable`: the same request would get the same bytes.

Example:
    >>> import gzip
    >>> reader = BoundedBody("gzip", limit=1000)
    >>> reader.feed(gzip.compress(b"x" * 10))
    >>> reader.finish()
    b'xxxxxxxxxx'
    >>> reader = BoundedBody("gzip", limit=1000)
    >>> reader.feed(gzip.compress(b"x" * 10)[:-4])
    >>> reader.finish()
    Traceback (most recent call last):
    ...
    rareindex_connectors._engines.body.BodyTruncated: gzip stream ended before its end marker
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Protocol

import brotli  # type: ignore[import-untyped]  # no stubs; pyproject's mypy list is not ours
import zstandard

__all__ = [
    "SUPPORTED_ENCODINGS",
    "BodyError",
    "BodyTooLarge",
    "BodyTruncated",
    "BodyUndecodable",
    "BoundedBody",
    "encodings",
]

SUPPORTED_ENCODINGS = "gzip, deflate, br, zstd"
"""What the ``Accept-Encoding`` header offers: exactly what :class:`BoundedBody` decodes."""

_CHUNK = 64 * 1024
_ZSTD_MAX_RATIO = 1 << 15
"""The most one input byte of zstd can inflate to: a 4-byte RLE block stands for 128 KB. The
``zstandard`` decompressor has no output bound, so input is fed in slices small enough that one
call's output stays within the limit."""


class BodyError(Exception):
    """The body cannot be accepted as it is."""


class BodyTooLarge(BodyError):
    """The decoded body (or an inner layer of it) passed the limit."""


class BodyTruncated(BodyError):
    """The body ended before its end: no end marker, or fewer bytes than ``Content-Length``."""


class BodyUndecodable(BodyError, ValueError):
    """An encoding we do not decode, or bytes that are not valid data of the declared one."""


class _Decoder(Protocol):
    name: str

    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def finish(self) -> Iterator[bytes]: ...


class _ZlibDecoder:
    """gzip (concatenated members allowed) or deflate (zlib-wrapped, or raw as some send)."""

    def __init__(self, name: str):
        self.name = name
        self._gzip = name != "deflate"
        self._raw_fallback = not self._gzip
        self._started = False
        self._zlib = self._new()

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._zlib.eof:
                if not self._gzip:
                    return  # bytes after the end of a deflate stream: not part of the body
                if not data.startswith(b"\x1f\x8b"):
                    return  # padding after the last member, which browsers ignore too
                self._zlib = self._new()  # a gzip member after the first (RFC 1952 §2.2)
            try:
                out = self._zlib.decompress(data, _CHUNK)
            except zlib.error as exc:
                if self._raw_fallback and not self._started:  # raw deflate without zlib header
                    self._raw_fallback = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise BodyUndecodable(f"invalid {self.name} data: {exc}") from None
            self._started = True
            self._raw_fallback = False
            yield out
            data = self._zlib.unconsumed_tail or self._zlib.unused_data

    def finish(self) -> Iterator[bytes]:
        if not self._started:
            return
        while self._zlib.unconsumed_tail:
            yield self._zlib.decompress(self._zlib.unconsumed_tail, _CHUNK)
        if not self._zlib.eof:
            raise BodyTruncated(f"{self.name} stream ended before its end marker")
        yield self._zlib.flush()


class _BrotliDecoder:
    name = "br"

    def __init__(self) -> None:
        self._brotli = brotli.Decompressor()
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._brotli.is_finished():
            return  # bytes after the end of the stream: not part of the body
        self._started = True
        try:
            yield self._brotli.process(data, output_buffer_limit=_CHUNK)
            while not self._brotli.can_accept_more_data():
                yield self._brotli.process(b"", output_buffer_limit=_CHUNK)
        except brotli.error as exc:
            raise BodyUndecodable(f"invalid br data: {exc}") from None

    def finish(self) -> Iterator[bytes]:
        if self._started and not self._brotli.is_finished():
            raise BodyTruncated("br stream ended before its end marker")
        yield b""


class _ZstdDecoder:
    name = "zstd"

    def __init__(self, limit: int):
        self._step = max(32, min(_CHUNK, limit // _ZSTD_MAX_RATIO))
        self._zstd = self._new()
        self._started = False

    @staticmethod
    def _new() -> zstandard.ZstdDecompressionObj:
        return zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._zstd.eof:
                self._zstd = self._new()  # another frame (RFC 8878 §3.1 allows several)
            piece, data = data[: self._step], data[self._step :]
            try:
                out = self._zstd.decompress(piece)
            except zstandard.ZstdError as exc:
                raise BodyUndecodable(f"invalid zstd data: {exc}") from None
            self._started = True
            yield out
            if self._zstd.eof and self._zstd.unused_data:
                data = self._zstd.unused_data + data

    def finish(self) -> Iterator[bytes]:
        if self._started and not self._zstd.eof:
            raise BodyTruncated("zstd stream ended before its end marker")
        yield b""


def encodings(header: str | None) -> list[str]:
    """The codings of a ``Content-Encoding`` header in the order they were applied.

    >>> encodings("gzip, deflate"), encodings("identity"), encodings(None)
    (['gzip', 'deflate'], [], [])
    """
    names = [name.strip().lower() for name in (header or "").split(",")]
    return [name for name in names if name and name != "identity"]


class BoundedBody:
    """Accumulates raw chunks, decoding ``Content-Encoding`` incrementally with a bound.

    Raises :class:`BodyUndecodable` at once for an encoding it does not decode.
    """

    def __init__(self, encoding: str | None, *, limit: int):
        self.limit = limit
        self.size = 0
        self._parts: list[bytes] = []
        decoders: list[_Decoder] = []
        for name in reversed(encodings(encoding)):  # the last applied is undone first
            if name in {"gzip", "x-gzip", "deflate"}:
                decoders.append(_ZlibDecoder(name))
            elif name == "br":
                decoders.append(_BrotliDecoder())
            elif name == "zstd":
                decoders.append(_ZstdDecoder(limit))
            else:
                raise BodyUndecodable(
                    f"unsupported content-encoding {name!r} (we decode {SUPPORTED_ENCODINGS})"
                )
        self._decoders = decoders
        self._layer_sizes = [0] * len(decoders)

    def feed(self, chunk: bytes) -> None:
        """Add a raw chunk. Raises :class:`BodyTooLarge` as soon as the limit is passed."""
        self._push(0, chunk)

    def finish(self) -> bytes:
        """The whole decoded body. Raises :class:`BodyTruncated` when a stream is incomplete."""
        for layer in range(len(self._decoders)):
            for out in self._decoders[layer].finish():
                self._push(layer + 1, out)
        return b"".join(self._parts)

    def _push(self, layer: int, data: bytes) -> None:
        """``data`` into decoder ``layer`` (or, past the last one, into the body)."""
        if not data:
            return
        if layer == len(self._decoders):
            self._append(data)
            return
        for out in self._decoders[layer].feed(data):
            if out and layer + 1 < len(self._decoders):
                self._layer_sizes[layer] += len(out)
                if self._layer_sizes[layer] > self.limit:  # an inner layer is a bomb too
                    raise BodyTooLarge(f"{self._decoders[layer].name} layer passed {self.limit}")
            self._push(layer + 1, out)

    def _append(self, data: bytes) -> None:
        self.size += len(data)
        if self.size > self.limit:
            raise BodyTooLarge(f"body passed {self.limit} bytes")
        self._parts.append(data)
