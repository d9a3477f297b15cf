"""Honest fetch errors without sockets: DNS, TLS, cut-short and undecodable bodies, the contact in
the user agent, and the run's failure reason for each (a respx router as the transport, fake
resolvers)."""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import respx

from rareindex_connectors._engines import FetchRequest
from rareindex_connectors._engines.api import DEFAULT_CONTACT
from rareindex_connectors._version import __version__
from rareindex_connectors.errors import (
    DNSError,
    FetchError,
    PermanentFetchError,
    PolicyError,
    TLSError,
    TransientFetchError,
    TruncatedBody,
    UndecodableBody,
    UnsafeURL,
)
from rareindex_connectors.runtime import ApiEngine, PolicySet, SafeResolver

URL = "https://shop.example/products.json"
HOST = "shop.example"
FAST = {"api": {"backoff_base_ms": 0}}


class _DNS:
    """A resolver that fails (or hangs, or answers) as told, counting its calls."""

    def __init__(self, answer: Callable[[], list[str]] | None = None, *, hang: bool = False):
        self.answer = answer
        self.hang = hang
        self.calls = 0

    async def addresses(self, host: str, port: int) -> list[str]:
        self.calls += 1
        if self.hang:
            await asyncio.sleep(30)
        if self.answer is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answer()


