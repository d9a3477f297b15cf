"""Every command in README.md and docs/*.md runs, so the docs cannot rot.

Each document is one test: its ```` ```sh ````, ```` ```bash ```` and ```` ```console ```` blocks
become one bash script (see :mod:`tests.docs.doc_blocks` for the markers that start servers in the
background, expect an exit status, write a file or skip a block with a reason). The script runs in
a fresh temporary directory as a reader's checkout would: ``RI_DATA_DIR`` is that directory (a
fresh embedded SQLite), ``RI_CONNECTORS_DIR`` a copy of ``connectors/`` there (guides add files to
it), the repository's virtualenv first on ``PATH``, no other ``RI_*`` variable.

So that runs never collide with each other or with anything else on the machine, the test maps
what the documents name to private resources:

* ports 8000 (``rareindex api``) and 8765 (``rareindex fakeweb``) -> free ports;
* the PostgreSQL database ``rareindex_fleet`` on 127.0.0.1:5432 -> a fresh database, dropped
  afterwards; ``redis://127.0.0.1:6379/0`` -> an empty Redis database, flushed afterwards.

A document that needs PostgreSQL or Redis is skipped when they are down (and fails under
``CI=true``, as the integration tests do). Documents run in parallel, a few at a time.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import typer

from tests.docs.doc_blocks import (
    Block,
    DocError,
    Ports,
    build_script,
    commands_of,
    parse_blocks,
    strip_comment,
)

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]
DOC_IDS = [p.relative_to(REPO).as_posix() for p in DOCS]
MAX_SKIPS = 6
"""Skipped blocks allowed across all documents; each one is listed in the test report."""
DOC_TIMEOUT_S = 300
PARALLEL = 3
FLEET_DATABASE = "rareindex_fleet"
PG_ADMIN_URL = os.environ.get("RI_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_DOC_URL = re.compile(r"redis://127\.0\.0\.1:6379/\d+")


@dataclass(slots=True)
class DocRun:
    """What running one document gave."""

    failures: list[str] = field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    commands: int = 0
    skip: str | None = None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def _services(script: str) -> tuple[bool, bool]:
    """Whether the script talks to the local PostgreSQL, and to the local Redis."""
    return FLEET_DATABASE in script, bool(REDIS_DOC_URL.search(script))


def _missing_services(pg: bool, redis: bool) -> str | None:
    down = [
        name
        for name, needed, port in (("PostgreSQL", pg, 5432), ("Redis", redis, 6379))
        if needed and not _reachable("127.0.0.1", port)
    ]
    return f"{' and '.join(down)} not reachable on 127.0.0.1; run `make services`" if down else None


def _empty_redis_db() -> int:
    import redis

    for number in secrets.SystemRandom().sample(range(1, 8), 7):
        client = redis.Redis.from_url(f"redis://127.0.0.1:6379/{number}")
        try:
            if client.dbsize() == 0:
                return number
        finally:
            client.close()
    raise RuntimeError("no empty Redis database among 1-7 for the docs test")


def _flush_redis(number: int) -> None:
    import redis

    client = redis.Redis.from_url(f"redis://127.0.0.1:6379/{number}")
    try:
        client.flushdb()
    finally:
        client.close()


def _drop_database(name: str) -> None:
    from rareindex.storage import make_engine

    admin = make_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def _environment(work: Path, fail_file: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RI_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # Every command is a fresh interpreter: keep its bytecode (outside the checkout) so each
    # does not compile the packages again, as a reader's shell would not.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "rareindex-docs-pycache")
    env.update(
        RI_DATA_DIR=str(work),
        RI_CONNECTORS_DIR=str(work / "connectors"),
        DOCS_TEST_FAIL=str(fail_file),
        COLUMNS="160",
        NO_COLOR="1",
        TERM="dumb",
        PYTHONUNBUFFERED="1",
    )
    return env


def run_document(path: Path) -> DocRun:
    """Run every command of ``path`` in a fresh directory; the failures say file:line."""
    run = DocRun()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ri-docs-") as tmp:
        work = Path(tmp) / "work"
        staging = Path(tmp) / "files"
        work.mkdir()
        staging.mkdir()
        shutil.copytree(REPO / "connectors", work / "connectors")
        ports = Ports({8000: _free_port(), 8765: _free_port()})
        try:
            blocks = parse_blocks(path)
            script = build_script(blocks, ports=ports, repo=REPO, files_dir=staging)
        except DocError as exc:
            run.failures.append(str(exc))
            return run
        run.commands = sum(len(commands_of(b)) for b in blocks if b.runnable and not _skipped(b))
        if run.commands == 0:
            return run
        pg, redis_needed = _services(script)
        if missing := _missing_services(pg, redis_needed):
            if os.environ.get("CI") == "true":
                run.failures.append(f"CI=true: {missing}")
            else:
                run.skip = f"{path.name}: {missing}"
            return run
        database = f"ri_docs_{os.getpid()}_{secrets.token_hex(3)}"
        redis_db = _empty_redis_db() if redis_needed else None
        script = script.replace(FLEET_DATABASE, database)
        if redis_db is not None:
            script = REDIS_DOC_URL.sub(f"redis://127.0.0.1:6379/{redis_db}", script)
        (Path(tmp) / "doc.sh").write_text(script)
        fail_file = Path(tmp) / "failures.txt"
        fail_file.touch()
        log_path = Path(tmp) / "output.log"
        try:
            with log_path.open("w") as log:
                process = subprocess.Popen(
                    ["bash", str(Path(tmp) / "doc.sh")],
                    cwd=work,
                    env=_environment(work, fail_file),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                try:
                    code = process.wait(timeout=DOC_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    code = None
                    run.failures.append(f"{path.name}: still running after {DOC_TIMEOUT_S} s")
                finally:
                    # The script's own session: whatever it left running ends here.
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            run.failures += fail_file.read_text().splitlines()
            if code not in (0, None) and not run.failures:
                run.failures.append(f"{path.name}: the script exited {code}")
            run.log = log_path.read_text(errors="replace")
        finally:
            if pg:
                _drop_database(database)
            if redis_db is not None:
                _flush_redis(redis_db)
    run.seconds = time.monotonic() - started
    return run


def _skipped(block: Block) -> bool:
    return block.marker is not None and block.marker.kind == "skip"


def _safe_blocks(path: Path) -> list[Block]:
    try:
        return parse_blocks(path)
    except DocError:
        return []  # reported by the document's own test


SKIPPED = [
    (b.where, b.marker.arg) for p in DOCS for b in _safe_blocks(p) if b.marker and _skipped(b)
]


@pytest.fixture(scope="session")
def doc_runs(request: pytest.FixtureRequest) -> Iterator[dict[str, Future[DocRun]]]:
    """Start every selected document at once (a few in parallel); each test waits for its own."""
    selected = {
        item.callspec.params["doc"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_every_command_of_the_doc_runs"
        and hasattr(item, "callspec")
    }
    # Longest first, so the slowest document does not start last.
    order = sorted(selected, key=lambda d: -(REPO / d).read_text().count("rareindex "))
    with ThreadPoolExecutor(max_workers=PARALLEL, thread_name_prefix="docs") as pool:
        futures = {doc: pool.submit(run_document, REPO / doc) for doc in order}
        yield futures
        for future in futures.values():
            future.cancel()


@pytest.mark.parametrize("doc", DOC_IDS)
def test_every_command_of_the_doc_runs(doc: str, doc_runs: dict[str, Future[DocRun]]) -> None:
    run = doc_runs[doc].result()
    print(f"{doc}: {run.commands} commands in {run.seconds:.1f} s")  # shown with -rP
    if run.skip:
        pytest.skip(run.skip)
    tail = "\n".join(run.log.splitlines()[-60:])
    assert not run.failures, "\n".join(run.failures) + f"\n--- last lines of output ---\n{tail}"


@pytest.mark.parametrize(("where", "reason"), SKIPPED, ids=[w for w, _ in SKIPPED])
def test_skipped_block(where: str, reason: str) -> None:
    """Each block a document marks skip, listed in the report with its reason."""
    pytest.skip(f"{where}: {reason}")


def test_skips_are_few() -> None:
    assert len(SKIPPED) <= MAX_SKIPS, f"{len(SKIPPED)} skipped blocks: {SKIPPED}"


def test_the_readme_starts_with_make_demo_and_make_test() -> None:
    first = parse_blocks(README)[0]
    commands = [strip_comment(c.text) for c in commands_of(first)]
    assert commands == ["make demo", "make test"]
    makefile = (REPO / "Makefile").read_text()
    for target in ("demo", "test"):
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), f"no `{target}:` target"
        dry = subprocess.run(
            ["make", "-n", target],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert dry.returncode == 0, dry.stderr


# --- names: every `rareindex …` the docs mention exists, with its options --------------------

_INLINE = re.compile(r"`([^`\n]+)`")
_SHELL_STOP = re.compile(r"^(?:\||&&|;|&|\d?>>?|<|\))")
_NOT_COMMANDS = {"python", "json", "toml", "yaml", "sql", "text"}


def _mentions(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every ``rareindex …`` invocation: inline code and command lines."""
    in_block, lang = False, ""
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block, lang = not in_block, stripped.strip("`").strip().lower()
            continue
        if in_block:
            if lang in _NOT_COMMANDS:
                continue
            candidate = strip_comment(stripped.removeprefix("$ "))
            candidate = re.sub(r"^(?:[A-Z_]+=\S+\s+)+", "", candidate)  # VAR=value prefixes
            if candidate.startswith("rareindex "):
                yield number, candidate
            continue
        for span in _INLINE.findall(line):
            if span.startswith("rareindex ") and not span.startswith("rareindex_"):
                yield number, span


