"""``rareindex replay [--connector ID] [--since DATE]``: rebuild from stored raw records.

Re-normalizes and re-resolves without any network access; running it twice changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from ..errors import ConfigError
from ..pipeline import replay as run_replay
from ..registry import load_registry
from ..storage.blobs import BlobStore
from ._common import console, migrated_database, settings_of


def replay(
    ctx: typer.Context,
    connector: Annotated[
        str | None, typer.Option(help="Only this connector's raw records.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only raw records fetched on or after this date (YYYY-MM-DD)."),
    ] = None,
) -> None:
    """Re-normalize and re-resolve stored raw records (no fetching)."""
    settings = settings_of(ctx)
    since_at = None
    if since is not None:
        try:
            since_at = datetime.fromisoformat(since)
        except ValueError:
            raise ConfigError(f"--since {since!r} is not a date; use YYYY-MM-DD") from None
        if since_at.tzinfo is None:
            since_at = since_at.replace(tzinfo=UTC)
    engine = migrated_database(settings)
    registry = load_registry(settings.connectors_dir)
    result = run_replay(
        engine,
        registry,
        blobs=BlobStore(settings.blob_dir),
        connector_id=connector,
        since=since_at,
    )
    n, r = result.normalized, result.resolved
    console.print(
        f"replay: {n.raw + n.skipped} raw records ({n.raw} normalized anew, {n.skipped} already), "
        f"{n.records} new records, {n.failed} failed; resolved {r.resolved}: "
        f"{r.matched} matched, {r.unmatched} unmatched"
    )
