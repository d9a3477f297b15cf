"""A worker process for the fleet politeness test: fetch N pages of one host through the api
engine, gates shared in Redis. ``python -m tests.integration.gate_worker REDIS PREFIX BASE N``"""

from __future__ import annotations

import asyncio
import sys

from rareindex_connectors._engines import FetchRequest
from rareindex_connectors._gates import RedisGateBackend
from rareindex_fakeweb.fake_web import FakeWeb
from tests.integration.fetch_helpers import api_engine, wait_for_start

HOST = "json.fake.test"
POLICY = FakeWeb.policy(**{HOST: {"concurrency": 2, "min_interval_ms": 200}})


async def main(redis_url: str, prefix: str, base: str, count: int) -> None:
    backend = RedisGateBackend.from_url(redis_url, prefix=prefix)
    engine = api_engine(POLICY, backend=backend)
    wait_for_start()
    try:
        await asyncio.gather(
            *(
                engine.fetch(FetchRequest(FakeWeb.url(base, HOST, "/slow/450")))
                for _ in range(count)
            )
        )
    finally:
        await engine.aclose()
        await backend.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