def _tokens(text: str) -> list[str]:
    import shlex

    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _problem(root: Any, text: str) -> str | None:
    """Why ``text`` is not a valid invocation of the command tree under ``root`` (or None).

    Typer vendors its own click, so groups are recognised by their ``commands``."""
    command, trail = root, ["rareindex"]
    for token in _tokens(text)[1:]:
        if _SHELL_STOP.match(token):
            break
        if token.startswith("--"):
            known = {"--help"} | {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
            for option in token.split("=", 1)[0].split("/"):  # `--a/--b` names two
                if option not in known:
                    return f"`{' '.join(trail)}` has no option {option}"
            continue
        if hasattr(command, "commands"):  # get_command: a lazy group imports the command
            sub = command.get_command(None, token)
            if sub is None:
                return f"`{' '.join(trail)}` has no command {token!r}"
            command, trail = sub, [*trail, token]
            continue
        # An argument of a leaf command: placeholders and values are not checked.
    return None


def test_every_rareindex_command_the_docs_name_exists() -> None:
    from workers.cli import app

    root = typer.main.get_command(app)
    problems = [
        f"{path.relative_to(REPO)}:{line}: {problem}  ({text})"
        for path in DOCS
        for line, text in _mentions(path)
        if (problem := _problem(root, text))
    ]
    assert not problems, "\n".join(problems)


def test_relative_links_in_the_docs_resolve() -> None:
    broken = []
    for path in DOCS:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                if not (path.parent / target.split("#", 1)[0]).exists():
                    broken.append(f"{path.relative_to(REPO)}:{number}: {target}")
    assert not broken, "\n".join(broken)


def test_every_test_the_docs_name_exists() -> None:
    """`tests/…/test_x.py::test_name` and `faults/test_x.py` in the docs (docs/architecture.md
    lists the invariants' tests) point at tests that exist; paths may leave out ``tests/``."""
    written = {  # files a guide writes itself (its example test) are not the suite's
        b.marker.arg for p in DOCS for b in _safe_blocks(p) if b.marker and b.marker.kind == "file"
    }
    missing = []
    for path in DOCS:
        text = path.read_text()
        for file, name in re.findall(r"((?:tests/)?[\w/]+/test_\w+\.py)(?:::(test_\w+))?", text):
            target = REPO / (file if file.startswith("tests/") else f"tests/{file}")
            if target.relative_to(REPO).as_posix() in written:
                continue
            if not target.is_file():
                missing.append(f"{path.relative_to(REPO)}: no file {file}")
            elif name and not re.search(rf"def {name}\(", target.read_text()):
                missing.append(f"{path.relative_to(REPO)}: no {file}::{name}")
    assert not missing, "\n".join(missing)
