"""Certificate verification and provenance over the fake web on real sockets, SQLite and PostgreSQL.

Lookup by number fills ``certificates`` with the registry's grader, grade, subject and year; a
listing URL records its sightings and verifies them; the planted mis-titled listings raise the
mismatch signal and nothing else does; after a crawl + normalize, recording sightings and
``verify_pending`` verify every cert the marketplace shows. SSRF: private, loopback and metadata
addresses, and a redirect into private space, are refused with ``reason="unsafe_url"`` and leave
the database untouched. The CLI prints the same through ``rareindex cert lookup``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest
from sqlalchemy import Engine, func, select

from rareindex.certs import (
    VerifySummary,
    get_certificate,
    lookup,
    record_sightings_from_listings,
    verify_pending,
)
from rareindex.certs.extract import cert_key
from rareindex.crawl import run_connector
from rareindex.errors import LookupRefused
from rareindex.fetching import build_fetch_stack
from rareindex.pipeline import process
from rareindex.registry import Registry, load_registry
from rareindex.settings import REPO_ROOT, Settings
from rareindex.storage import BlobStore, RawRecordStore, upgrade
from rareindex.storage.connector_rows import sync_connectors
from rareindex.storage.schema import certificate_sightings, certificates, raw_records, sources
from rareindex_connectors import ConnectorHealth, ConnectorMeta, CrawlContext
from rareindex_connectors.records import (
    NormalizedRecord,
    RawRecord,
    RawRecordInput,
    parse_normalized,
)
from rareindex_connectors.runtime import PolicySet
from rareindex_connectors.testing import serve_asgi
from rareindex_fakeweb import FAKE_HOSTS, FakeWeb
from rareindex_fakeweb.sites.grader import Certificate, cert_record, grader_data
from rareindex_fakeweb.sites.market_data import Listing, market_data
from tests.cli_helpers import invoke_cli

REGISTRY = load_registry(REPO_ROOT / "connectors")
FAST = PolicySet.from_mapping(FakeWeb.policy())
MARKET = market_data(7)
CERTS = grader_data(7)
MISTITLED = [x for x in MARKET.listings if "mistitled" in x.flags]
T = TypeVar("T")


@dataclass(frozen=True)
class Web:
    settings: Settings
    web: FakeWeb
    port: int


@pytest.fixture(scope="module")
def fake() -> Iterator[Web]:
    web = FakeWeb()
    with serve_asgi(web.app) as base:
        port = urlsplit(base).port
        assert port is not None
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            connect_to={h: f"127.0.0.1:{port}" for h in FAKE_HOSTS},
        )
        yield Web(settings, web, port)


@pytest.fixture
def db(any_engine: Engine) -> Engine:
    upgrade(any_engine)
    return any_engine


def _run(work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(work, timeout=120))


def _truth(number: str) -> dict[str, Any]:
    cert = CERTS.lookup(number)
    assert cert is not None
    return cert_record(cert, CERTS.pops[cert.spec_id])


def _count(engine: Engine, table: Any) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar_one())


def _url(listing: Listing) -> str:
    return f"http://market.fake.test/itm/{listing.item_id}"


def _expected_mismatch(listing: Listing) -> str:
    """What the registry's record of the planted cert disagrees with in the title."""
    real = _truth(listing.cert or "")
    claimed = listing.copy.item
    codes = []
    if real["Subject"].casefold() != claimed.subject.casefold():
        codes.append("subject")
    if int(real["Year"]) != claimed.year:
        codes.append("year")
    return ",".join(codes)


# --- lookup by number -----------------------------------------------------------------------


def _one_per_shape() -> list[Certificate]:
    """A cert of every grader, and both CGC forms (``4321000-001`` and ``4321000001``)."""
    chosen: dict[str, Certificate] = {}
    for cert in CERTS.certs.values():
        grader = cert.copy.grade.grader or ""
        shape = f"{grader}{'-' if '-' in cert.cert else ''}"
        chosen.setdefault(shape, cert)
    assert {"PSA", "BGS", "CGC", "CGC-", "SGC", "PCGS", "NGC-"} <= chosen.keys()
    return list(chosen.values())


