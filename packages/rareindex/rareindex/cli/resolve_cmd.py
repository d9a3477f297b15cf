"""``rareindex resolve TITLES_FILE``: what each title resolves to, as JSON lines.

The operator's tool to check matching on their own data: one title a line in (``-`` reads
stdin), one JSON object a line out with the asset (or ``null``), the variant (grader, grade),
the method, the confidence and, when unmatched, why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import ConfigError
from ..resolution import Resolver
from ..storage.catalog_store import load_catalog
from ._common import errors, migrated_database, settings_of


def resolve(
    ctx: typer.Context,
    titles_file: Annotated[str, typer.Argument(help="A file of titles, one a line; - for stdin.")],
    category: Annotated[
        str | None, typer.Option(help="Only match assets of this category (tcg_card, coin…).")
    ] = None,
) -> None:
    """Resolve each title against the catalog in the database; print one JSON line per title."""
    settings = settings_of(ctx)
    if titles_file == "-":
        lines = sys.stdin.read().splitlines()
    else:
        path = Path(titles_file)
        if not path.is_file():
            raise ConfigError(f"no titles file at {path}")
        lines = path.read_text(encoding="utf-8").splitlines()
    engine = migrated_database(settings)
    with engine.connect() as conn:
        items = load_catalog(conn)
    if not items:
        errors.print(
            "warning: the catalog is empty, nothing can match; "
            "load one with `rareindex catalog import FILE`"
        )
    resolver = Resolver.from_catalog(items)
    titles = {i.external_id: i.title for i in items}
    out = sys.stdout
    for title in (t.strip() for t in lines):
        if not title:
            continue
        decision = resolver.resolve(title, category=category)
        grading = decision.grading
        record: dict[str, Any] = {
            "title": title,
            "asset_id": decision.catalog_id,
            "asset_title": titles.get(decision.catalog_id or ""),
            "variant": grading.model_dump(exclude_none=True) if grading else {"grader": None},
            "method": decision.method,
            "confidence": decision.confidence,
            "reject_reason": decision.reject_reason,
            "flags": list(decision.flags),
        }
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
