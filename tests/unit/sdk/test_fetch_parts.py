"""Small fetch-layer parts: retry table and backoff, Retry-After, bounded bodies, SSRF, scoring."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import zlib
from email.utils import formatdate

import pytest

from rareindex_connectors import FetchResult
from rareindex_connectors import document_score as score
from rareindex_connectors._engines.body import BodyTooLarge, BoundedBody
from rareindex_connectors._engines.retry import RETRY_STATUSES, backoff_s, parse_retry_after
from rareindex_connectors.errors import UnsafeURL
from rareindex_connectors.runtime import SafeResolver, address_problem


def test_retry_table() -> None:
    assert {408, 429, 500, 502, 503, 504} <= set(RETRY_STATUSES)
    assert not {400, 401, 403, 404, 410} & set(RETRY_STATUSES)


def test_backoff_is_full_jitter_within_the_exponential_cap() -> None:
    samples = [backoff_s(3, base_s=0.5, cap_s=30) for _ in range(2000)]
    assert min(samples) >= 0 and max(samples) <= 4.0
    assert max(samples) > 3.0 and min(samples) < 1.0  # spread over the whole range
    assert max(backoff_s(20, base_s=0.5, cap_s=30) for _ in range(200)) <= 30


def test_retry_after_seconds_and_http_date() -> None:
    now = 1_800_000_000.0
    assert parse_retry_after("2", now=now) == 2.0
    assert parse_retry_after(formatdate(now + 90, usegmt=True), now=now) == pytest.approx(90)
    assert parse_retry_after(formatdate(now - 90, usegmt=True), now=now) == 0.0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None, now=now) is None


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [("gzip", gzip.compress), ("deflate", zlib.compress), (None, lambda b: b)],
)
def test_bounded_body_decodes_and_refuses_at_the_limit(encoding, encode) -> None:  # type: ignore[no-untyped-def]
    data = b"lot 1 charizard " * 1000
    reader = BoundedBody(encoding, limit=len(data))
    payload = encode(data)
    for i in range(0, len(payload), 1000):
        reader.feed(payload[i : i + 1000])
    assert reader.finish() == data
    reader = BoundedBody(encoding, limit=len(data) - 1)
    with pytest.raises(BodyTooLarge):
        for i in range(0, len(payload), 1000):
            reader.feed(payload[i : i + 1000])
        reader.finish()


def test_unknown_encodings_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported content-encoding"):
        BoundedBody("compress", limit=10)


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("169.254.169.254", "link-local (cloud metadata)"),
        ("169.254.10.10", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:a9fe:a9fe::", "link-local (cloud metadata)"),  # 6to4 of 169.254.169.254
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("64:ff9b::10.0.0.1", "private"),  # NAT64
        ("64:ff9b:1::a9fe:a9fe", "link-local (cloud metadata)"),  # local-use NAT64
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),  # Teredo, client 10.0.0.1
        ("2002:808:808::1", None),  # 6to4 of 8.8.8.8
        ("64:ff9b::8.8.8.8", None),
        ("100.100.100.200", "cloud metadata"),
        ("100.64.0.1", "not globally routable"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_problems(address: str, problem: str | None) -> None:
    assert address_problem(ipaddress.ip_address(address)) == problem


class _FakeDNS:
    def __init__(self, answers: dict[str, list[str]]):
        self.answers = answers
        self.calls = 0

    async def addresses(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.answers[host]


def test_a_name_resolving_to_loopback_is_refused_unless_allowed() -> None:
    dns = _FakeDNS({"innocent.example": ["93.184.216.34", "127.0.0.1"]})
    resolver = SafeResolver(dns)
    with pytest.raises(UnsafeURL, match=r"127\.0\.0\.1 is loopback"):
        asyncio.run(resolver.resolve("http://innocent.example/x", allow_private=False))
    target = asyncio.run(resolver.resolve("http://innocent.example/x", allow_private=True))
    assert (target.address, target.port, target.host) == ("93.184.216.34", 80, "innocent.example")
    assert dns.calls == 1  # cached: the checked answer is the one connected to


@pytest.mark.parametrize("url", ["file:///etc/passwd", "gopher://x/", "http:///nohost"])
def test_only_http_urls_with_a_host(url: str) -> None:
    with pytest.raises(UnsafeURL):
        asyncio.run(SafeResolver(_FakeDNS({})).resolve(url, allow_private=True))


def _result(body: bytes) -> FetchResult:
    return FetchResult(url="u", status=200, content=body, engine="api")


def test_document_score() -> None:
    page = b"<html><head><title>Lot 1</title></head><body>" + b"x" * 300 + b"</body></html>"
    assert score(_result(page), "text") == 1.0
    assert score(_result(b""), "text") == 0.0
    assert score(_result(b"{not json"), "json") == 0.0
    assert score(_result(b"[]"), "json") == 0.5
    assert score(_result(b'{"products": [1]}'), "json") == 1.0
    assert score(_result(b"\x89PNG"), "binary") == 1.0


def test_static_connect_to_keeps_the_name_and_moves_the_port() -> None:
    resolver = SafeResolver(
        _FakeDNS({}),
        static={
            "shop.fake.test": "127.0.0.1:8765",
            "v6.fake.test": "[::1]:9000",
            "plain.fake.test": "127.0.0.1",
        },
    )
    target = asyncio.run(
        resolver.resolve("http://shop.fake.test/products.json", allow_private=True)
    )
    assert (target.host, target.address, target.port) == ("shop.fake.test", "127.0.0.1", 8765)
    v6 = asyncio.run(resolver.resolve("http://v6.fake.test/", allow_private=True))
    assert (v6.address, v6.port) == ("::1", 9000)
    plain = asyncio.run(resolver.resolve("http://plain.fake.test:81/", allow_private=True))
    assert plain.port == 81
    with pytest.raises(UnsafeURL, match="loopback"):
        asyncio.run(resolver.resolve("http://shop.fake.test/", allow_private=False))
    with pytest.raises(ValueError):
        SafeResolver(static={"x.test": "not-an-address"})
