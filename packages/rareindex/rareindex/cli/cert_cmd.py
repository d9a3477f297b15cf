"""``rareindex cert lookup NUMBER_OR_LISTING_URL``: a certificate and where it was seen.

A cert number (``97038834``, ``"PSA 97038834"``, ``4142127-020``) is verified through the
``cert_lookup`` connectors; a listing URL is fetched (SSRF-checked), its certs recorded as
sightings and verified. Refusals (an unsafe URL, no connector, bad input, not found) are one
``error:`` line and exit status 2.

Example:
    $ rareindex cert lookup 97038834 --fake-web
    $ rareindex cert lookup http://market.fake.test/itm/226738079688 --fake-web --json
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ..registry import load_registry
from ._common import console, migrated_database, settings_of
from ._fakeweb import fake_web_settings

if TYPE_CHECKING:
    from ..certs import CertificateView, CertLookupResult, SightingView

__all__ = ["app"]

app = typer.Typer(help="Verify certificates and see where they were sold.", no_args_is_help=True)


def _certificates_table(certificates: list[CertificateView]) -> Table:
    table = Table(
        "grader", "cert", "status", "grade", "label", "subject", "year", "set", "verified at",
        title=f"Certificates ({len(certificates)})",
    )  # fmt: skip
    for cert in certificates:
        grade = f"{cert.grade or ''} {cert.qualifier or ''}".strip()
        table.add_row(
            cert.grader,
            cert.cert_number,
            cert.status,
            grade,
            cert.label_type or "",
            cert.subject or "",
            str(cert.year or ""),
            cert.set_name or "",
            f"{cert.verified_at:%Y-%m-%d %H:%M}" if cert.verified_at else "",
        )
    return table


def _sightings_table(sightings: list[SightingView], title: str) -> Table:
    table = Table(
        "source", "listing", "seen", "price", "attribution", "grader", "mismatch", "url",
        title=f"{title} ({len(sightings)})",
    )  # fmt: skip
    for sighting in sightings:
        price = f"{sighting.price} {sighting.currency or ''}".strip() if sighting.price else ""
        table.add_row(
            sighting.source_id,
            sighting.listing_external_id,
            f"{sighting.seen_at:%Y-%m-%d}",
            price,
            sighting.attribution,
            sighting.grader or "",
            f"[bold red]{sighting.mismatch}[/]" if sighting.mismatch else "",
            sighting.url or "",
        )
    return table


def _print(result: CertLookupResult) -> None:
    console.print(_certificates_table(result.certificates))
    seen = {(s.source_id, s.listing_external_id) for s in result.sightings}
    for cert in result.certificates:
        elsewhere = [s for s in cert.sightings if (s.source_id, s.listing_external_id) not in seen]
        if elsewhere:
            console.print(_sightings_table(elsewhere, f"{cert.grader} {cert.cert_number} seen"))
    console.print(_sightings_table(result.sightings, "Sightings"))
    if result.ambiguous:
        console.print(
            f"not attributed (no grader beside them): {', '.join(result.ambiguous)}; "
            "look one up with `rareindex cert lookup NUMBER`"
        )
    mismatched = [s for s in result.sightings if s.mismatch]
    if mismatched:
        console.print(
            f"[bold red]mismatch:[/] {len(mismatched)} listing title(s) disagree with the "
            "verified certificate (subject or year): a mis-title or fraud signal"
        )


@app.command("lookup")
def lookup_cmd(
    ctx: typer.Context,
    target: Annotated[
        str, typer.Argument(metavar="NUMBER_OR_LISTING_URL", help="A cert number or a listing URL.")
    ],
    fake_web: Annotated[
        bool, typer.Option("--fake-web", help="Serve the local fake web and point at it.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Verify a cert number, or record and verify the certs a listing URL shows; print the
    certificates and their sightings."""
    settings = settings_of(ctx)
    engine = migrated_database(settings)
    registry = load_registry(settings.connectors_dir)
    try:
        with contextlib.ExitStack() as stack:
            if fake_web:
                settings, _ = stack.enter_context(fake_web_settings(settings))
            from ..certs import lookup

            result = asyncio.run(lookup(engine, settings, target, registry=registry))
    finally:
        engine.dispose()
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
        return
    _print(result)
