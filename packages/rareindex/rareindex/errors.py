"""Errors of the index (storage, settings, registry). The SDK's errors stay the SDK's.

```
RareIndexError
  ConfigError          bad RI_* setting or connector file: one line, with the fix
  DatabaseError        the database is unreachable or not migrated
  ImmutableRecordError an attempt to change a raw record
  UnknownCurrencyError a currency code without ECB reference rates: lists the supported codes
```

Every ``RareIndexError`` message is one line a newcomer can act on; the CLI prints it without a
traceback and exits 2.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DatabaseError",
    "ImmutableRecordError",
    "RareIndexError",
    "UnknownCurrencyError",
]


class RareIndexError(Exception):
    """Root of the index's own errors."""


class ConfigError(RareIndexError):
    """A setting or a connector file is wrong. The message says which and how to fix it."""


class DatabaseError(RareIndexError):
    """The database cannot be reached or its schema is not at the expected revision."""


class ImmutableRecordError(RareIndexError):
    """Raw records are insert-only; something tried to update or delete one."""


class UnknownCurrencyError(RareIndexError):
    """A currency code the FX rates do not cover. The message lists the codes that are."""
