"""Fault: a flood of huge JSON bodies without a token at a live ``rareindex api`` (issue 22, 2).

Ten clients at once each send ``POST /api/lookup`` a 5-20 MB JSON object of hundreds of thousands
of keys (the shape that made the server parse, validate and list every key), with no
``Authorization`` header, over real sockets on 127.0.0.1. Meanwhile another client asks
``/health`` every 20 ms. Then one such body goes in *with* a token.

What must hold: every flooding request is refused 401 ``missing_token`` without its body being
read (the body guard checks the token first); ``/health`` keeps answering, its median under
100 ms and none slower than half a second; the API's resident memory grows by less than 50 MB;
the body sent with a token is refused 413 ``body_too_large`` in a short answer. Before issue 22,
ten such bodies stalled ``/health`` for 6.2 s and one with a token got a 40.9 MB 422.
"""

from __future__ import annotations

import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from .api_process import start_api

pytestmark = pytest.mark.serial  # latencies measured at the API: run alone, not beside other files

CLIENTS = 10
SIZES_MB = (5, 8, 11, 14, 17, 20, 6, 9, 12, 15)


def hostile_body(megabytes: int) -> bytes:
    """``{"k0":0,"k1":0,…}`` of about ``megabytes`` MB: every key an extra field to reject."""
    keys = megabytes * 1_000_000 // 12
    return b"{" + b",".join(b'"k%d":0' % i for i in range(keys)) + b"}"


def resident_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def flood(base: str, bodies: list[bytes]) -> tuple[list[int | str], list[float]]:
    """The floods' answers (a status, or the transport error when the server closed first) and
    the ``/health`` latencies measured while they ran. Each flooding client and the probe run in
    threads of their own (sending releases the GIL), so the probe measures the server, not a
    client loop busy writing 100 MB."""
    done = threading.Event()
    latencies: list[float] = []

    def probe() -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            while not done.is_set():
                began = time.perf_counter()
                answer = client.get("/health")
                latencies.append(time.perf_counter() - began)
                assert answer.status_code == 200
                time.sleep(0.02)

    def send(body: bytes) -> int | str:
        headers = {"Content-Type": "application/json"}
        with httpx.Client(base_url=base, timeout=30) as client:
            try:
                return client.post("/api/lookup", content=body, headers=headers).status_code
            except httpx.TransportError as exc:  # the server answered and closed mid-body
                return type(exc).__name__

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        time.sleep(0.2)
        with ThreadPoolExecutor(len(bodies)) as pool:
            answers = list(pool.map(send, bodies))
        time.sleep(0.2)
    finally:
        done.set()
        prober.join(timeout=20)
    return answers, latencies


def test_a_body_flood_without_a_token_leaves_health_answering(tmp_path: Path) -> None:
    bodies = [hostile_body(size) for size in SIZES_MB[:CLIENTS]]
    fleet, api = start_api(tmp_path)
    try:
        httpx.get(f"{api.base}/api/admin/connectors", timeout=10)  # warm: first-request imports
        before_kb = resident_kb(api.pid)
        answers, latencies = flood(api.base, bodies)
        grown_mb = (resident_kb(api.pid) - before_kb) / 1024

        with_token = httpx.post(
            f"{api.base}/api/lookup",
            content=bodies[0],
            headers={
                "Authorization": f"Bearer {api.admin_token}",
                "Content-Type": "application/json",
            },
            timeout=30,
        )
        assert fleet.alive(), fleet.logs()
    finally:
        fleet.stop_all()

    refused = [a for a in answers if a == 401]
    assert len(refused) + sum(isinstance(a, str) for a in answers) == CLIENTS, answers
    assert refused, answers  # at least some saw the answer before the server closed
    assert len(latencies) >= 5, latencies
    median_ms = statistics.median(latencies) * 1000
    worst_ms = max(latencies) * 1000
    assert median_ms < 100, f"/health median {median_ms:.0f} ms during the flood"
    assert worst_ms < 500, f"/health took {worst_ms:.0f} ms once during the flood"
    assert grown_mb < 50, f"the API grew {grown_mb:.0f} MB"
    assert with_token.status_code == 413, with_token.text[:300]
    assert with_token.json()["error"] == "body_too_large"
    assert len(with_token.content) < 1000
