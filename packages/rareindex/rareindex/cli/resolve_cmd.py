"""``rareindex resolve TITLES_FILE``: what each title resolves to, as JSON lines.

The operator's tool to check matching on their own data: one title a line in (``-`` reads
stdin), one JSON object a line out with the asset (or ``null``), the catalog item it came from
(``external_id``, ``asset_title``), the variant (grader, grade), the method, the confidence and,
when unmatched, why. ``--explain`` adds which step decided (``identifier``, ``canonical_key``,
``numbered``) and the candidates weighed, closest first: each with its verdict (``accepted``
with its evidence and score, or ``wrong_number``, ``wrong_total``, ``wrong_year``,
``wrong_set``, ``wrong_subject``, ``missing_words``, ``sibling_phrase``, ``no_number``), and for
an ``ambiguous`` title the candidates it could not choose between.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import ConfigError
from ..resolution import Resolver
from ..resolution.resolver import Explanation
from ..storage.catalog_store import catalog_refs, load_catalog
from ._common import errors, migrated_database, settings_of


def resolve(
    ctx: typer.Context,
    titles_file: Annotated[str, typer.Argument(help="A file of titles, one a line; - for stdin.")],
    category: Annotated[
        str | None, typer.Option(help="Only match assets of this category (tcg_card, coin…).")
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Add the candidates weighed and why each lost.")
    ] = False,
    limit: Annotated[
        int, typer.Option(min=1, help="With --explain: at most this many candidates a title.")
    ] = 20,
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
        refs = catalog_refs(conn)
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
        explained = resolver.explain(title, category=category)
        decision = explained.decision
        grading = decision.grading
        asset = decision.catalog_id or ""
        record: dict[str, Any] = {
            "title": title,
            "asset_id": decision.catalog_id,
            "external_id": refs.get(asset),
            "asset_title": titles.get(asset),
            "variant": grading.model_dump(exclude_none=True) if grading else {"grader": None},
            "method": decision.method,
            "confidence": decision.confidence,
            "reject_reason": decision.reject_reason,
            "flags": list(decision.flags),
        }
        if explain:
            record["explain"] = _explain(explained, refs, titles, limit)
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _explain(
    explained: Explanation, refs: dict[str, str], titles: dict[str, str], limit: int
) -> dict[str, Any]:
    def item(asset_id: str, **more: str) -> dict[str, Any]:
        return {
            "asset_id": asset_id,
            "external_id": refs.get(asset_id),
            "title": titles.get(asset_id),
            **more,
        }

    decision = explained.decision
    considered = [
        item(asset_id, verdict=verdict, detail=detail)
        for asset_id, verdict, detail in explained.considered[:limit]
    ]
    doc: dict[str, Any] = {
        "path": explained.path,
        "considered": considered,
        "more": max(0, len(explained.considered) - limit),
    }
    if decision.reject_reason == "ambiguous":
        doc["ambiguous_with"] = [item(c) for c in decision.candidates[:limit]]
    return doc
