"""The admin API against its own OpenAPI document, fuzzed by schemathesis over a real socket.

One ``rareindex api`` process serves an embedded SQLite database seeded with the admin API's test
index (sources, connectors, runs, sales, a dead letter, a pending certificate); its only connector
is the grading registry, whose host is the fake web on 127.0.0.1, so a cert lookup is verified for
real and a listing URL is refused or read from the fake web. In the API process the loopback-only
guard refuses any connection off 127.0.0.1, and name lookups other than the fake web's
(``RI_CONNECT_TO``) fail at once, so no generated host name reaches a DNS server. Every operation is
generated from the document the server publishes and run through every default check (status codes
and bodies as documented, negative data rejected, positive data accepted, auth not ignored, …) three
ways: with an admin token, with a read token, and with no token at all. Examples per operation are
few and no deadline applies, so the file stays within about a minute on a slow machine.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import BaseSchema, Case
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import positive_data_acceptance

from rareindex.storage import make_engine
from rareindex.storage.cert_store import add_pending
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from tests.cli_helpers import REPO
from tests.subprocess_env import subprocess_env
from tests.unit.rareindex.api.api_helpers import make_app, seed

GUARD = REPO / "tests" / "faults" / "loopback_only"
NO_DNS = """
import importlib.util
import ipaddress
import socket

# the loopback-only guard (it installs itself when loaded) ...
_spec = importlib.util.spec_from_file_location("_loopback_guard", {guard!r})
_spec.loader.exec_module(importlib.util.module_from_spec(_spec))

# ... and no DNS: the fuzzer's URLs name random hosts, whose lookups must not leave the machine
_getaddrinfo = socket.getaddrinfo