def test_lookup_by_number_fills_certificates_with_the_registry_s_answer(
    db: Engine, fake: Web
) -> None:
    sample = _one_per_shape()
    for n, cert in enumerate(sample):
        truth = _truth(cert.cert)
        # bare, with its grader, without its dash: all the same certificate
        target = cert.cert if n % 3 == 0 else f"{truth['Grader']} {cert.cert}"
        if n % 3 == 2:
            target = cert.cert.replace("-", "")
        result = _run(lookup(db, fake.settings, target, registry=REGISTRY))
        [view] = result.certificates
        assert (view.grader, cert_key(view.cert_number), view.status) == (
            truth["Grader"],
            cert_key(cert.cert),
            "verified",
        )
        assert view.cert_number == cert.cert  # as the grader prints it
        assert (view.grade, view.subject, view.year, view.set_name) == (
            truth["Grade"],
            truth["Subject"],
            int(truth["Year"]),
            truth["Set"],
        )
        assert (view.qualifier, view.label_type) == (truth.get("Qualifier"), truth["LabelType"])
        assert view.verified_at is not None and result.sightings == [] == view.sightings
        stored = get_certificate(db, truth["Grader"].lower(), cert.cert)
        assert stored is not None and stored.model_dump() == view.model_dump()
    again = _run(lookup(db, fake.settings, f"cert# {sample[0].cert}", registry=REGISTRY))
    assert len(again.certificates) == 1
    page = f"http://grader.fake.test/cert/{sample[1].cert}"  # the registry's own page
    [by_page] = _run(lookup(db, fake.settings, page, registry=REGISTRY)).certificates
    assert (by_page.cert_number, by_page.status) == (sample[1].cert, "verified")
    assert _count(db, certificates) == len(sample)


def test_a_number_no_registry_knows_is_refused_and_a_wrong_grader_is_not_found(
    db: Engine, fake: Web
) -> None:
    with pytest.raises(LookupRefused) as unknown:
        _run(lookup(db, fake.settings, "99999999", registry=REGISTRY))
    assert unknown.value.reason == "not_found" and "99999999" in str(unknown.value)
    assert _count(db, certificates) == 0
    with pytest.raises(LookupRefused) as bad:
        _run(lookup(db, fake.settings, "PSA 10", registry=REGISTRY))
    assert bad.value.reason == "bad_input"
    with pytest.raises(LookupRefused) as no_registry:
        _run(lookup(db, fake.settings, "97038834", registry=Registry()))
    assert no_registry.value.reason == "no_connector"

    bgs = next(c for c in CERTS.certs.values() if c.copy.grade.grader == "BGS")
    result = _run(lookup(db, fake.settings, f"PSA {bgs.cert}", registry=REGISTRY))
    statuses = {(c.grader, c.status) for c in result.certificates}
    assert statuses == {("PSA", "not_found"), ("BGS", "verified")}  # the registry decides
    assert get_certificate(db, "BGS", bgs.cert) is not None
    with pytest.raises(LookupRefused) as bad_grader:
        get_certificate(db, "XYZ", bgs.cert)
    assert bad_grader.value.reason == "bad_input"
    assert get_certificate(db, "SGC", bgs.cert) is None


# --- lookup by listing URL ------------------------------------------------------------------


