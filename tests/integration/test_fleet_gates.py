"""Fleet politeness: two worker processes sharing the Redis gate backend are, together, as polite
as one — measured at the host over real sockets."""

from __future__ import annotations

import itertools
import secrets

import pytest
import redis

from rareindex_connectors.runtime import RedisGateBackend
from rareindex_fakeweb.sites.robots_hosts import CRAWL_DELAY_S
from rareindex_fakeweb.sites.robots_hosts import HOST as ROBOTS_HOST
from tests.integration.fetch_helpers import running_fake_web
from tests.integration.test_fetch_politeness import GAP_TOLERANCE_S
from tests.subprocess_env import start_module

pytestmark = pytest.mark.serial  # gaps measured at the host: run alone, not beside other files


def _two_workers(module: str, *args: str) -> None:
    """Run ``python -m tests.integration.<module> ARGS`` twice at once, both starting to fetch
    once both are ready; both must exit 0."""
    workers = [start_module(f"tests.integration.{module}", *args, stdin=True) for _ in range(2)]
    # Both imported and set up before either fetches (fetch_helpers.wait_for_start).
    ready = [worker.stdout.readline().strip() for worker in workers]  # type: ignore[union-attr]
    if ready == ["ready", "ready"]:  # else the assertion below says what a worker printed
        for worker in workers:
            worker.stdin.write("go\n")  # type: ignore[union-attr]
            worker.stdin.flush()  # type: ignore[union-attr]
    for worker in workers:
        _, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err
    assert ready == ["ready", "ready"], ready


def test_two_processes_share_one_host_budget(redis_url: str) -> None:
    prefix = f"ri:test:{secrets.token_hex(4)}:"
    with running_fake_web() as (web, base):
        _two_workers("gate_worker", redis_url, prefix, base, "5")
    log = web.log("json.fake.test")
    assert log.requests == 10
    assert log.max_in_flight == 2
    assert log.min_gap() is not None and log.min_gap() >= 0.2 - GAP_TOLERANCE_S
    # Idle hosts are dropped: with no minute budget to remember, the host's key expires about a
    # second after its last start (or is already gone).
    client = redis.Redis.from_url(redis_url)
    keys = client.keys(f"{prefix}*")
    assert all(0 < client.pttl(key) <= 2_500 for key in keys)
    client.close()


def test_no_worker_of_the_fleet_sends_before_a_retry_after(redis_url: str) -> None:
    """Two processes hit a host that answers its first request 429 ``Retry-After: 1``: the
    deferral is shared (and made while the 429's slot is still held), so the host sees that one
    429 and nothing else until the second has passed; then every fetch goes through."""
    prefix = f"ri:test:{secrets.token_hex(4)}:"
    host = "ratelimit.fake.test"
    with running_fake_web() as (web, base):
        _two_workers("retry_after_worker", redis_url, prefix, base, "3", "1")
    log = web.log(host)
    assert log.count(429) == 1 and log.count(200) == 6, log.statuses
    first, *rest = sorted(log.starts)
    assert min(rest) >= first + 1.0 - GAP_TOLERANCE_S, [round(t - first, 3) for t in rest]


def test_two_workers_obey_robots_txt_together(redis_url: str) -> None:
    """Each worker reads robots.txt once; neither requests a disallowed path, and the host sees
    its pages at least the Crawl-delay apart across both processes."""
    prefix = f"ri:test:{secrets.token_hex(4)}:"
    with running_fake_web() as (web, base):
        _two_workers("robots_worker", redis_url, prefix, base)
    log = web.log(ROBOTS_HOST)
    assert log.paths.count("/robots.txt") == 2  # once per process
    assert not [p for p in log.paths if p.startswith(("/private/", "/members/"))]
    pages = sorted(t for t, p in zip(log.starts, log.paths, strict=True) if p.startswith("/p/"))
    assert len(pages) == 6
    gaps = [b - a for a, b in itertools.pairwise(pages)]
    assert min(gaps) >= CRAWL_DELAY_S - GAP_TOLERANCE_S, gaps


def test_redis_backend_state_round_trips(redis_url: str) -> None:
    backend = RedisGateBackend.from_url(redis_url, prefix=f"ri:test:{secrets.token_hex(4)}:")
    import asyncio

    from rareindex_connectors._gates.state import GateLimits

    limits = GateLimits(
        concurrency=1,
        min_interval_s=0.0,
        budget_per_minute=None,
        budget_per_day=None,
        circuit_failures=1,
        circuit_cooldown_s=30.0,
        lease_s=60.0,
    )

    async def scenario() -> tuple[str, str, str]:
        first = await backend.try_acquire("h.test", limits, 100.0, "a", probe=False)
        blocked = await backend.try_acquire("h.test", limits, 100.0, "b", probe=False)
        await backend.release("h.test", limits, 101.0, "a", "failure")
        opened = await backend.try_acquire("h.test", limits, 102.0, "c", probe=False)
        await backend.aclose()
        return first.action, blocked.reason, opened.reason

    assert asyncio.run(scenario()) == ("grant", "concurrency", "circuit_open")
