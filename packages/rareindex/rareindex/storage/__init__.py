"""Storage: the only part of RareIndex that imports SQLAlchemy.

It hands out SDK models (``RawRecord``), not ORM rows. Tables live in :mod:`.schema`, migrations in
the repository's ``migrations/`` (run through :mod:`.migrate`).
"""

from sqlalchemy import Connection, Engine

from .blobs import BlobStore
from .engine import check_connection, is_database_outage, make_engine
from .ids import new_id
from .migrate import current_revision, downgrade, head_revision, upgrade
from .raw_store import InsertResult, RawRecordStore

__all__ = [
    "BlobStore",
    "Connection",
    "Engine",
    "InsertResult",
    "RawRecordStore",
    "check_connection",
    "current_revision",
    "downgrade",
    "head_revision",
    "is_database_outage",
    "make_engine",
    "new_id",
    "upgrade",
]