def test_lookup_by_listing_url_records_sightings_and_verifies_them(db: Engine, fake: Web) -> None:
    sold = MARKET.sold()
    in_title = next(x for x in sold if x.cert_in_title and x.grader == "PSA")
    in_specifics = next(x for x in sold if x.cert and not x.cert_in_title)
    negated = next(x for x in sold if "negated" in x.flags)
    active = next(x for x in MARKET.active() if x.cert)
    for listing in (in_title, in_specifics, active):
        result = _run(lookup(db, fake.settings, _url(listing), registry=REGISTRY))
        truth = _truth(listing.cert or "")
        [sighting] = result.sightings
        assert (sighting.listing_external_id, sighting.attribution, sighting.grader) == (
            listing.item_id,
            "attributed",
            listing.grader,
        )
        assert (sighting.source_id, sighting.url) == ("market-market-fake-test", _url(listing))
        assert sighting.mismatch is None and sighting.currency == listing.currency
        assert sighting.price is not None
        assert int(sighting.price.replace(".", "")) == listing.price
        [cert] = result.certificates
        assert (cert.grader, cert.status, cert.subject) == (
            listing.grader,
            "verified",
            truth["Subject"],
        )
        assert cert.sightings == [sighting] and result.ambiguous == []
    empty = _run(lookup(db, fake.settings, _url(negated), registry=REGISTRY))
    assert (empty.certificates, empty.sightings, empty.ambiguous) == ([], [], [])
    assert _count(db, certificate_sightings) == 3 and _count(db, certificates) == 3

    _run(lookup(db, fake.settings, _url(in_title), registry=REGISTRY))  # seen again: same rows
    assert _count(db, certificate_sightings) == 3 and _count(db, certificates) == 3
    by_number = _run(lookup(db, fake.settings, in_title.cert or "", registry=REGISTRY))
    assert [s.listing_external_id for s in by_number.sightings] == [in_title.item_id]
    assert [s.listing_external_id for s in by_number.certificates[0].sightings] == [
        in_title.item_id
    ]
    with pytest.raises(LookupRefused) as gone:
        _run(
            lookup(db, fake.settings, "http://market.fake.test/itm/999999999999", registry=REGISTRY)
        )
    assert gone.value.reason == "not_found"
    with pytest.raises(LookupRefused) as unhandled:
        _run(lookup(db, fake.settings, "http://news.fake.test/", registry=REGISTRY))
    assert unhandled.value.reason == "no_connector"


def test_the_planted_mistitled_listings_raise_the_mismatch_signal(db: Engine, fake: Web) -> None:
    assert len(MISTITLED) == 2
    for listing in MISTITLED:
        result = _run(lookup(db, fake.settings, _url(listing), registry=REGISTRY))
        [sighting] = result.sightings
        assert sighting.mismatch == _expected_mismatch(listing) != ""
        [cert] = result.certificates
        real = _truth(listing.cert or "")
        # the certificate keeps the registry's facts; the listing's claim is only a signal
        assert (cert.subject, cert.year, cert.status) == (
            real["Subject"],
            int(real["Year"]),
            "verified",
        )
        assert cert.subject.casefold() != listing.copy.item.subject.casefold() or (
            cert.year != listing.copy.item.year
        )
    assert {_expected_mismatch(x) for x in MISTITLED} == {"subject", "year"}


# --- SSRF -----------------------------------------------------------------------------------


@dataclass
class AnyPage:
    """A connector that would look up any URL: only the SSRF policy stands in the way."""

    calls: list[str] = field(default_factory=list)
    title: str = "Luka Doncic Raw NOT PSA 12345678 Prizm Silver Rookie Card, slab 0012345678"
    meta = ConnectorMeta(
        id="any-page",
        source="Any page",
        engines=("api",),
        categories=("other",),
        capabilities=("listing", "url_lookup"),
        url_patterns=(r"^https?://",),
    )
    version = "1"
    parser_version = "1"

    async def crawl(self, ctx: CrawlContext) -> AsyncIterator[RawRecordInput]:
        return
        yield

    def normalize(self, raw: RawRecord) -> list[NormalizedRecord]:
        price = {"amount": "1.00", "currency": "USD"}
        record = {"kind": "listing", "external_id": "1", "title": self.title, "price": price}
        return [parse_normalized(record)]

    async def health_check(self, ctx: CrawlContext) -> ConnectorHealth:
        return ConnectorHealth(status="UP")

    async def lookup(self, url: str, ctx: CrawlContext) -> list[RawRecordInput]:
        self.calls.append(url)
        page = await ctx.fetch(url, expect="text")
        return [RawRecordInput(external_id="1", url=url, payload={"text": page.text[:100]})]


