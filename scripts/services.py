"""Start PostgreSQL, Redis and RabbitMQ on 127.0.0.1 when they are down, so `make test` works
anywhere.

Used by `make services` (and so `make test`). On a machine without them (a plain laptop) it says so
and exits 0: the integration tests then skip with a clear reason — except under CI=true, where the
tests fail instead. Only the local services are touched.

It also installs Debian's ``chromium`` (for the report's headless browser test) when
/usr/bin/chromium is missing, apt-get is there and we are root: the one step that reaches the
network, through apt's own sources, bounded in time. Without it the browser test skips (fails
under CI=true); this step never fails `make services`.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time

SERVICES = {
    "postgresql": (5432, "pg_ctlcluster"),
    "redis": (6379, "redis-server"),
    "rabbitmq": (5672, "rabbitmq-server"),
}
BOOT_TIMEOUT_S = {"rabbitmq": 90}
"""Seconds to wait for a started service to listen (default 30; Erlang's boot is slow)."""


def is_up(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def start_command(name: str) -> list[str] | None:
    if name == "postgresql":
        versions = sorted(os.path.basename(p) for p in glob.glob("/etc/postgresql/*"))
        if not versions or not shutil.which("pg_ctlcluster"):
            return None
        return ["pg_ctlcluster", "--skip-systemctl-redirect", versions[-1], "main", "start"]
    if name == "rabbitmq":  # Debian's wrapper runs the node as the rabbitmq user
        server = shutil.which("rabbitmq-server") or (
            "/usr/sbin/rabbitmq-server" if os.path.exists("/usr/sbin/rabbitmq-server") else None
        )
        return None if server is None else [server, "-detached"]
    if not shutil.which("redis-server"):
        return None
    return [
        "redis-server",
        "--daemonize",
        "yes",
        "--bind",
        "127.0.0.1",
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        "/tmp",  # noqa: S108 - Redis runs with --save "": nothing is written there
    ]


def ensure(name: str, port: int) -> bool:
    if is_up(port):
        print(f"services: {name} is up on 127.0.0.1:{port}")
        return True
    command = start_command(name)
    if command is None:
        print(f"services: {name} is down and not installed here; its integration tests will skip")
        return False
    print(f"services: starting {name}: {' '.join(command)}")
    subprocess.run(command, check=False)  # noqa: S603 - fixed argv, local service only
    timeout = BOOT_TIMEOUT_S.get(name, 30)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_up(port):
            print(f"services: {name} is up on 127.0.0.1:{port}")
            return True
        time.sleep(0.5)
    print(f"services: {name} did not come up on 127.0.0.1:{port} within {timeout} s")
    return False


CHROMIUM = "/usr/bin/chromium"
APT_TIMEOUT_S = 600


def _apt(apt: str, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(  # noqa: S603 - fixed argv
        [apt, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def ensure_chromium() -> bool:
    """Debian's chromium for tests/integration/test_report_browser.py, installed when missing."""
    if os.path.exists(CHROMIUM):
        print(f"services: chromium is installed ({CHROMIUM})")
        return True
    apt = shutil.which("apt-get")
    if apt is None:
        print(
            "services: chromium is not installed and there is no apt-get here; the report's "
            "browser test will skip"
        )
        return False
    if getattr(os, "geteuid", lambda: -1)() != 0:
        print(
            "services: chromium is not installed; as root: apt-get install -y chromium "
            "(until then the report's browser test skips)"
        )
        return False
    print(f"services: installing Debian's chromium (apt-get, at most {APT_TIMEOUT_S // 60} min)")
    deadline = time.monotonic() + APT_TIMEOUT_S
    install = ("install", "-y", "-q", "--no-install-recommends", "chromium")
    try:
        result = _apt(apt, *install, timeout=APT_TIMEOUT_S)
        if result.returncode != 0:  # stale or missing package lists: refresh once, then retry
            _apt(apt, "update", "-q", timeout=max(deadline - time.monotonic(), 1))
            result = _apt(apt, *install, timeout=max(deadline - time.monotonic(), 1))
    except subprocess.TimeoutExpired:
        print(
            f"services: installing chromium took over {APT_TIMEOUT_S} s; gave up (the report's "
            "browser test will skip)"
        )
        return False
    if result.returncode != 0 or not os.path.exists(CHROMIUM):
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        print(
            f"services: apt-get could not install chromium ({last[0]}); the report's browser "
            "test will skip"
        )
        return False
    print(f"services: chromium is installed ({CHROMIUM})")
    return True


def main() -> int:
    results = [ensure(name, port) for name, (port, _) in SERVICES.items()]
    results.append(ensure_chromium())
    if not all(results) and os.environ.get("CI") == "true":
        print(
            "services: CI=true and a service or chromium is missing: the integration tests "
            "will fail"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
