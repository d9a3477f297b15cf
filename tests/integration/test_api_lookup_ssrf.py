"""``POST /api/lookup`` refuses SSRF through every door: a private address in the URL, and an
allowed host that redirects into private space (the refusal is the redirect hop itself)."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from rareindex.settings import REPO_ROOT
from rareindex.storage import upgrade
from rareindex.storage.schema import certificate_sightings, certificates
from rareindex.storage.tokens import create_token
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from tests.unit.rareindex.api.api_helpers import bearer, make_app

ANY_PAGE = '''
from rareindex_connectors import ConnectorHealth, ConnectorMeta
from rareindex_connectors.records import RawRecordInput, parse_normalized


class AnyPage:
    """Would look up any URL: only the SSRF policy stands in the way."""

    meta = ConnectorMeta(
        id="any-page", source="Any page", engines=("api",), categories=("other",),
        capabilities=("listing", "url_lookup"), url_patterns=(r"^https?://",),
    )
    version = "1"
    parser_version = "1"

    async def crawl(self, ctx):
        return
        yield

    def normalize(self, raw):
        record = {"kind": "listing", "external_id": "1", "title": "PSA 10 12345678",
                  "price": {"amount": "1.00", "currency": "USD"}}
        return [parse_normalized(record)]

    async def health_check(self, ctx):
        return ConnectorHealth(status="UP")

    async def lookup(self, url, ctx):
        page = await ctx.fetch(url, expect="text")
        return [RawRecordInput(external_id="1", url=url, payload={"text": page.text[:100]})]


connector = AnyPage()
'''


def _connectors(tmp_path: Path) -> Path:
    root = tmp_path / "connectors"
    (root / "api").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "connectors" / "domains.json", root / "domains.json")
    shutil.copytree(REPO_ROOT / "connectors" / "domains.d", root / "domains.d")
    (root / "api" / "any-page.py").write_text(ANY_PAGE)
    return root


def test_lookup_refuses_private_addresses_and_redirects_into_private_space(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    upgrade(sqlite_engine)
    token = create_token(sqlite_engine, "monitor").token
    web = FakeWeb()
    with serve_asgi(web.app) as base:
        port = urlsplit(base).port
        app = make_app(
            sqlite_engine,
            tmp_path,
            connectors_dir=_connectors(tmp_path),
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )
        with TestClient(app) as client:
            for url in (
                f"http://127.0.0.1:{port}/",  # the fake web itself, by address
                "http://10.0.0.1/itm/1",
                "http://169.254.169.254/latest/meta-data/",
                "http://redirect.fake.test/private",  # allowed host, redirect to 10.x
                "http://redirect.fake.test/metadata",  # allowed host, redirect to 169.254.x
            ):
                refused = client.post("/api/lookup", json={"url": url}, headers=bearer(token))
                assert refused.status_code == 422, (url, refused.text)
                body = refused.json()
                assert body["error"] == "unsafe_url" and body["detail"], url
                assert "\n" not in body["detail"]
            assert web.logs["redirect.fake.test"].page_requests == 2  # only the first hops went out
            ok = client.post(
                "/api/lookup",
                json={"url": "http://json.fake.test/items/1.json"},
                headers=bearer(token),
            )
            assert ok.status_code == 200, ok.text  # the same door works for an allowed page
    with sqlite_engine.connect() as conn:
        stored = conn.execute(select(certificates.c.cert_number)).scalars().all()
        seen = conn.execute(select(certificate_sightings.c.url)).scalars().all()
    assert stored == ["12345678"]  # only what the allowed page showed (pending: no registry here)
    assert set(seen) == {"http://json.fake.test/items/1.json"}