def _unsafe_targets(port: int) -> list[str]:
    return [
        f"http://127.0.0.1:{port}/itm/{MARKET.listings[0].item_id}",  # the fake web itself
        "http://10.0.0.1/itm/1",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "file:///etc/passwd",
    ]


def test_ssrf_private_addresses_and_redirects_into_private_space_are_refused(
    db: Engine, fake: Web
) -> None:
    page = AnyPage()
    registry = Registry(
        connectors={"any-page": page, "grading-registry": REGISTRY.get("grading-registry")}
    )  # type: ignore[dict-item]
    for target in _unsafe_targets(fake.port):
        for connectors in (registry, REGISTRY):
            with pytest.raises(LookupRefused) as refused:
                _run(lookup(db, fake.settings, target, registry=connectors))
            assert refused.value.reason == "unsafe_url", target
            assert str(refused.value).startswith("refused ") and "\n" not in str(refused.value)
    assert page.calls == []  # refused before any connector saw them
    # an allowed host (the fake web's policy) that answers with a redirect into private space
    before = fake.web.logs.get("redirect.fake.test")
    seen = before.page_requests if before else 0
    for path in ("/private", "/metadata"):
        with pytest.raises(LookupRefused) as redirected:
            _run(lookup(db, fake.settings, f"http://redirect.fake.test{path}", registry=registry))
        assert redirected.value.reason == "unsafe_url"
    assert fake.web.logs["redirect.fake.test"].page_requests == seen + 2  # the hop was the refusal
    assert len(page.calls) == 2
    for table in (certificates, certificate_sightings, sources):
        assert _count(db, table) == 0
    # the same connector on a host whose policy allows the test network goes through
    ok = _run(lookup(db, fake.settings, "http://json.fake.test/items/1.json", registry=registry))
    # and what a hedged or bare number leaves: sightings without a grader, never a certificate
    assert sorted((s.attribution, s.grader) for s in ok.sightings) == [
        ("ambiguous", None),
        ("negated", None),
    ]
    assert (ok.certificates, ok.ambiguous) == ([], ["0012345678"])
    assert _count(db, certificates) == 0 and _count(db, certificate_sightings) == 2


# --- a crawl, then the cert-verify job ------------------------------------------------------


def _crawl_and_normalize(engine: Engine, settings: Settings, root: Path) -> None:
    with engine.begin() as conn:
        sync_connectors(conn, REGISTRY)
    store = RawRecordStore(BlobStore(root / "blobs"))

    async def crawl() -> str:
        stack = build_fetch_stack(settings, policies=FAST)
        try:
            summary = await run_connector(
                REGISTRY.get("card-market"), db=engine, stack=stack, store=store
            )
            return summary.status
        finally:
            await stack.aclose()

    assert _run(crawl()) == "succeeded"
    with engine.connect() as conn:
        raw_ids = list(conn.execute(select(raw_records.c.id)).scalars())
    process(engine, REGISTRY, raw_ids, blobs=BlobStore(root / "blobs"))


