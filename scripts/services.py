"""Start PostgreSQL and Redis on 127.0.0.1 when they are down, so `make test` works anywhere.

Used by `make services` (and so `make test`). On a machine without them (a plain laptop) it says so
and exits 0: the integration tests then skip with a clear reason — except under CI=true, where the
tests fail instead. Only the local services are touched; nothing here reaches the network.
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
}


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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if is_up(port):
            print(f"services: {name} is up on 127.0.0.1:{port}")
            return True
        time.sleep(0.5)
    print(f"services: {name} did not come up on 127.0.0.1:{port} within 30 s")
    return False


def main() -> int:
    results = [ensure(name, port) for name, (port, _) in SERVICES.items()]
    if not all(results) and os.environ.get("CI") == "true":
        print("services: CI=true and a service is missing: the integration tests will fail")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
