"""The admin API (FastAPI): connector status and coverage for monitors, certificate lookups,
control endpoints, ``/health`` and ``/metrics``. ``rareindex api`` serves it.

Example:
    >>> from fastapi.testclient import TestClient                 # doctest: +SKIP
    >>> client = TestClient(create_app(settings, engine=engine))  # doctest: +SKIP
    >>> client.get("/health").json()                              # doctest: +SKIP
    {'status': 'ok'}
"""

from .app import create_app
from .state import Requeue

__all__ = ["Requeue", "create_app"]
