"""``rareindex inspect PATH_OR_URL [--as KIND]``: an adapter's output, as JSON lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import ConfigError
from ..fetching import build_fetch_stack
from ..inspecting import KINDS, inspect_document
from ..settings import Settings
from ._common import errors, settings_of
from ._fakeweb import fake_web_settings


async def _fetch(url: str, settings: Settings) -> bytes:
    stack = build_fetch_stack(settings)
    try:
        result = await stack.router.fetch(url, engines=("api",), expect="binary")
        return result.content
    finally:
        await stack.aclose()


def inspect(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A local file, or an http(s) URL.")],
    kind: Annotated[
        str | None, typer.Option("--as", help=f"One of: {', '.join(KINDS)} (default: detect).")
    ] = None,
    currency: Annotated[str | None, typer.Option(help="Currency when the page omits it.")] = None,
    fake_web: Annotated[
        bool, typer.Option("--fake-web", help="Serve the local fake web and point at it.")
    ] = False,
) -> None:
    """Run the matching adapter on a file or URL and print what it extracts, one JSON a line.

    Exit status: 0 when lines were printed; 1 when the adapter read the document but it holds
    no records (an empty feed or products page); 2 when the document matches no adapter or
    does not parse (the reason on stderr).
    """
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"--as {kind!r} is not a kind; valid: {', '.join(KINDS)}")
    settings = settings_of(ctx)
    if target.startswith(("http://", "https://")):
        with contextlib.ExitStack() as stack:
            if fake_web:
                settings, _ = stack.enter_context(fake_web_settings(settings))
            content = asyncio.run(_fetch(target, settings))
    else:
        path = Path(target)
        if not path.is_file():
            raise ConfigError(f"{target} is neither a file nor an http(s) URL")
        content = path.read_bytes()
    result = inspect_document(content, source=target, kind=kind, currency=currency)
    for line in result.lines:  # JSON lines on stdout, for jq and friends
        sys.stdout.write(json.dumps(line, default=str, ensure_ascii=False) + "\n")
    if not result.lines:  # never "0 lines" and success: say so, and fail like grep does
        errors.print(
            f"0 lines from the {result.kind} adapter: the document holds no records",
            highlight=False,
        )
        raise typer.Exit(1)
    errors.print(f"{len(result.lines)} lines from the {result.kind} adapter", highlight=False)
