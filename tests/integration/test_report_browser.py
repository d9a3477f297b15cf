"""The report of a real demo, rendered in headless Chromium: charts and tables, no console errors.

``rareindex demo`` runs once per module in a subprocess (its own data dir: a real crawl of the
fake web, the pipeline, a health check) and ends by writing the report. Chromium (Debian's
``chromium``: ``make services`` installs it as root) opens that page from disk with
``--headless --no-sandbox --disable-gpu`` and is driven over the DevTools protocol: the test
collects console errors, uncaught exceptions and failed loads, every request the page makes,
the DOM's tables and SVG charts (their size, and that every marker lies inside its chart), and a
full-page screenshot saved to :data:`SCREENSHOT` (printed; look at it).

Without Chromium the browser tests skip with the reason, except under CI=true where they fail.
The report's queries also run on PostgreSQL here, on the unit tests' hand-made dataset.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from websockets.sync.client import ClientConnection, connect

from rareindex.registry import load_registry
from rareindex.report import load_report
from rareindex.settings import REPO_ROOT
from rareindex.storage import make_engine
from rareindex.storage.pricing_store import asset_estimates, index_ids
from rareindex.storage.schema import connectors, sales
from tests.cli_helpers import run_cli
from tests.unit.rareindex.test_report import NOW, seed

CHROMIUM = Path(os.environ.get("RI_TEST_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOT = Path(
    os.environ.get(
        "RI_TEST_REPORT_SCREENSHOT", Path(tempfile.gettempdir()) / "rareindex-report" / "report.png"
    )
)
"""Where the full-page screenshot of the demo's report is written (outside the repository)."""

WIDTH = 1400
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    # no phoning home: this machine's network is closed, and the report must not need one
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
    f"--window-size={WIDTH},3000",
)


