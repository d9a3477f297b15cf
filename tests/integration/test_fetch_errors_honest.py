"""Honest errors from the api engine over real sockets and the real resolver.

* A name under ``.invalid`` (RFC 6761: never resolves) is retried with backoff, then ``DNSError``
  (``dns_error``) — not ``UnsafeURL``, which stays for names that resolve to refused addresses.
* A TLS server on 127.0.0.1 with a certificate made here: self-signed, or signed by a CA we trust
  but for another name, or no TLS at all, is ``TLSError`` (``tls_error``) after one connection.
* The user agent's contact: ``RI_USER_AGENT``, else the project's URL, per host from the policy.
"""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import pytest
import structlog
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from httpx_aiohttp import AiohttpTransport

from rareindex_connectors._engines import FetchRequest, bot_user_agent
from rareindex_connectors.errors import (
    DNSError,
    PermanentFetchError,
    TLSError,
    TransientFetchError,
    UnsafeURL,
)
from rareindex_connectors.runtime import ApiEngine, PolicySet, SafeResolver, SystemResolver
from rareindex_fakeweb.fake_web import FakeWeb
from tests.integration.fetch_helpers import api_engine, running_fake_web

TLS_HOST = "tls.fake.test"
FAST = {"api": {"backoff_base_ms": 5}}


def _policy(host: str, **extra: Any) -> PolicySet:
    return PolicySet.from_mapping(
        {
            "defaults": {"min_interval_ms": 0, "circuit_failures": 100},
            "domains": {host: {"engine_options": FAST, **extra}},
        }
    )


def _run(engine: ApiEngine, url: str) -> Any:
    async def go() -> Any:
        try:
            return await engine.fetch(FetchRequest(url))
        finally:
            await engine.aclose()

    return asyncio.run(go())


# --- DNS ------------------------------------------------------------------------------------


