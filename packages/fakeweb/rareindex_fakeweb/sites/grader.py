"""``grader.fake.test``: a certificate registry for every cert that appears on the other sites.

Paths:

* ``/cert/<number>``: the certificate page (grader, cert, grade and label text, qualifier when
  any, label type, subgrades or page quality, year, brand, set, card number / issue, subject,
  variety, population of this grade and higher, a link to the population report). Numbers are
  matched with or without their dash (``4321000-001`` = ``4321000001``); unknown ones get a 404
  page. ``/cert/<number>.json`` is the same record as JSON.
* ``/pop/<spec_id>`` and ``/pop/<spec_id>.json``: the population report of one spec (one item on
  one grader's scale): grade -> count, and the total. Counts are at least the copies the world
  holds, so every cert's grade is represented.

As on PSA labels, PSA subjects and varieties are upper-case ASCII (``LUKA DONCIC``).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ._web import Lazy, esc, html_response, json_response, page, site_rng
from .catalog import Item
from .grading import CGC_COMIC_LABELS, normalize_cert
from .world import Copy, World, world

__all__ = ["HOST", "Certificate", "GraderData", "GraderSite", "PopReport", "grader_data"]

HOST = "grader.fake.test"
SHELDON = (20, 25, 30, 35, 40, 45, 50, 53, 55, 58, *range(60, 71))
# fmt: off
SCALES: dict[str, tuple[str, ...]] = {
    "PSA": ("1", "1.5", "2", "2.5", "3", "3.5", "4", "4.5", "5", "5.5", "6", "6.5", "7", "7.5",
            "8", "8.5", "9", "10"),
    "BGS": ("7", "7.5", "8", "8.5", "9", "9.5", "10"),
    "CGC": ("7", "8", "8.5", "9", "9.5", "10"),
    "CGC-comic": tuple(reversed(CGC_COMIC_LABELS)),
    "SGC": ("4", "6", "8", "9", "9.5", "10"),
}
# fmt: on


@dataclass(frozen=True, slots=True)
class PopReport:
    """The population of one item on one grader's scale, lowest grade first."""

    spec_id: int
    grader: str
    item: Item
    counts: tuple[tuple[str, int], ...]

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)

    def count(self, grade: str) -> int:
        return dict(self.counts).get(_pop_key(grade), 0)

    def higher(self, grade: str) -> int:
        keys = [k for k, _ in self.counts]
        key = _pop_key(grade)
        return sum(n for _, n in self.counts[keys.index(key) + 1 :]) if key in keys else 0


@dataclass(frozen=True, slots=True)
class Certificate:
    cert: str
    copy: Copy
    spec_id: int


@dataclass(frozen=True, slots=True)
class GraderData:
    certs: dict[str, Certificate]
    """Cert without dashes -> certificate."""
    pops: dict[int, PopReport]

    def lookup(self, number: str) -> Certificate | None:
        return self.certs.get(normalize_cert(number))


@functools.lru_cache(maxsize=4)
def grader_data(seed: int) -> GraderData:
    """The registry for ``seed`` (ground truth for tests)."""
    return build_grader(seed, world(seed))


def _pop_key(grade: str) -> str:
    return grade.rstrip("+")


def _sheldon_prefix(number: int) -> str:
    return "VF" if number < 40 else "XF" if number < 50 else "AU" if number < 60 else "MS"


def _scale(grader: str, item: Item, grade: str) -> tuple[str, ...]:
    if grader in ("PCGS", "NGC"):
        prefix = grade[:2]
        if prefix in ("PR", "PF"):
            return tuple(f"{prefix}{n}" for n in range(60, 71))
        return tuple(f"{_sheldon_prefix(n)}{n}" for n in SHELDON)
    if grader == "CGC" and item.category == "comic":
        return SCALES["CGC-comic"]
    return SCALES[grader]


