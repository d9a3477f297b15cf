"""A content-addressed, zstd-compressed blob store on the filesystem, for large snapshots.

A blob's reference is the SHA-256 of its *uncompressed* bytes, so the same page fetched twice is
stored once. Writes are atomic (temporary file, fsync, rename): a crash leaves either the whole
blob or nothing, never a torn file. A blob written for a transaction that then rolled back is an
orphan, harmless and reusable by the next identical write.

Example:
    >>> store = BlobStore(Path(tempfile.mkdtemp()))
    >>> ref = store.put(b"<html>...</html>")
    >>> store.get(ref)
    b'<html>...</html>'
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import zstandard

__all__ = ["BlobStore"]


class BlobStore:
    """Blobs under ``root/ab/cd/<sha256>.zst``."""

    def __init__(self, root: Path, *, level: int = 6):
        self.root = root
        self._compressor = zstandard.ZstdCompressor(level=level)
        self._decompressor = zstandard.ZstdDecompressor()

    def path_for(self, ref: str) -> Path:
        """Where the blob ``ref`` lives (whether or not it exists)."""
        if len(ref) != 64 or any(c not in "0123456789abcdef" for c in ref):
            raise ValueError(f"not a blob reference: {ref!r}")
        return self.root / ref[:2] / ref[2:4] / f"{ref}.zst"

    def put(self, data: bytes) -> str:
        """Store ``data`` (once) and return its reference."""
        ref = hashlib.sha256(data).hexdigest()
        path = self.path_for(ref)
        if path.exists():
            return ref
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(self._compressor.compress(data))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return ref

    def get(self, ref: str) -> bytes:
        """The bytes of ``ref``; raises ``FileNotFoundError`` when absent."""
        data = self._decompressor.decompress(self.path_for(ref).read_bytes())
        if hashlib.sha256(data).hexdigest() != ref:
            raise ValueError(f"blob {ref} is corrupt: its content hashes differently")
        return data

    def exists(self, ref: str) -> bool:
        """Whether ``ref`` is stored."""
        return self.path_for(ref).exists()
