"""Fault: URLs that came from outside aim at our own network — every SSRF vector of the fetch
issue, and a few spellings of them, through every entry point that fetches a URL.

Vectors: a private address (``10.0.0.1``), the cloud metadata address (``169.254.169.254``), IPv6
loopback (``[::1]``), an allowed host that redirects into private space and into the metadata
address, a host name that resolves to 127.0.0.1 (``localhost``), and 127.0.0.1 itself written
plainly, as one decimal number, IPv4-mapped IPv6 and ``0.0.0.0``. The loopback ones point at the
port the fake web listens on, so a leak would be a request the fake web records.

Entry points: a crawl (``rareindex crawl`` in a process of its own, one connector per vector whose
``crawl()`` fetches it); a connector's ``lookup()`` called through the production fetch stack
without the service's own pre-check; the lookup service (``rareindex.certs.lookup``) and
``rareindex cert lookup`` in processes of their own; ``POST /api/lookup``; the health worker's
probe (``probe_connector``); and the paid engine (Firecrawl) for the direct addresses (a paid
engine's vendor follows redirects on its own network, so only the first URL is ours to check).

What must hold: every one is refused as ``unsafe_url`` before anything is sent to the address —
the fake web sees no request except the first, allowed hop of the redirecting host — nothing is
stored, and the paid vendor is never called. The same entry points fetch an allowed fake-web URL,
so a refusal is the policy's doing, not a broken door. (The suite's guard refuses any non-loopback
connection in this process and the ones it starts — ``loopback_only/`` — so even with the policy
removed, as the exercise is run to prove it bites, no vector becomes a packet off this machine.)
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select

from rareindex.certs.lookup import lookup
from rareindex.certs.verify import crawl_context
from rareindex.errors import LookupRefused
from rareindex.fetching import build_fetch_stack
from rareindex.health_check import probe_connector
from rareindex.registry import load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import make_engine, upgrade
from rareindex.storage.schema import (
    certificate_sightings,
    certificates,
    connector_runs,
    raw_records,
)
from rareindex.storage.tokens import create_token
from rareindex_connectors.errors import UnsafeURL
from rareindex_fakeweb import FAKE_HOSTS
from tests.unit.rareindex.api.api_helpers import bearer, make_app

from .conftest import FaultyWeb, connectors_dir, fleet_env

ALLOWED = "http://json.fake.test/items/1.json"
REDIRECTS = ("redirect-private", "redirect-metadata")
# Bounded waits should the check ever be removed (the exercise is run that way to prove it bites).
POLICY = """{"defaults": {"timeout_ms": 1500},
 "domains": {"json.fake.test": {"engines": ["api", "firecrawl"]}}}"""
PROBE = '''
from rareindex_connectors import ConnectorHealth, ConnectorMeta
from rareindex_connectors.records import RawRecordInput, parse_normalized

TARGET = {target!r}


class Probe:
    """Fetches a URL that came from outside: only the SSRF policy stands in the way."""

    meta = ConnectorMeta(
        id={slug!r}, source={source!r}, engines=("api",), categories=("other",),
        capabilities={capabilities!r}, url_patterns={patterns!r},
    )
    version = "1"
    parser_version = "1"

    async def crawl(self, ctx):
        page = await ctx.fetch(TARGET, expect="text")
        yield RawRecordInput(external_id="1", url=TARGET, payload={{"text": page.text[:100]}})

    def normalize(self, raw):
        record = {{"kind": "listing", "external_id": "1", "title": "PSA 10 12345678",
                   "price": {{"amount": "1.00", "currency": "USD"}}}}
        return [parse_normalized(record)]

    async def health_check(self, ctx):
        await ctx.fetch(TARGET, expect="text")
        return ConnectorHealth(status="UP")

    async def lookup(self, url, ctx):
        page = await ctx.fetch(url, expect="text")
        return [RawRecordInput(external_id="1", url=url, payload={{"text": page.text[:100]}})]


connector = Probe()
'''


def vectors(port: int) -> dict[str, str]:
    return {
        "private": "http://10.0.0.1/itm/1",
        "metadata": "http://169.254.169.254/latest/meta-data/",
        "ipv6-loopback": f"http://[::1]:{port}/items/1.json",
        "redirect-private": "http://redirect.fake.test/private",
        "redirect-metadata": "http://redirect.fake.test/metadata",
        "name-to-loopback": f"http://localhost:{port}/items/1.json",
        "loopback": f"http://127.0.0.1:{port}/items/1.json",
        "decimal-loopback": f"http://2130706433:{port}/items/1.json",
        "mapped-loopback": f"http://[::ffff:127.0.0.1]:{port}/items/1.json",
        "unspecified": f"http://0.0.0.0:{port}/items/1.json",
    }


def write_connectors(tmp_path: Path, targets: dict[str, str]) -> Path:
    root = connectors_dir(tmp_path, {}, extra=POLICY)
    (root / "api").mkdir()
    for name, target in {**targets, "allowed": ALLOWED}.items():
        (root / "api" / f"ssrf-{name}.py").write_text(
            PROBE.format(
                target=target, slug=f"ssrf-{name}", source=f"SSRF {name}",
                capabilities=("listing",), patterns=(),
            )
        )  # fmt: skip
    (root / "api" / "any-page.py").write_text(
        PROBE.format(
            target=ALLOWED, slug="any-page", source="Any page",
            capabilities=("listing", "url_lookup"), patterns=(r"^https?://",),
        )
    )  # fmt: skip
    return root


def count(db: Engine, table: Any) -> int:
    with db.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def test_every_ssrf_vector_is_refused_through_every_entry_point(
    request: pytest.FixtureRequest,
    faulty_web: FaultyWeb,
    fake_firecrawl: Callable[..., tuple[Any, str]],
    tmp_path: Path,
) -> None:
    targets = vectors(faulty_web.port)
    root = write_connectors(tmp_path, targets)
    db_url = f"sqlite:///{tmp_path / 'rareindex.db'}"
    db = make_engine(db_url)
    request.addfinalizer(db.dispose)
    upgrade(db)
    fake, firecrawl_url = fake_firecrawl()
    connect_to = {h: f"127.0.0.1:{faulty_web.port}" for h in FAKE_HOSTS}
    settings = Settings(
        _env_file=None,
        database_url=db_url,
        connectors_dir=root,
        data_dir=tmp_path,
        connect_to=connect_to,
        firecrawl_api_key="fc-test",
        firecrawl_api_url=firecrawl_url,
    )
    registry = load_registry(root)
    env = fleet_env(
        database_url=db_url,
        broker_url=None,
        connectors_dir=root,
        data_dir=tmp_path,
        web_port=faulty_web.port,
    )

    def cli(*args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "workers", *args],
            env=env,
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    # The processes first (they take a while to start), then the in-process doors meanwhile.
    # --raw-only: this exercise is about what is fetched; indexing is tested elsewhere
    crawl = cli("crawl", "--raw-only", *(f"ssrf-{name}" for name in [*targets, "allowed"]))
    # The CLI wraps the lookup service checked below for every vector; here one direct address
    # and one redirect show its door (a one-line error, exit 2).
    cert_cli = {name: cli("cert", "lookup", targets[name]) for name in ("private", REDIRECTS[1])}
    try:
        refused = _doors(targets, registry, db, settings, tmp_path, root, connect_to)
        outputs = {name: p.communicate(timeout=120) for name, p in cert_cli.items()}
        _crawl_out, crawl_err = crawl.communicate(timeout=120)
    finally:
        for process in [crawl, *cert_cli.values()]:
            if process.poll() is None:
                process.kill()
                process.communicate(timeout=10)

    assert crawl.returncode == 1, crawl_err[-2000:]  # runs failed: exit 1
    for name, process in cert_cli.items():
        _out, err = outputs[name]
        lines = err.strip().splitlines()
        assert process.returncode == 2 and len(lines) == 1 and "refused" in lines[0], err
        refused[name]["rareindex cert lookup"] = "unsafe_url"
    with db.connect() as conn:
        query = select(connector_runs.c.connector_id, connector_runs.c.failure_reason)
        runs = {connector_id: reason for connector_id, reason in conn.execute(query)}
    assert runs.pop("ssrf-allowed") is None  # the allowed page was crawled
    for name in targets:
        if runs.get(f"ssrf-{name}") == "unsafe_url":
            refused[name]["rareindex crawl"] = "unsafe_url"

    doors = {
        "connector.lookup",
        "certs.lookup",
        "health probe",
        "POST /api/lookup",
        "rareindex crawl",
    }
    expected = {
        name: dict.fromkeys(
            doors
            | ({"firecrawl"} if name not in REDIRECTS else set())
            | ({"rareindex cert lookup"} if name in cert_cli else set()),
            "unsafe_url",
        )
        for name in targets
    }
    assert refused == expected

    # Nothing reached a forbidden address: the fake web saw only the redirecting host's first
    # hops and the allowed page; the paid vendor saw only the allowed page.
    assert {h.host for h in faulty_web.hits} == {"redirect.fake.test", "json.fake.test"}
    # (robots.txt, which each fetch stack reads before a host's first page, is not a hop)
    redirect_hops = len([h for h in faulty_web.of("redirect.fake.test") if h.path != "/robots.txt"])
    assert redirect_hops == len(REDIRECTS) * 5 + 1  # 5 doors each, 1 CLI lookup: first hop only
    assert len(fake.calls) == 1
    # Nothing stored but what the allowed page gave.
    assert count(db, raw_records) == 1
    with db.connect() as conn:
        seen = set(conn.execute(select(certificate_sightings.c.url)).scalars())
    assert seen == {ALLOWED} and count(db, certificates) == 1


def _doors(
    targets: dict[str, str],
    registry: Any,
    db: Engine,
    settings: Settings,
    tmp_path: Path,
    root: Path,
    connect_to: dict[str, str],
) -> dict[str, dict[str, str]]:
    """Every in-process door, each vector through each: {vector: {door: "unsafe_url"}}."""
    refused: dict[str, dict[str, str]] = {name: {} for name in targets}

    async def in_process() -> None:
        stack = build_fetch_stack(settings)
        try:
            any_page = registry.get("any-page")
            for name, url in targets.items():
                try:  # a connector's lookup(), with no service in front of it
                    await any_page.lookup(url, crawl_context(any_page, stack))
                except UnsafeURL:
                    refused[name]["connector.lookup"] = "unsafe_url"
                try:  # the lookup service (what the CLI and the API call)
                    await lookup(db, settings, url, registry=registry, stack=stack)
                except LookupRefused as exc:
                    refused[name]["certs.lookup"] = exc.reason
                probed, _ = await probe_connector(registry.get(f"ssrf-{name}"), stack, timeout_s=10)
                if probed.error == "UnsafeURL":
                    refused[name]["health probe"] = "unsafe_url"
                if name in REDIRECTS:
                    continue
                try:  # a paid engine is asked to fetch it for us
                    await stack.router.fetch(url, engines=("firecrawl",))
                except UnsafeURL:
                    refused[name]["firecrawl"] = "unsafe_url"
            # The same doors open for an allowed page.
            assert await any_page.lookup(ALLOWED, crawl_context(any_page, stack))
            assert (await lookup(db, settings, ALLOWED, registry=registry, stack=stack)).sightings
            probed, _ = await probe_connector(registry.get("ssrf-allowed"), stack, timeout_s=10)
            assert (probed.status, probed.error) == ("UP", None)
            paid = await stack.router.fetch(ALLOWED, engines=("firecrawl",))
            assert (paid.status, paid.engine) == (200, "firecrawl")
        finally:
            await stack.aclose()

    asyncio.run(in_process())

    token = create_token(db, "monitor").token
    app = make_app(db, tmp_path, connectors_dir=root, connect_to=connect_to)
    with TestClient(app) as client:
        for name, url in targets.items():
            answer = client.post("/api/lookup", json={"url": url}, headers=bearer(token))
            if answer.status_code == 422 and answer.json()["error"] == "unsafe_url":
                refused[name]["POST /api/lookup"] = "unsafe_url"
        ok = client.post("/api/lookup", json={"url": ALLOWED}, headers=bearer(token))
        assert ok.status_code == 200, ok.text

    return refused


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An HTTP proxy from the environment must not turn a refusal into a proxied request."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