def build_grader(seed: int, world_: World) -> GraderData:
    """Certificates and population reports for every graded copy in the world (uncached)."""
    rng = site_rng(seed, HOST)
    certified = world_.certified()
    samples: dict[tuple[str, str], Copy] = {}
    held: Counter[tuple[str, str, str]] = Counter()
    for key in sorted(certified):
        copy = certified[key]
        grader = copy.grade.grader or ""
        samples.setdefault((copy.item.key, grader), copy)
        held[copy.item.key, grader, _pop_key(copy.grade.grade)] += 1
    next_id = 1_000_000
    pops: dict[int, PopReport] = {}
    spec_ids: dict[tuple[str, str], int] = {}
    for (item_key, grader), sample in sorted(samples.items()):
        next_id += rng.randrange(7, 4000)
        spec_ids[item_key, grader] = next_id
        item = sample.item
        scale = _scale(grader, item, sample.grade.grade)
        peak = rng.randrange(len(scale) // 2, len(scale))
        counts = tuple(
            (g, held[item_key, grader, g] + max(0, int(rng.gauss(40, 8) - 9 * abs(i - peak))))
            for i, g in enumerate(scale)
        )
        pops[next_id] = PopReport(next_id, grader, item, counts)
    certs = {
        key: Certificate(
            copy.grade.cert or key, copy, spec_ids[copy.item.key, copy.grade.grader or ""]
        )
        for key, copy in sorted(certified.items())
    }
    return GraderData(certs, pops)


class GraderSite:
    """The registry's handler; built on the first request."""

    def __init__(self, seed: int, world_: Lazy[World]) -> None:
        self._data = Lazy(lambda: build_grader(seed, world_.get()))

    async def __call__(self, request: Request) -> Response:
        data = self._data.get()
        path = request.url.path
        if path.startswith("/cert/"):
            number = path.removeprefix("/cert/")
            as_json = number.endswith(".json")
            cert = data.lookup(number.removesuffix(".json"))
            if cert is None:
                if as_json:
                    missing = {"IsValidRequest": False, "ServerMessage": "No data found"}
                    return json_response(missing, 404)
                text = f"<h1>Certification not found</h1><p>No certificate #{esc(number)}.</p>"
                return html_response(page("Certification not found", text), status=404)
            record = cert_record(cert, data.pops[cert.spec_id])
            if as_json:
                ok = {"IsValidRequest": True, "ServerMessage": "Request successful"}
                return json_response({**ok, "Cert": record})
            return html_response(_cert_page(record))
        if path.startswith("/pop/"):
            raw = path.removeprefix("/pop/")
            spec = raw.removesuffix(".json")
            report = data.pops.get(int(spec)) if spec.isdigit() else None
            if report is None:
                return html_response(page("Not found", "<h1>No such spec</h1>"), status=404)
            if raw.endswith(".json"):
                return json_response(pop_record(report))
            return html_response(_pop_page(report))
        home = page("Cert Verification", "<h1>Verify a certificate</h1>")
        return html_response(home, status=200 if path == "/" else 404)


def _label_case(grader: str, text: str) -> str:
    if grader != "PSA":
        return text
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().upper()


def cert_record(cert: Certificate, pop: PopReport) -> dict[str, Any]:
    """A certificate as the page shows it (field name -> value; ``None`` fields are omitted)."""
    copy = cert.copy
    item, grade = copy.item, copy.grade
    grader = grade.grader or ""
    number = item.number
    if item.category == "coin":
        number = ""
    record: dict[str, Any] = {
        "CertNumber": cert.cert,
        "Grader": grader,
        "SpecID": cert.spec_id,
        "LabelType": grade.label_type,
        "Year": str(item.year),
        "Brand": item.brand,
        "Set": item.set_name,
        "CardNumber": number or None,
        "Subject": _label_case(grader, item.subject if item.category != "comic" else item.set_name),
        "Variety": _label_case(grader, item.variant) or None,
        "Grade": grade.grade,
        "GradeDescription": grade.label,
        "Qualifier": grade.qualifier,
        "Subgrades": dict(grade.subgrades) or None,
        "PageQuality": grade.page_quality,
        "Designation": grade.designation or None,
        "PCGSNumber": item.pcgs_number if grader == "PCGS" else None,
        "Population": pop.count(grade.grade),
        "PopulationHigher": pop.higher(grade.grade),
    }
    return {k: v for k, v in record.items() if v is not None}


def pop_record(report: PopReport) -> dict[str, Any]:
    item = report.item
    return {
        "SpecID": report.spec_id,
        "Grader": report.grader,
        "Description": item.title,
        "Year": str(item.year),
        "Brand": item.brand,
        "Set": item.set_name,
        "CardNumber": item.number,
        "Subject": item.subject,
        "Population": dict(report.counts),
        "Total": report.total,
    }


def _cert_page(record: dict[str, Any]) -> str:
    rows = []
    for key, value in record.items():
        if key == "Subgrades":
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        cell = f"<td class='{esc(key.lower())}'>{esc(str(value))}</td>"
        rows.append(f"<tr><th>{esc(key)}</th>{cell}</tr>")
    body = (
        "<h1>Certification Verification</h1>"
        f"<h2>{esc(record['Grader'])} #{esc(record['CertNumber'])}</h2>"
        f"<table class='cert-details'>{''.join(rows)}</table>"
        f"<p><a href='/pop/{record['SpecID']}'>Population report</a></p>"
    )
    return page(f"Cert #{record['CertNumber']} | Cert Verification", body)


def _pop_page(report: PopReport) -> str:
    rows = "".join(f"<tr><td>{esc(g)}</td><td>{n}</td></tr>" for g, n in report.counts)
    body = (
        f"<h1>Population Report</h1><h2>{esc(report.item.title)} ({report.grader})</h2>"
        f"<table class='pop'><tr><th>Grade</th><th>Count</th></tr>{rows}"
        f"<tr class='total'><th>Total</th><td>{report.total}</td></tr></table>"
    )
    return page(f"Pop report {report.spec_id}", body)
