"""What the newer benchmarks share: the machine they ran on, scratch PostgreSQL databases, quiet
logs, medians, and the rich console their one table is printed on.

Every benchmark measures its peer in the same run, alternating peer and RareIndex repetition by
repetition, and prints medians: on a shared 2-vCPU machine the spread between two runs is 10-70%,
so only ratios from one run mean anything.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import sqlite3
import statistics
import sys
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
"""Where scratch databases are created and dropped (trust authentication, loopback)."""


def quiet_logs() -> None:
    """Log as a process entry point would (info and above, rendered), into /dev/null: the cost of
    logging stays in the measurement, the lines stay out of the table."""
    import structlog

    sink = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(file=sink),
        cache_logger_on_first_use=False,
    )


def console() -> Any:
    """A rich console at least 170 columns wide, so a table keeps one line per row when piped."""
    from rich.console import Console

    return Console(width=max(Console().width, 170))


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def spread(values: Sequence[float]) -> float:
    """(max - min) / median of the repetitions: how noisy this row was."""
    if len(values) < 2:
        return 0.0
    mid = median(values)
    return (max(values) - min(values)) / mid if mid else 0.0


class StatementCounter:
    """Counts the SQL statements an engine sends (an ``executemany`` counts once): the round
    trips a stage costs, whatever the machine's load."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy import event

        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1


# --- the machine ----------------------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return float("nan")


def postgres_version() -> str:
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, connect_timeout=5) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]).split()[0] if row else "?"
    except Exception as exc:  # the caption must not kill the run
        return f"unavailable ({type(exc).__name__})"


def machine() -> str:
    """One line: CPU model, cores, RAM, Python, PostgreSQL, SQLite, date (UTC)."""
    return (
        f"{cpu_model()}, {os.cpu_count()} CPUs, {ram_gib():.0f} GiB, "
        f"Python {sys.version.split()[0]}, PostgreSQL {postgres_version()}, "
        f"SQLite {sqlite3.sqlite_version}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


# --- scratch PostgreSQL databases -----------------------------------------------------------------


class ScratchPostgres:
    """Databases named ``ri_bench_<pid>_<name>`` on 127.0.0.1:5432, all dropped on exit."""

    def __init__(self) -> None:
        self.prefix = f"ri_bench_{os.getpid()}_"
        self.made: list[str] = []

    def _admin(self, *statements: str) -> None:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            for statement in statements:
                admin.execute(statement)  # type: ignore[arg-type] - our own names

    def create(self, name: str, *, template: str | None = None) -> str:
        """A fresh database (a copy of the scratch database ``template`` when given); its
        SQLAlchemy URL."""
        full = self.prefix + name
        copy = f' TEMPLATE "{self.prefix + template}"' if template else ""
        self._admin(
            f'DROP DATABASE IF EXISTS "{full}" WITH (FORCE)', f'CREATE DATABASE "{full}"{copy}'
        )
        self.made.append(full)
        return f"postgresql+psycopg://postgres@127.0.0.1:5432/{full}"

    def drop(self, name: str) -> None:
        full = self.prefix + name
        self._admin(f'DROP DATABASE IF EXISTS "{full}" WITH (FORCE)')
        if full in self.made:
            self.made.remove(full)

    def drop_all(self) -> None:
        for full in list(reversed(self.made)):
            with contextlib.suppress(Exception):
                self._admin(f'DROP DATABASE IF EXISTS "{full}" WITH (FORCE)')
        self.made.clear()


@contextlib.contextmanager
def scratch_postgres() -> Iterator[ScratchPostgres]:
    scratch = ScratchPostgres()
    try:
        yield scratch
    finally:
        scratch.drop_all()


def package_version(package: str) -> str:
    """The installed version of ``package``, ``?`` when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def machine_facts(*packages: str) -> dict[str, Any]:
    """The machine and the versions of ``packages``, for a bench's ``--json`` report."""
    import os
    import platform

    facts: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
    }
    return facts | {package: package_version(package) for package in packages}
