"""A worker process for the fleet robots.txt test: fetch pages of ``robots.fake.test`` (some of
them disallowed) through the router, gates shared in Redis.
``python -m tests.integration.robots_worker REDIS PREFIX BASE``"""

from __future__ import annotations

import asyncio
import sys

from rareindex_connectors._gates import RedisGateBackend
from rareindex_connectors._policy import PolicySet
from rareindex_connectors.errors import RobotsDisallowed
from rareindex_connectors.runtime import Router
from rareindex_fakeweb.fake_web import FakeWeb
from rareindex_fakeweb.sites.robots_hosts import HOST
from tests.integration.fetch_helpers import api_engine, wait_for_start

POLICY = FakeWeb.policy(**{HOST: {"concurrency": 4, "min_interval_ms": 0}})
PATHS = ("/p/1", "/private/1", "/p/2", "/members/1", "/p/3")


async def main(redis_url: str, prefix: str, base: str) -> None:
    backend = RedisGateBackend.from_url(redis_url, prefix=prefix)
    engine = api_engine(POLICY, backend=backend)
    wait_for_start()
    router = Router({"api": engine}, PolicySet.from_mapping(POLICY))
    try:
        urls = [FakeWeb.url(base, HOST, path) for path in PATHS]
        results = await asyncio.gather(
            *(router.fetch(url, expect="json") for url in urls), return_exceptions=True
        )
        refused = [r for r in results if isinstance(r, RobotsDisallowed)]
        failed = [r for r in results if isinstance(r, BaseException) and r not in refused]
        assert len(refused) == 2 and not failed, results
    finally:
        await engine.aclose()
        await backend.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