def test_recorded_sightings_and_verify_pending_verify_every_cert_the_market_shows(
    db: Engine, fake: Web, tmp_path: Path
) -> None:
    _crawl_and_normalize(db, fake.settings, tmp_path)
    sold = MARKET.sold()
    expected = {(x.item_id, cert_key(x.cert), x.grader) for x in sold if x.cert}
    assert len(expected) > 200

    # one planted cert verified first: its sighting gets the signal as soon as it is recorded
    early = MISTITLED[0]
    _run(lookup(db, fake.settings, early.cert or "", registry=REGISTRY))
    later = datetime.now(UTC) + timedelta(days=1)
    assert record_sightings_from_listings(db, since=later) == 0  # nothing normalized since
    assert record_sightings_from_listings(db) == len(expected)
    assert record_sightings_from_listings(db) == 0  # idempotent
    with db.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(select(certificate_sightings))]
    assert {(r["listing_external_id"], r["cert_number"], r["grader"]) for r in rows} == expected
    assert {r["attribution"] for r in rows} == {"attributed"}
    assert all(r["certificate_id"] and r["source_id"] == "market-market-fake-test" for r in rows)
    flagged = {r["listing_external_id"]: r["mismatch"] for r in rows if r["mismatch"]}
    assert flagged == {early.item_id: _expected_mismatch(early)}

    async def verify_all() -> list[VerifySummary]:
        stack = build_fetch_stack(fake.settings, policies=FAST)  # one stack, three passes
        try:
            return [
                await verify_pending(db, fake.settings, REGISTRY, limit=limit, stack=stack)
                for limit in (100, 1000, 200)
            ]
        finally:
            await stack.aclose()

    first, rest, done = _run(verify_all())
    assert first.checked == 100 and done.checked == 0
    distinct = {(g, n) for _, n, g in expected}
    assert first.verified + rest.verified == len(distinct) - 1  # one was verified by lookup
    assert (first.failed, rest.failed, first.not_found, rest.not_found) == (0, 0, 0, 0)

    with db.connect() as conn:
        stored = {(r.grader, r.cert_number): r for r in conn.execute(select(certificates))}
        rows = [dict(r._mapping) for r in conn.execute(select(certificate_sightings))]
    assert set(stored) == {(g, n) for _, n, g in expected}
    for (_, number), row in stored.items():
        truth = _truth(number)
        assert (row.status, row.grader, row.grade, row.subject, row.year) == (
            "verified",
            truth["Grader"],
            truth["Grade"],
            truth["Subject"],
            int(truth["Year"]),
        ), number
    flagged = {r["listing_external_id"]: r["mismatch"] for r in rows if r["mismatch"]}
    assert flagged == {x.item_id: _expected_mismatch(x) for x in MISTITLED}
    assert first.mismatches + rest.mismatches == 1  # the second planted one (the first: earlier)


# --- the CLI --------------------------------------------------------------------------------


def test_cli_cert_lookup_prints_certificates_sightings_and_one_line_errors(tmp_path: Path) -> None:
    env = {"RI_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}", "RI_DATA_DIR": str(tmp_path)}
    assert invoke_cli("db", "upgrade", env=env).returncode == 0
    planted = MISTITLED[0]
    shown = invoke_cli("cert", "lookup", _url(planted), "--fake-web", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    [sighting] = result["sightings"]
    assert (sighting["listing_external_id"], sighting["mismatch"]) == (
        planted.item_id,
        _expected_mismatch(planted),
    )
    assert result["certificates"][0]["subject"] == _truth(planted.cert or "")["Subject"]

    table = invoke_cli("cert", "lookup", f"PSA {planted.cert}", "--fake-web", env=env)
    assert table.returncode == 0, table.stderr
    assert (
        "JACKSON HOLLIDAY" in table.stdout or _truth(planted.cert or "")["Subject"] in table.stdout
    )
    assert planted.item_id in table.stdout and "mismatch" in table.stdout

    for target, words in (
        ("http://10.0.0.1/itm/1", "10.0.0.1 is private"),
        ("not-a-cert", "neither a cert number"),
        ("99999999", "no grader registry knows cert 99999999"),
    ):
        refused = invoke_cli("cert", "lookup", target, "--fake-web", env=env)
        lines = refused.stderr.strip().splitlines()
        assert refused.returncode == 2 and len(lines) == 1, refused.stderr
        assert lines[0].startswith("error:") and words in lines[0]
        assert "Traceback" not in refused.stderr
