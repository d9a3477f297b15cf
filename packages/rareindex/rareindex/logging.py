"""Structured logging, configured once at process entry (the CLI, a worker, the API).

JSON lines in fleet mode (or ``RI_LOG_FORMAT=json``), a readable console locally. Two redaction
passes keep secrets out of every line: values of keys that look secret (``api_key``, ``token``,
``password``, ``authorization``…) become ``"[redacted]"``, and any configured secret value found
inside any string is replaced too.

Example:
    >>> configure_logging(Settings(_env_file=None))      # doctest: +SKIP
    >>> structlog.get_logger("rareindex.cli").info("db.upgraded", revision="0001")  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

import structlog

from .settings import Settings

__all__ = ["configure_logging", "redact_processor"]

_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|passwd|authorization|cookie)", re.I)
_NOT_SECRET_KEYS = frozenset({"fencing_token"})
"""Keys the pattern matches that name no secret, spelt out one by one: a lease's fencing token is
a counter that operators need to see (which scheduler led, when leadership changed hands)."""
_REDACTED = "[redacted]"


def redact_processor(secrets: Iterable[str]) -> structlog.types.Processor:
    """A structlog processor removing secrets by key name and by value, recursively."""
    values = tuple(s for s in secrets if len(s) >= 4)

    def scrub(value: Any) -> Any:
        if isinstance(value, str):
            for secret in values:
                if secret in value:
                    value = value.replace(secret, _REDACTED)
            return value
        if isinstance(value, dict):
            return {k: _REDACTED if _is_secret_key(k) else scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(scrub(v) for v in value)
        if values and not isinstance(value, int | float | bool | type(None)):
            return scrub(str(value))
        return value

    def processor(
        logger: Any, method: str, event: MutableMapping[str, Any]
    ) -> MutableMapping[str, Any]:
        return {k: _REDACTED if _is_secret_key(k) else scrub(v) for k, v in event.items()}

    return processor


def _is_secret_key(key: object) -> bool:
    return isinstance(key, str) and key not in _NOT_SECRET_KEYS and bool(_SECRET_KEY.search(key))


def configure_logging(settings: Settings, *, stream: Any = None) -> None:
    """Configure structlog (and route stdlib logging through it). Call once per process."""
    level = getattr(logging, settings.log_level.upper())
    json_lines = settings.log_format == "json" or (
        settings.log_format == "auto" and settings.mode == "fleet"
    )
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer()
        if json_lines
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            redact_processor(settings.secret_values()),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=max(level, logging.WARNING), stream=stream or sys.stderr, force=True)
