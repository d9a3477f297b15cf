"""The robots.txt cache and its policy keys: revisit interval, "retry later" remembered, a
Crawl-delay that only raises, a written permission that only the operator's file can grant."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from rareindex_connectors._robots import RETRY_UNAVAILABLE_S, RobotsCache, robots_delay
from rareindex_connectors.errors import PolicyError, RobotsUnavailable
from rareindex_connectors.runtime import (
    DomainPolicy,
    HostGates,
    MemoryGateBackend,
    PolicySet,
    RobotsRules,
)

ORIGIN = "https://shop.example"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_rules_are_read_once_and_again_after_the_revisit_interval() -> None:
    clock, reads = Clock(), []

    async def read(url: str) -> tuple[int, bytes]:
        reads.append(url)
        return 200, b"User-agent: *\nDisallow: /cart\n"

    cache = RobotsCache(clock=clock)
    policy = DomainPolicy(robots_revisit_ms=3_600_000)

    async def scenario() -> None:
        await asyncio.gather(*(cache.rules(ORIGIN, policy, read) for _ in range(5)))
        clock.now += 3_599
        await cache.rules(ORIGIN, policy, read)
        clock.now += 2
        await cache.rules(ORIGIN, policy, read)

    asyncio.run(scenario())
    assert reads == [f"{ORIGIN}/robots.txt"] * 2  # five concurrent first asks: one read


def test_an_unreachable_robots_txt_is_remembered_then_asked_again() -> None:
    clock, reads = Clock(), []

    async def read(url: str) -> tuple[int, bytes]:
        reads.append(url)
        if len(reads) == 1:
            raise RobotsUnavailable("503", url=url)
        return 404, b""

    cache = RobotsCache(clock=clock)

    async def scenario() -> RobotsRules:
        for _ in range(2):
            with pytest.raises(RobotsUnavailable):
                await cache.rules(ORIGIN, DomainPolicy(), read)
        clock.now += RETRY_UNAVAILABLE_S
        return await cache.rules(ORIGIN, DomainPolicy(), read)

    assert asyncio.run(scenario()).verdict == "allow_all"
    assert len(reads) == 2


def test_the_delay_is_the_stricter_of_crawl_delay_and_request_rate() -> None:
    assert robots_delay(RobotsRules.parse("User-agent: *\nCrawl-delay: 4\n")) == 4.0
    assert robots_delay(RobotsRules.parse("User-agent: *\nRequest-rate: 1/10s\n")) == 10.0
    assert robots_delay(RobotsRules.parse("User-agent: *\nDisallow: /x\n")) is None


def test_a_gate_interval_is_only_ever_raised() -> None:
    gates = HostGates(MemoryGateBackend())
    assert gates.raise_interval("shop.example", 2.0)
    assert not gates.raise_interval("shop.example", 0.5)
    assert gates.interval_floor("shop.example") == 2.0


def _load(tmp_path: Path, base: dict[str, object], fragment: dict[str, object]) -> PolicySet:
    (tmp_path / "domains.d").mkdir(exist_ok=True)
    (tmp_path / "domains.json").write_text(json.dumps(base))
    (tmp_path / "domains.d" / "store.json").write_text(json.dumps(fragment))
    return PolicySet.load(tmp_path)


def test_only_the_operator_s_file_can_grant_a_robots_permission(tmp_path: Path) -> None:
    grant = {"robots_permission": "email from the owner, 2026-11-03"}
    with pytest.raises(PolicyError, match=r"store\.json.*robots_permission"):
        _load(tmp_path, {"domains": {}}, {"domains": {"*.com": grant}})
    with pytest.raises(PolicyError, match="robots_revisit_ms"):
        _load(tmp_path, {"domains": {}}, {"defaults": {"robots_revisit_ms": 172_800_000}})
    policies = _load(tmp_path, {"domains": {"shop.com": grant}}, {"domains": {}})
    assert policies.for_host("shop.com").robots_permission == grant["robots_permission"]
    assert policies.for_host("other.com").robots_permission is None
