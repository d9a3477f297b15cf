"""The live events page in headless Chromium: ``/events/live`` subscribes with ``EventSource``,
lists events as they are committed, and after the API process is stopped and started again on
the same port it resumes by itself (``EventSource`` reconnects with ``Last-Event-ID``): every
event once, those written while the server was down included.

Chromium is driven over the DevTools protocol by the helpers of ``test_report_browser`` (which
skip without Chromium, or fail under CI=true).
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from rareindex.storage import make_engine
from rareindex.storage.outbox import emit, event
from tests.cli_helpers import REPO
from tests.integration.test_report_browser import Page, browser  # noqa: F401 - the fixture
from tests.subprocess_env import subprocess_env
from tests.unit.rareindex.api.api_helpers import seed

ITEMS = "Array.from(document.querySelectorAll('#events li')).map(li => li.dataset.cursor)"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Api:
    """``rareindex api`` on a fixed port, stopped and started at will."""

    def __init__(self, root: Path, url: str) -> None:
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = subprocess_env(
            {
                "RI_DATABASE_URL": url,
                "RI_DATA_DIR": str(root),
                "RI_EVENTS_POLL_SECONDS": "0.1",
                "RI_LOG_LEVEL": "warning",
            }
        )
        self.log = root / "api.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workers", "api", "--port", str(self.port)],
                env=self.env,
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.base}/health", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "rareindex api did not start in 60 s"
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[Api, str, str]]:
    url = f"sqlite:///{tmp_path / 'rareindex.db'}"
    engine = make_engine(url)
    token = seed(engine).read_token
    engine.dispose()
    served = Api(tmp_path, url)
    served.start()
    try:
        yield served, url, token
    finally:
        served.stop()


def _write(url: str, n: int, first: int) -> None:
    engine = make_engine(url)
    try:
        for i in range(first, first + n):
            with engine.begin() as conn:
                emit(
                    conn,
                    [
                        event(
                            "listing.price_changed",
                            connector_id="cards-shop",
                            category="tcg_card",
                            payload={"n": i, "new": f"{100 + i}.00", "currency": "USD"},
                        )
                    ],
                )
    finally:
        engine.dispose()


def _wait_items(page: Page, count: int, timeout: float = 20) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        items = page.evaluate(ITEMS)
        if len(items) >= count:
            return list(items)
        assert time.monotonic() < deadline, f"the page shows {items}, waited for {count}"
        time.sleep(0.1)


def test_the_live_page_shows_events_and_resumes_after_a_restart(
    browser: Page,  # noqa: F811
    api: tuple[Api, str, str],
) -> None:
    served, url, token = api
    browser.open(f"{served.base}/events/live?cursor=0#token={token}")
    _write(url, 3, 0)
    assert sorted(_wait_items(browser, 3), key=int) == ["1", "2", "3"]
    assert browser.evaluate("document.getElementById('status').textContent") == "open"
    text = browser.evaluate("document.querySelector('#events li').textContent")
    assert "listing.price_changed" in text and "102.00 USD" in text  # newest first

    served.stop()
    _write(url, 2, 3)  # committed while no API process runs
    deadline = time.monotonic() + 10
    while browser.evaluate("document.getElementById('status').textContent") == "open":
        assert time.monotonic() < deadline, "the page never noticed the server left"
        time.sleep(0.1)
    served.start()
    _write(url, 1, 5)
    items = _wait_items(browser, 6)
    assert sorted(items, key=int) == ["1", "2", "3", "4", "5", "6"]  # each once, none missing
    assert browser.evaluate("document.getElementById('status').textContent") == "open"
    requests = browser.requests()
    assert all(r.startswith((served.base, "data:")) for r in requests), requests  # no CDN
    unexpected = [
        e
        for e in browser.errors()
        if "ERR_CONNECTION_REFUSED" not in e and "ERR_EMPTY_RESPONSE" not in e
    ]
    assert unexpected == []