class _Body(httpx.AsyncByteStream):
    """A body that arrives as it would off a socket: neither ``content=`` nor a ``ByteStream``,
    which httpx and respx read ahead, so the engine's own raw reads see the bytes as sent."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.body


def _response(status: int, body: bytes = b"", **headers: str) -> httpx.Response:
    """A streamed response, as a real transport gives it."""
    headers = {k.replace("_", "-"): v for k, v in headers.items()}
    return httpx.Response(status, headers=headers, stream=_Body(body))


def _resolve(resolver: SafeResolver, url: str = URL) -> Any:
    return asyncio.run(resolver.resolve(url, allow_private=False))


def test_a_name_that_does_not_resolve_is_a_transient_dns_error_not_unsafe() -> None:
    with pytest.raises(DNSError, match=r"cannot resolve shop\.example") as excinfo:
        _resolve(SafeResolver(_DNS()))
    assert isinstance(excinfo.value, TransientFetchError)
    assert not isinstance(excinfo.value, UnsafeURL)
    with pytest.raises(DNSError, match="resolves to no address"):
        _resolve(SafeResolver(_DNS(lambda: [])))


def test_a_resolver_that_does_not_answer_is_a_dns_error_within_its_timeout() -> None:
    with pytest.raises(DNSError, match=r"no answer within 0\.05 s"):
        _resolve(SafeResolver(_DNS(hang=True), timeout_s=0.05))


def test_a_name_resolving_to_a_private_address_is_still_unsafe() -> None:
    with pytest.raises(UnsafeURL, match=r"10\.0\.0\.7 is private"):
        _resolve(SafeResolver(_DNS(lambda: ["10.0.0.7"])))


def test_a_name_with_an_impossible_label_is_unsafe_not_a_dns_outage() -> None:
    class Idna:
        async def addresses(self, host: str, port: int) -> list[str]:
            raise UnicodeError("label too long")

    with pytest.raises(UnsafeURL, match="is not a host name"):
        _resolve(SafeResolver(Idna()))


class _Calls:
    """The far end: a respx route answering every request with ``respond(request)`` (a response,
    or an exception it raises); ``requests`` are the requests that reached it, in order.

    respx re-raises a side effect's exception ``from`` its own wrapper, which replaces the
    exception's cause. ``chained=True`` answers without respx, for the one test whose error must
    keep the cause chain httpx-aiohttp builds (the TLS failure under a ``ConnectTimeout``).
    """

    def __init__(
        self, respond: Callable[[httpx.Request], httpx.Response], *, chained: bool = False
    ):
        self.respond = respond
        self.router = respx.Router(assert_all_called=False)
        self.route = self.router.route().mock(side_effect=respond)
        self._direct: list[httpx.Request] | None = [] if chained else None

    @property
    def requests(self) -> list[httpx.Request]:
        if self._direct is not None:
            return self._direct
        return [call.request for call in self.route.calls]

    def transport(self) -> httpx.MockTransport:
        direct = self._direct
        if direct is None:
            return httpx.MockTransport(self.router.async_handler)

        def answer(request: httpx.Request) -> httpx.Response:
            direct.append(request)
            return self.respond(request)

        return httpx.MockTransport(answer)


def _engine(
    calls: _Calls,
    *,
    resolver: SafeResolver | None = None,
    contact_url: str | None = None,
    **policy: Any,
) -> ApiEngine:
    policies = PolicySet.from_mapping(
        {
            "defaults": {"min_interval_ms": 0, "circuit_failures": 100},
            "domains": {HOST: {"engine_options": FAST, **policy}},
        }
    )
    client = httpx.AsyncClient(transport=calls.transport())
    resolver = resolver or SafeResolver(static={HOST: "93.184.216.34"})
    return ApiEngine(policies=policies, resolver=resolver, client=client, contact_url=contact_url)


def _fetch(engine: ApiEngine) -> Any:
    async def go() -> Any:
        try:
            return await engine.fetch(FetchRequest(URL))
        finally:
            await engine.aclose()

    return asyncio.run(go())


def test_dns_failures_are_retried_with_backoff_then_reported_as_dns_error() -> None:
    dns = _DNS()
    calls = _Calls(lambda r: httpx.Response(200))
    with pytest.raises(DNSError):
        _fetch(_engine(calls, resolver=SafeResolver(dns), max_retries=2))
    assert dns.calls == 3 and calls.requests == []  # retried twice, nothing ever sent


def _tls_failure(request: httpx.Request) -> httpx.Response:
    # What httpx-aiohttp raises for a certificate for another name: a ConnectTimeout whose cause
    # is aiohttp's error, whose cause is the ssl error.
    cert = ssl.SSLCertVerificationError(1, "certificate verify failed")
    cert.verify_message = "Hostname mismatch, certificate is not valid for 'shop.example'"
    inner = OSError("Cannot connect to host 93.184.216.34:443 ssl:True")
    inner.__cause__ = cert
    raise httpx.ConnectTimeout(str(inner)) from inner


def test_a_tls_failure_is_permanent_and_never_retried() -> None:
    calls = _Calls(_tls_failure, chained=True)
    with pytest.raises(TLSError, match="Hostname mismatch") as excinfo:
        _fetch(_engine(calls, max_retries=3))
    assert isinstance(excinfo.value, PermanentFetchError)
    assert len(calls.requests) == 1


def test_a_connect_timeout_without_tls_in_it_is_still_retried() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out")

    calls = _Calls(timeout)
    with pytest.raises(TransientFetchError) as excinfo:
        _fetch(_engine(calls, max_retries=2))
    assert not isinstance(excinfo.value, TLSError) and len(calls.requests) == 3


def test_a_truncated_body_is_retried_once_whatever_max_retries_says() -> None:
    cut = gzip.compress(b'{"products": []}' * 50)[:-12]
    calls = _Calls(lambda r: _response(200, cut, content_encoding="gzip"))
    with pytest.raises(TruncatedBody):
        _fetch(_engine(calls, max_retries=5))
    assert len(calls.requests) == 2
    calls = _Calls(calls.respond)
    with pytest.raises(TruncatedBody):
        _fetch(_engine(calls, max_retries=0))
    assert len(calls.requests) == 1  # max_retries 0 still means no retry


def test_fewer_bytes_than_content_length_is_truncated_even_when_the_transport_is_silent() -> None:
    def short(request: httpx.Request) -> httpx.Response:
        return _response(200, b"x" * 60, content_length="100")

    calls = _Calls(short)
    with pytest.raises(TruncatedBody, match="60 bytes of a 100-byte Content-Length"):
        _fetch(_engine(calls, max_retries=3))
    assert len(calls.requests) == 2


def test_a_304_with_a_content_length_is_not_truncated() -> None:
    def not_modified(request: httpx.Request) -> httpx.Response:
        return _response(304, content_length="1234", content_encoding="gzip")

    assert _fetch(_engine(_Calls(not_modified))).not_modified


def test_an_encoding_we_cannot_decode_is_permanent_and_never_retried() -> None:
    calls = _Calls(lambda r: _response(200, b"\x1f\x9d\x90", content_encoding="compress"))
    with pytest.raises(UndecodableBody, match="unsupported content-encoding 'compress'"):
        _fetch(_engine(calls, max_retries=3))
    assert len(calls.requests) == 1


def _user_agent(**kwargs: Any) -> str:
    calls = _Calls(lambda r: _response(200, b"{}"))
    _fetch(_engine(calls, **kwargs))
    return calls.requests[0].headers["user-agent"]


def test_the_contact_defaults_to_the_project_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RI_USER_AGENT", raising=False)
    assert _user_agent() == f"RareIndexBot/{__version__} (+{DEFAULT_CONTACT})"
    assert DEFAULT_CONTACT.startswith("https://")


def test_the_contact_comes_from_ri_user_agent_then_the_host_policy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RI_USER_AGENT", "mailto:crawl@example.org")
    assert _user_agent() == f"RareIndexBot/{__version__} (+mailto:crawl@example.org)"
    policy = {"api": {"backoff_base_ms": 0, "contact": "https://example.org/our-bot"}}
    agent = _user_agent(engine_options=policy)
    assert agent == f"RareIndexBot/{__version__} (+https://example.org/our-bot)"
    assert _user_agent(user_agent="browser").startswith("Mozilla/5.0")


@pytest.mark.parametrize("contact", ["", "x\r\nX-Evil: 1", "me (really)", "é@example.org"])
def test_a_contact_that_cannot_stand_in_a_header_is_refused(
    contact: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(PolicyError, match="contact in the user agent"):
        _user_agent(engine_options={"api": {"contact": contact}})
    if contact:
        monkeypatch.setenv("RI_USER_AGENT", contact)
        with pytest.raises(PolicyError, match="RI_USER_AGENT"):
            _engine(_Calls(lambda r: httpx.Response(200)))


def test_unknown_api_engine_options_are_refused_with_the_valid_ones() -> None:
    with pytest.raises(PolicyError, match="valid: backoff_base_ms, contact"):
        _user_agent(engine_options={"api": {"contact_email": "x@example.org"}})
    with pytest.raises(PolicyError, match="backoff_base_ms"):
        _user_agent(engine_options={"api": {"backoff_base_ms": "fast"}})


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (DNSError, "dns_error"),
        (TLSError, "tls_error"),
        (TruncatedBody, "truncated_body"),
        (UndecodableBody, "undecodable_body"),
        (UnsafeURL, "unsafe_url"),
    ],
)
def test_each_error_ends_a_run_with_its_own_reason(error: type[FetchError], reason: str) -> None:
    from rareindex.crawl import failure_reason
    from rareindex.storage.runs import FAILURE_REASONS

    assert failure_reason(error("x", url=URL, host=HOST, engine="api")) == reason
    assert reason in FAILURE_REASONS