class _Counting:
    """The system resolver, counting lookups."""

    def __init__(self) -> None:
        self.calls = 0
        self._system = SystemResolver()

    async def addresses(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return await self._system.addresses(host, port)


def test_a_name_that_never_resolves_is_retried_then_dns_error() -> None:
    host = "rareindex-no-such-shop.invalid"
    dns = _Counting()
    engine = ApiEngine(
        policies=_policy(host, max_retries=2),
        resolver=SafeResolver(dns, timeout_s=2.0),
    )
    with structlog.testing.capture_logs() as logs, pytest.raises(DNSError) as excinfo:
        _run(engine, f"https://{host}/products.json")
    assert isinstance(excinfo.value, TransientFetchError)
    assert not isinstance(excinfo.value, UnsafeURL)
    assert dns.calls == 3  # the first try and two retries
    retries = [e for e in logs if e["event"] == "fetch.retrying"]
    assert [e["error"] for e in retries] == ["DNSError", "DNSError"]


def test_a_name_that_resolves_to_loopback_is_unsafe_and_never_retried() -> None:
    dns = _Counting()
    engine = ApiEngine(policies=_policy("localhost", max_retries=2), resolver=SafeResolver(dns))
    with pytest.raises(UnsafeURL, match="is loopback"):
        _run(engine, "http://localhost/admin")
    assert dns.calls == 1


# --- TLS ------------------------------------------------------------------------------------


def _certificate(directory: Path, name: str, *, issuer: tuple[Any, Any] | None = None) -> Any:
    """A certificate for ``name`` (self-signed, or signed by ``issuer``): (cert, key, paths)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_cert, issuer_key = issuer or (None, key)
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_cert.subject if issuer_cert else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
        .sign(issuer_key, hashes.SHA256())
    )
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key, cert_path, key_path


@contextmanager
def _https_server(cert_path: Path | None, key_path: Path | None) -> Iterator[tuple[int, list[str]]]:
    """An HTTPS server on 127.0.0.1 (plain HTTP when ``cert_path`` is None) answering 200.

    Yields its port and a list with one entry per connection: ``"ok"`` or the handshake error.
    """
    context = None
    if cert_path is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert_path, key_path)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    connections: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            try:
                stream = context.wrap_socket(conn, server_side=True) if context else conn
                stream.recv(65536)
                stream.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b'content-length: 11\r\nconnection: close\r\n\r\n{"ok":true}'
                )
                connections.append("ok")
                stream.close()
            except (OSError, ssl.SSLError) as exc:
                connections.append(type(exc).__name__)
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], connections
    finally:
        stop.set()
        thread.join(2)
        listener.close()


def _tls_engine(port: int, trust: Path | None = None) -> ApiEngine:
    """The api engine, connecting ``tls.fake.test`` to the local port; ``trust`` adds a CA."""
    client = None
    if trust is not None:
        verify = ssl.create_default_context(cafile=str(trust))
        transport = AiohttpTransport(verify=verify, trust_env=False)
        client = httpx.AsyncClient(transport=transport, trust_env=False)
    return ApiEngine(
        policies=_policy(TLS_HOST, max_retries=3, allow_private_network=True),
        resolver=SafeResolver(static={TLS_HOST: f"127.0.0.1:{port}"}),
        client=client,
    )


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("tls")
    ca_cert, ca_key, ca_path, _ = _certificate(directory, "RareIndex Test CA")
    paths = {"ca": ca_path}
    for name in (TLS_HOST, "wrong.example"):
        _, _, paths[name], paths[f"{name}.key"] = _certificate(
            directory, name, issuer=(ca_cert, ca_key)
        )
    alone = directory / "self-signed"
    alone.mkdir()
    _, _, paths["self-signed"], paths["self-signed.key"] = _certificate(alone, TLS_HOST)
    return paths


def test_a_certificate_for_the_right_name_from_a_trusted_ca_is_fetched(
    certs: dict[str, Path],
) -> None:
    # The control: the server and the trust set-up work, so the failures below are the certs.
    with _https_server(certs[TLS_HOST], certs[f"{TLS_HOST}.key"]) as (port, connections):
        result = _run(_tls_engine(port, trust=certs["ca"]), f"https://{TLS_HOST}/p.json")
    assert result.status == 200 and result.content == b'{"ok":true}'
    assert connections == ["ok"]


def test_a_certificate_for_another_name_is_a_tls_error_without_retries(
    certs: dict[str, Path],
) -> None:
    server = _https_server(certs["wrong.example"], certs["wrong.example.key"])
    with server as (port, connections), pytest.raises(TLSError, match="Hostname") as excinfo:
        _run(_tls_engine(port, trust=certs["ca"]), f"https://{TLS_HOST}/p.json")
    assert isinstance(excinfo.value, PermanentFetchError)
    assert len(connections) == 1  # max_retries is 3: none was used


def test_a_self_signed_certificate_is_a_tls_error_without_retries(certs: dict[str, Path]) -> None:
    server = _https_server(certs["self-signed"], certs["self-signed.key"])
    with server as (port, connections), pytest.raises(TLSError, match="self-signed certificate"):
        _run(_tls_engine(port), f"https://{TLS_HOST}/p.json")
    assert len(connections) == 1


def test_a_server_that_does_not_speak_tls_is_a_tls_error_without_retries() -> None:
    with _https_server(None, None) as (port, connections), pytest.raises(TLSError):
        _run(_tls_engine(port), f"https://{TLS_HOST}/p.json")
    assert len(connections) == 1


# --- the user agent's contact ---------------------------------------------------------------


def test_the_contact_in_the_user_agent_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    contact = "https://example.org/our-crawler"
    api_options = {"engine_options": {"api": {"contact": contact}}}
    policy = FakeWeb.policy(**{"flaky.fake.test": api_options})
    monkeypatch.setenv("RI_USER_AGENT", "mailto:crawl@example.org")
    with running_fake_web() as (web, base):
        for host in ("json.fake.test", "flaky.fake.test"):
            url = web.url(base, host, "/items/1.json" if host == "json.fake.test" else "/flap")
            with suppress(TransientFetchError):  # /flap answers 503 first: only the UA matters
                _run(api_engine(policy), url)
    assert web.log("json.fake.test").user_agents == {bot_user_agent("mailto:crawl@example.org")}
    assert web.log("flaky.fake.test").user_agents == {bot_user_agent(contact)}