def _no_dns(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    try:
        if name is None or name == "localhost" or ipaddress.ip_address(name.split("%")[0]):
            return _getaddrinfo(host, *args, **kwargs)
    except ValueError:
        pass
    raise socket.gaierror(socket.EAI_NONAME, f"no DNS in this test: {{name!r}}")


socket.getaddrinfo = _no_dns
"""
"""The API process's ``sitecustomize``: the fake web's hosts come from ``RI_CONNECT_TO``."""
EXAMPLES = 5
"""Examples per operation and identity (the coverage phase adds its own cases): 19 operations x 3
identities run in 40-65 s on 2 busy CPUs."""


@dataclass(frozen=True)
class LiveApi:
    base: str
    admin_token: str
    read_token: str


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def live_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApi]:
    root = tmp_path_factory.mktemp("schemathesis")
    url = f"sqlite:///{root / 'rareindex.db'}"
    engine = make_engine(url)
    data = seed(engine)
    with engine.begin() as conn:
        add_pending(conn, [("PSA", "12345678")])
    engine.dispose()
    connectors = root / "connectors"  # the shipped policies and the grading registry only
    (connectors / "api").mkdir(parents=True)
    shutil.copy(REPO / "connectors" / "api" / "grading-registry.py", connectors / "api")
    shutil.copy(REPO / "connectors" / "domains.json", connectors / "domains.json")
    shutil.copytree(REPO / "connectors" / "domains.d", connectors / "domains.d")
    guard = root / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_DNS.format(guard=str(GUARD / "sitecustomize.py")))
    env = subprocess_env(
        {
            "RI_DATABASE_URL": url,
            "RI_DATA_DIR": str(root),
            "RI_CONNECTORS_DIR": str(connectors),
            "RI_LOG_LEVEL": "warning",
        },
        first=[guard],
    )
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    web = serve_asgi(FakeWeb().app)
    web_port = urlsplit(web.__enter__()).port
    env["RI_CONNECT_TO"] = json.dumps({h: f"127.0.0.1:{web_port}" for h in FAKE_HOSTS})
    with (root / "api.out").open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "workers", "api", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=REPO,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"rareindex api exited: {(root / 'api.out').read_text()}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("rareindex api did not answer /health within 60 s")
            time.sleep(0.2)
        TOKENS.update(admin=data.admin_token, read=data.read_token)
        yield LiveApi(base, data.admin_token, data.read_token)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        web.__exit__(None, None, None)
    log = (root / "api.out").read_text()
    assert "api.failed" not in log, log[-4000:]  # no 500 was logged, whatever the checks said


def _document() -> dict[str, object]:
    """The OpenAPI document, built the way the server builds it (schemathesis' lazy loading from
    a fixture does not run on pytest 9): ``test_the_server_publishes_this_document`` checks the
    live one is the same."""
    root = Path(tempfile.mkdtemp(prefix="ri-openapi-"))
    try:
        engine = make_engine(f"sqlite:///{root / 'x.db'}")
        document = make_app(engine, root).openapi()
        engine.dispose()
        return document
    finally:
        shutil.rmtree(root, ignore_errors=True)


DOCUMENT = _document()
ENDLESS = {
    "/api/events": "a Server-Sent-Events stream stays open until the client leaves, so every "
    "accepted case would wait out the timeout; its answers (stream, 401, 422, reset, revoked "
    "token) are tested over a socket in tests/integration/test_events_api.py, and its JSON "
    "twin /api/events/page is fuzzed here",
}
"""Operations not fuzzed, and why."""
TOKENS: dict[str, str] = {}
"""The seeded tokens by role, filled by ``live_api`` (the schemas are built at import)."""
URL_REFUSALS = frozenset({"unsafe_url", "no_connector", "fetch_failed"})


def _refused_url(response: Any, case: Case) -> bool:
    """A lookup of a listing URL the server will not or cannot fetch: 422 ``unsafe_url`` (the
    SSRF policy) or ``no_connector`` (no connector reads its host), 502 ``fetch_failed`` (its host
    does not resolve, or the source failed). All documented on the route, all depending on DNS
    and the installed connectors, which no JSON Schema can state."""
    if case.operation.path != "/api/lookup" or not isinstance(case.body, dict):
        return False
    if case.body.get("url") is None or response.status_code not in (422, 502):
        return False
    try:
        return response.json().get("error") in URL_REFUSALS
    except ValueError:
        return False


def url_aware_positive_data(ctx: Any, response: Any, case: Case) -> bool | None:
    """schemathesis' positive-data check, except for a refused listing URL (above); a target
    (cert number) the schema allows must still be accepted."""
    return None if _refused_url(response, case) else positive_data_acceptance(ctx, response, case)


def url_aware_server_error(ctx: Any, response: Any, case: Case) -> bool | None:
    """schemathesis' server-error check, except for a listing URL that could not be fetched."""
    return None if _refused_url(response, case) else not_a_server_error(ctx, response, case)


def _call(case: Case, base: str) -> None:
    """Every default check; the two above stand in for their originals on the lookup route."""
    if case.operation.path == "/api/lookup":
        case.call_and_validate(
            base_url=base,
            timeout=30,
            excluded_checks=[positive_data_acceptance, not_a_server_error],
            additional_checks=[url_aware_positive_data, url_aware_server_error],
        )
    else:
        case.call_and_validate(base_url=base, timeout=30)


def _schema(role: str | None) -> BaseSchema:
    """The document, sending the ``role``'s token (none: no token) except where a case leaves
    the credentials out on purpose (schemathesis' negative auth cases)."""
    schema = schemathesis.openapi.from_dict(DOCUMENT).exclude(path=list(ENDLESS))
    if role is not None:

        @schema.auth(refresh_interval=None)  # the token is known once live_api ran
        class Bearer:
            def get(self, case: Case, ctx: object) -> str:
                return TOKENS.get(role, "")

            def set(self, case: Case, data: str, ctx: object) -> None:
                case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}

    return schema


def test_the_server_publishes_this_document(live_api: LiveApi) -> None:
    assert httpx.get(f"{live_api.base}/openapi.json", timeout=30).json() == DOCUMENT


BOUNDED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)


@_schema("admin").parametrize()
@BOUNDED
def test_every_check_with_an_admin_token(case: Case, live_api: LiveApi) -> None:
    _call(case, live_api.base)


@_schema("read").parametrize()
@BOUNDED
def test_every_check_with_a_read_token(case: Case, live_api: LiveApi) -> None:
    _call(case, live_api.base)


@_schema(None).parametrize()
@BOUNDED
def test_every_check_without_a_token(case: Case, live_api: LiveApi) -> None:
    _call(case, live_api.base)
