"""``rareindex review list|accept|reject|limit|limits``: the review queue.

``list`` shows quarantined observations (pending by default; ``--status accepted|rejected|all``,
``--json``); ``accept ID --reason TEXT`` puts one into the index (the price index is updated at
once, and a ``review.accepted`` event is written); ``reject ID --reason TEXT`` keeps it out for
good, marked. Each decision is stored with the OS user (``user:<login>``), when and why, and
logged (``review.decided``). ``limit CATEGORY FACTOR`` sets a category's change limit (``*``:
the default of every category without its own; 3 unless set); ``limits`` lists them.

Example:
    $ rareindex review list --json
    $ rareindex review accept rev_01… --reason "checked the listing: a real 1st edition"
    $ rareindex review limit coin 2.5
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

import structlog
import typer

from ..errors import NotFound, ReviewConflict
from ..review import DEFAULT_FACTOR, Decision, decide
from ..review.decisions import MAX_REASON
from ..storage.review_store import ReviewItem, list_items, review_limits_of, set_limit
from ._common import console, errors, migrated_database, settings_of
from .connectors_cmd import operator

__all__ = ["app", "item_json"]

app = typer.Typer(help="The review queue: quarantined observations and the decisions on them.")
log = structlog.get_logger(__name__)

JsonOption = Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")]
IdArgument = Annotated[str, typer.Argument(help="The review item's id (rev_…).")]
ReasonOption = Annotated[
    str, typer.Option("--reason", help="Why: stored with the decision and logged.")
]


def _text(value: Any) -> Any:
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def item_json(item: ReviewItem) -> dict[str, Any]:
    """A review item as JSON: amounts as decimal strings, times ISO-8601 UTC."""
    return {name: _text(getattr(item, name)) for name in ReviewItem.__slots__}


@app.command("list")
def list_cmd(
    ctx: typer.Context,
    status: Annotated[
        str, typer.Option("--status", help="pending (default), accepted, rejected or all.")
    ] = "pending",
    json_: JsonOption = False,
) -> None:
    """List the review queue, oldest first (pending items unless --status says otherwise)."""
    if status not in ("pending", "accepted", "rejected", "all"):
        errors.print("[bold red]error:[/] --status is pending, accepted, rejected or all")
        raise typer.Exit(2)
    engine = migrated_database(settings_of(ctx))
    items = list_items(engine, status=None if status == "all" else status, limit=100_000)
    if json_:
        sys.stdout.write(json.dumps([item_json(i) for i in items], indent=2) + "\n")
        return
    for i in items:
        against = (
            f" vs {i.reference_basis} {_text(i.reference)} (x{_text(i.ratio)})"
            if i.reference is not None
            else ""
        )
        why = i.anomaly_reason if i.reason == "anomaly" else i.reason
        decided = f"  {i.status} by {i.decided_by}: {i.decision_reason}" if i.decided_by else ""
        console.print(
            f"{i.id}  {i.kind} {_text(i.price)} {i.currency}{against}  {why}  "
            f"{i.connector_id} {i.variant_id}{decided}",
            soft_wrap=True,
        )
    console.print(
        f"{len(items)} {status if status != 'all' else ''} review items".replace("  ", " ")
    )


def _decide(ctx: typer.Context, item_id: str, decision: Decision, reason: str) -> None:
    if not reason or len(reason) > MAX_REASON:
        errors.print(f"[bold red]error:[/] --reason needs 1 to {MAX_REASON} characters")
        raise typer.Exit(2)
    engine = migrated_database(settings_of(ctx))
    try:
        item = decide(engine, item_id, decision, by=operator(), reason=reason)
    except NotFound as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except ReviewConflict as exc:
        errors.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    console.print(f"{item.id}: {item.status} (by {item.decided_by}: {item.decision_reason})")


@app.command("accept")
def accept_cmd(ctx: typer.Context, item_id: IdArgument, reason: ReasonOption) -> None:
    """Accept a quarantined observation: it enters the index now."""
    _decide(ctx, item_id, "accept", reason)


@app.command("reject")
def reject_cmd(ctx: typer.Context, item_id: IdArgument, reason: ReasonOption) -> None:
    """Reject a quarantined observation: it stays stored, marked, out of the index."""
    _decide(ctx, item_id, "reject", reason)


@app.command("limit")
def limit_cmd(
    ctx: typer.Context,
    category: Annotated[str, typer.Argument(help="A category, or '*' for the default.")],
    factor: Annotated[str, typer.Argument(help="Above FACTOR x or below 1/FACTOR: > 1.")],
) -> None:
    """Set a category's change limit (the next resolve batches judge with it)."""
    try:
        value = Decimal(factor)
    except InvalidOperation:
        value = Decimal(0)
    if not value.is_finite() or value <= 1 or value >= 1_000_000:
        errors.print(f"[bold red]error:[/] the factor must be a number above 1, not {factor!r}")
        raise typer.Exit(2)
    engine = migrated_database(settings_of(ctx))
    by = operator()
    set_limit(engine, category, value, by=by, at=datetime.now(UTC))
    log.info("review.limit_set", category=category, factor=str(value), by=by)
    console.print(f"{category}: above {value}x or below 1/{value} of the reference (by {by})")


@app.command("limits")
def limits_cmd(ctx: typer.Context) -> None:
    """List the change limits (every other category: '*', else the default 3)."""
    engine = migrated_database(settings_of(ctx))
    with engine.connect() as conn:
        limits = review_limits_of(conn)
    if "*" not in limits:
        console.print(f"*: {DEFAULT_FACTOR} (default)")
    for category, factor in sorted(limits.items()):
        console.print(f"{category}: {_text(factor)}")
