"""A worker process for the fleet Retry-After test: fetch ``/retry-after/<s>`` of
``ratelimit.fake.test`` N times through the api engine, gates shared in Redis; every fetch must
end 200 (a 429 defers the host for the whole fleet, then the retry goes through).
``python -m tests.integration.retry_after_worker REDIS PREFIX BASE N SECONDS``"""

from __future__ import annotations

import asyncio
import sys

from rareindex_connectors._engines import FetchRequest
from rareindex_connectors._gates import RedisGateBackend
from rareindex_fakeweb.fake_web import FakeWeb
from tests.integration.fetch_helpers import api_engine, wait_for_start

HOST = "ratelimit.fake.test"
POLICY = FakeWeb.policy(
    **{
        HOST: {
            "concurrency": 1,
            "min_interval_ms": 0,
            "max_retries": 3,
            "engine_options": {"api": {"backoff_base_ms": 10}},
        }
    }
)


async def main(redis_url: str, prefix: str, base: str, count: int, seconds: int) -> None:
    backend = RedisGateBackend.from_url(redis_url, prefix=prefix)
    engine = api_engine(POLICY, backend=backend)
    wait_for_start()
    url = FakeWeb.url(base, HOST, f"/retry-after/{seconds}")
    try:
        results = await asyncio.gather(*(engine.fetch(FetchRequest(url)) for _ in range(count)))
        assert all(r.status == 200 for r in results), [r.status for r in results]
    finally:
        await engine.aclose()
        await backend.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