def _chromium() -> Path:
    if CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    reason = (
        f"Chromium is not installed at {CHROMIUM}: `make services` installs Debian's chromium "
        "(as root), or set RI_TEST_CHROMIUM"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


# --- a small DevTools protocol client -----------------------------------------------------------


@dataclass
class Page:
    """One tab, driven over the browser's DevTools websocket (flattened sessions)."""

    ws: ClientConnection
    session: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    _next: int = 0

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get("method") == method:
                    return event
            seen = len(self.events)
            self.events.append(
                json.loads(self.ws.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            )

    def open(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=WIDTH,
            height=3000,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        time.sleep(0.3)  # let late console messages arrive
        self.evaluate("1")  # and read them off the socket

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads, as text."""
        out = []
        for event in self.events:
            params = event.get("params", {})
            method = event.get("method")
            if method == "Runtime.exceptionThrown":
                details = params["exceptionDetails"]
                out.append(details.get("exception", {}).get("description") or details["text"])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
                out.append(
                    " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                )
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                out.append(f"{params['entry']['text']} ({params['entry'].get('url', '')})")
        return out

    def requests(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def screenshot(self, path: Path) -> None:
        height = self.evaluate("document.documentElement.scrollHeight")
        shot = self.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1},
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Page]:
    """A fresh headless Chromium (its own empty profile) and a tab in it."""
    chromium = _chromium()
    profile = tmp_path / "profile"
    log_path = tmp_path / "chromium.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(chromium), *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0"],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                pytest.fail(f"Chromium did not start (exit {proc.poll()}):\n{tail}")
            time.sleep(0.1)
        port, ws_path = port_file.read_text().splitlines()[:2]
        with connect(f"ws://127.0.0.1:{port}{ws_path}", max_size=None, open_timeout=10) as ws:
            page = Page(ws)
            target = page.call("Target.createTarget", url="about:blank")["targetId"]
            page.session = page.call("Target.attachToTarget", targetId=target, flatten=True)[
                "sessionId"
            ]
            yield page
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- the demo, once per module ------------------------------------------------------------------


@dataclass(frozen=True)
class Demo:
    root: Path
    report: Path
    stdout: str
    seconds: float


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    root = tmp_path_factory.mktemp("demo")
    started = time.monotonic()
    result = run_cli("demo", env={"RI_DATA_DIR": str(root)}, timeout=300)
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    found = re.search(r"^report: (\S+/index\.html) ", result.stdout, flags=re.M)
    assert found, f"the demo did not print the report's path:\n{result.stdout[-2000:]}"
    return Demo(root, Path(found[1]), result.stdout, seconds)


def _demo_engine(demo: Demo) -> Engine:
    return make_engine(f"sqlite:///{demo.root / 'rareindex.db'}")


DOM_FACTS = """(() => {
  const all = (s, root = document) => Array.from(root.querySelectorAll(s));
  const inside = (outer, inner) => inner.left >= outer.left - 1 && inner.right <= outer.right + 1
      && inner.top >= outer.top - 1 && inner.bottom <= outer.bottom + 1;
  const charts = all('svg.chart').map(svg => {
    const box = svg.getBoundingClientRect();
    const points = all('g.point', svg);
    return {width: box.width, height: box.height, points: points.length,
            legend: all('g.legend', svg).length,
            outside: points.filter(p => !inside(box, p.getBoundingClientRect())).length};
  });
  return {
    title: document.title,
    h1: document.querySelector('h1').textContent,
    cards: all('.card .value').map(e => e.textContent),
    coverageRows: all('table.coverage tbody tr').length,
    health: all('table.health tbody tr').map(tr => tr.cells[3].textContent.trim()),
    flaggedRows: all('table.flagged tbody tr').length,
    assets: all('article.asset h3').map(e => e.textContent),
    charts: charts,
    indexCharts: all('svg.index-chart').map(svg => {
      const box = svg.getBoundingClientRect();
      const points = all('g.ipoint', svg);
      return {width: box.width, height: box.height, points: points.length,
              band: all('polygon.band', svg).length, pairs: all('rect.pairs', svg).length,
              outside: points.filter(p => !inside(box, p.getBoundingClientRect())).length};
    }),
    ladders: all('article.asset').map(a => ({
      rows: all('table.ladder tbody tr', a).length,
      derived: all('table.ladder tbody tr.derived', a).length,
      marked: all('table.ladder tbody tr.derived .badge.derived', a).length})),
    scripts: document.scripts.length,
    images: all('img').length,
    height: document.documentElement.scrollHeight,
  };
})()"""


def test_the_demo_ends_by_writing_the_report(demo: Demo) -> None:
    assert demo.report == (demo.root / "data" / "report" / "index.html").resolve()
    assert demo.report.is_file()
    last = demo.stdout.strip().splitlines()[-1]
    assert last.startswith(f"report: {demo.report} (written in ")
    assert re.search(r"^health: \d+ (UP|DEGRADED|BROKEN)", demo.stdout, flags=re.M)
    written = float(re.search(r"written in ([\d.]+) s", last)[1])  # type: ignore[index]
    assert written < 2.0, f"the report took {written} s"


def test_the_report_shows_the_demos_real_numbers(demo: Demo) -> None:
    page = demo.report.read_text(encoding="utf-8")
    engine = _demo_engine(demo)
    with engine.connect() as conn:
        n_sales = conn.execute(select(func.count()).select_from(sales)).scalar_one()
    data = load_report(engine)
    engine.dispose()
    assert f'<div class="value">{n_sales:,}</div>' in page
    assert len(data.assets) == 5 and all(a.variants for a in data.assets)
    for asset in data.assets:
        assert f". {asset.asset.title}</h3>".replace("&", "&amp;") in page
    assert data.flagged_total > 0 and "lot" in page  # the fake web sells lots


def test_the_report_renders_in_headless_chromium(demo: Demo, browser: Page) -> None:
    browser.open(demo.report.as_uri())
    facts = browser.evaluate(DOM_FACTS)
    browser.screenshot(SCREENSHOT)
    print(f"\nscreenshot of the demo's report: {SCREENSHOT}")

    assert browser.errors() == []
    assert {url.split(":", 1)[0] for url in browser.requests()} <= {"file", "data"}  # no network
    assert facts["title"] == "RareIndex report" and facts["scripts"] == 0 and facts["images"] == 0
    registry = load_registry(REPO_ROOT / "connectors")
    engine = _demo_engine(demo)
    with engine.connect() as conn:
        stored = conn.execute(select(func.count()).select_from(connectors)).scalar_one()
    engine.dispose()
    assert len(facts["health"]) == stored == len(registry)
    assert set(facts["health"]) <= {"UP", "DEGRADED", "BROKEN", "DISABLED", "MAINTENANCE"}
    assert facts["coverageRows"] >= len(registry)
    assert facts["flaggedRows"] > 0
    assert len(facts["assets"]) == 5
    charts = facts["charts"]
    assert len(charts) >= 5
    for chart in charts:
        assert chart["width"] > 300 and chart["height"] > 150, chart
        assert chart["points"] >= 1 and chart["legend"] >= 1, chart
        assert chart["outside"] == 0, chart  # every marker is drawn inside its chart
    # the category indices (a band where the index has one, else its pairs) and the ladders
    engine = _demo_engine(demo)
    with engine.connect() as conn:
        categories = [i for i, *_ in index_ids(conn) if i.startswith("category:")]
        ladders = [asset_estimates(conn, a.asset.asset_id) for a in load_report(engine).assets]
    engine.dispose()
    assert categories and len(facts["indexCharts"]) == len(categories)
    for chart in facts["indexCharts"]:
        assert chart["width"] > 300 and chart["height"] > 150, chart
        assert chart["points"] >= 2 and chart["outside"] == 0, chart
        assert (chart["band"] == 1) != (chart["pairs"] > 0), chart  # one or the other
    assert [f["rows"] for f in facts["ladders"]] == [len(rungs) for rungs in ladders]
    assert any(f["rows"] for f in facts["ladders"])
    derived = [sum(1 for _, e in rungs if e.basis == "derived") for rungs in ladders]
    assert [f["derived"] for f in facts["ladders"]] == derived
    assert [f["marked"] for f in facts["ladders"]] == derived
    assert SCREENSHOT.stat().st_size > 50_000
    assert SCREENSHOT.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_console_check_catches_errors(tmp_path: Path, browser: Page) -> None:
    """The check above can fail: a page with a console error, an uncaught exception and a
    missing image reports all three."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!doctype html><html><body><img src='missing.png'>"
        "<script>console.error('boom'); throw new Error('kaput');</script></body></html>"
    )
    browser.open(bad.as_uri())
    errors = browser.errors()
    assert any("boom" in e for e in errors), errors
    assert any("kaput" in e for e in errors), errors
    assert any("missing.png" in e for e in errors), errors


def test_rareindex_report_writes_where_asked_in_the_chosen_currency(
    demo: Demo, tmp_path: Path
) -> None:
    out = tmp_path / "eur"
    env = {"RI_DATA_DIR": str(demo.root)}
    result = run_cli("report", "--currency", "eur", "--top", "2", "--out", str(out), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str((out / "index.html").resolve())  # only the path
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "prices in EUR" in page and page.count('<article class="asset"') == 2
    wrong = run_cli("report", "--currency", "XYZ", env=env)
    said = " ".join(re.sub(r"[│╭╮╰╯─]", " ", wrong.stderr).split())  # unwrap the error box
    assert wrong.returncode == 2 and "choose one of USD, CAD, EUR, GBP, JPY" in said


def test_the_report_queries_run_on_postgresql(pg_engine: Engine) -> None:
    seed(pg_engine)
    data = load_report(pg_engine, currency="EUR", now=NOW)
    points = {p.sale_id: p for a in data.assets for v in a.variants for p in v.points}
    assert [a.asset.asset_id for a in data.assets] == ["ast_zard", "ast_coin"]
    assert points["s1"].converted == pytest.approx(90.0)
    assert points["s9"].converted is None
    assert points["s3"].anomaly_reason == "robust_z"
    assert [p.sale_id for p in data.flagged] == ["s5", "s8", "s4", "s3"]
    assert (data.flags.lots, data.flags.hidden_prices) == (1, 1)
