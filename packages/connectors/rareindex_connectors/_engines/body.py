"""Reading a response body safely: size-limited after decompression, so a 28 KB gzip bomb that
inflates to gigabytes is refused at the limit without ever holding more than the limit.

Example:
    >>> import gzip
    >>> reader = BoundedBody("gzip", limit=1000)
    >>> reader.feed(gzip.compress(b"x" * 10))
    >>> reader.finish()
    b'xxxxxxxxxx'
"""

from __future__ import annotations

import zlib

__all__ = ["SUPPORTED_ENCODINGS", "BodyTooLarge", "BoundedBody"]

SUPPORTED_ENCODINGS = "gzip, deflate"
_CHUNK = 64 * 1024


class BodyTooLarge(Exception):
    """The decoded body passed the limit."""


class BoundedBody:
    """Accumulates raw chunks, decoding ``Content-Encoding`` incrementally with a bound."""

    def __init__(self, encoding: str | None, *, limit: int):
        self.limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        encoding = (encoding or "identity").lower().strip()
        if encoding in {"gzip", "x-gzip"}:
            self._decoder: zlib._Decompress | None = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()
        elif encoding in {"identity", ""}:
            self._decoder = None
        else:
            raise ValueError(f"unsupported content-encoding {encoding!r}")
        self._deflate_raw_retry = encoding == "deflate"

    def feed(self, chunk: bytes) -> None:
        """Add a raw chunk. Raises :class:`BodyTooLarge` as soon as the limit is passed."""
        if self._decoder is None:
            self._append(chunk)
            return
        data = chunk
        while data:
            try:
                out = self._decoder.decompress(data, _CHUNK)
            except zlib.error:
                if self._deflate_raw_retry and not self._parts:  # raw deflate without zlib header
                    self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                    self._deflate_raw_retry = False
                    continue
                raise
            self._append(out)
            data = self._decoder.unconsumed_tail
            if not out and not data:
                break

    def finish(self) -> bytes:
        """The whole decoded body."""
        if self._decoder is not None:
            while True:
                out = (
                    self._decoder.decompress(b"", _CHUNK) if self._decoder.unconsumed_tail else b""
                )
                if not out:
                    break
                self._append(out)
            self._append(self._decoder.flush())
        return b"".join(self._parts)

    def _append(self, data: bytes) -> None:
        if not data:
            return
        self._size += len(data)
        if self._size > self.limit:
            raise BodyTooLarge(f"body passed {self.limit} bytes")
        self._parts.append(data)
