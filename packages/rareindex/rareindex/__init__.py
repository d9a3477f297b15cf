"""RareIndex: storage, pipeline stages, admin API and CLI over the connector SDK.

Embedded by default (SQLite, no broker); a fleet when ``RI_BROKER_URL`` and a PostgreSQL
``RI_DATABASE_URL`` are set. See :mod:`rareindex.settings`.
"""

from ._version import __version__

__all__ = ["__version__"]
