"""Errors of the index (storage, settings, registry, API). The SDK's errors stay the SDK's.

The whole tree: the classes of this module, and those defined beside the code that raises them
(module in brackets). ``tests/unit/rareindex/test_errors_tree.py`` checks that it is complete.

```
RareIndexError
  ConfigError            bad RI_* setting or connector file: one line, with the fix
  DatabaseError          the database is unreachable or not migrated
    DatabaseUnavailable  our database went away mid-work: a crawl fails `database`, the API 503s
      OperationalOutage  [storage.engine] a driver OperationalError, translated (still one)
      InterfaceOutage    [storage.engine] a driver InterfaceError, translated (still one)
  ImmutableRecordError   an attempt to change a raw record
  UnknownCurrencyError   a currency code without ECB reference rates: lists the supported codes
  FxFileError            an FX file to load that is not an ECB history (zip or csv): says why
  LookupRefused          a cert or listing lookup that cannot be done: .reason says why
  InvalidWatchlist       a watchlist that names nothing or sets an impossible condition
  NotFound               a watchlist or review item that does not exist (for this principal)
  ReviewConflict         a review decision on an item already decided
  ApiError               [api.errors] an API answer other than success: status, code, sentence
  BackfillError          [storage.backfills] a campaign move its state forbids
  SliceBusy              [storage.backfills] a backfill slice whose run is held by a live lease
  ConnectorNotFound      [storage.admin_queries] no stored connector with that id
  StatusConflict         [storage.admin_queries] a status change the connector's status forbids
  CursorExpired          [storage.events_store] an events cursor older than the retention horizon
  LeaseLost              [storage.runs] this worker's run lease was taken over: stop, uncommitted
  RunBusy                [storage.runs] the connector already has a queued or running crawl
  RunNotClaimable        [storage.runs] the run is finished or held under a live lease elsewhere
  TokenError             [storage.tokens] a token command that cannot be done
```

Every ``RareIndexError`` message is one line a newcomer can act on; the CLI prints it without a
traceback and exits 2.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ConfigError",
    "DatabaseError",
    "DatabaseUnavailable",
    "FxFileError",
    "ImmutableRecordError",
    "InvalidWatchlist",
    "LookupReason",
    "LookupRefused",
    "NotFound",
    "RareIndexError",
    "ReviewConflict",
    "UnknownCurrencyError",
]


class RareIndexError(Exception):
    """Root of the index's own errors."""


class ConfigError(RareIndexError):
    """A setting or a connector file is wrong. The message says which and how to fix it."""


class DatabaseError(RareIndexError):
    """The database cannot be reached or its schema is not at the expected revision."""


class DatabaseUnavailable(DatabaseError):
    """Our own database went away mid-work (a lost connection, a server restarting), not a wrong
    statement. Storage translates every driver outage into it at the engine
    (:mod:`rareindex.storage.engine`): a crawl records the run's failure as ``database`` (the
    scheduler retries it soon) and the API answers 503 ``database_unavailable``."""


class ImmutableRecordError(RareIndexError):
    """Raw records are insert-only; something tried to update or delete one."""


class UnknownCurrencyError(RareIndexError):
    """A currency code the FX rates do not cover. The message lists the codes that are."""


class FxFileError(RareIndexError):
    """An FX file to load is not an ECB reference-rate history (zip or csv). Says what is wrong."""


LookupReason = Literal["unsafe_url", "no_connector", "bad_input", "not_found"]


class LookupRefused(RareIndexError):
    """A certificate or listing lookup was refused. ``reason`` is one of a closed vocabulary:

    * ``unsafe_url`` — the URL (or a redirect hop) points at a private, loopback, link-local or
      metadata address, or is not http(s): the SSRF policy refused it and nothing was fetched.
    * ``no_connector`` — no connector's ``url_patterns`` match the URL, or no ``cert_lookup``
      connector is installed.
    * ``bad_input`` — neither a cert number (7-10 digits, optionally ``-NNN``, optionally after a
      grader) nor an http(s) URL.
    * ``not_found`` — the listing or the certificate does not exist at its source.
    """

    def __init__(self, reason: LookupReason, message: str) -> None:
        super().__init__(message)
        self.reason: LookupReason = reason


class InvalidWatchlist(RareIndexError):
    """A watchlist that cannot be stored: it names nothing, or a condition is impossible."""


class NotFound(RareIndexError):
    """A watchlist or review item that does not exist — or belongs to another principal, which
    is told the same, so ids of others' watchlists are never confirmed."""


class ReviewConflict(RareIndexError):
    """A review decision on an item that was already accepted or rejected."""
