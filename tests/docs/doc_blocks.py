"""Read the fenced blocks of a Markdown document and turn its commands into one bash script.

A document's ```` ```sh ````, ```` ```bash ```` and ```` ```console ```` blocks are run in order, in
one shell, so ``export`` and ``VAR=$(…)`` carry from one block to the next as they do for a reader.
In ``sh``/``bash`` blocks every non-comment line is a command (a trailing ``\\`` continues it); in
``console`` blocks only lines starting with ``$ `` are, the rest is output. An output line of a
console block that starts with ``error:`` is checked: the command must print a line that matches
it, where ``…`` stands for anything (a path, a port).

An HTML comment right before a block (blank lines may sit between) says how to treat it:

``<!-- docs-test: skip (reason) -->``
    not run; the reason is required and reported (``make demo`` in the README, for instance).
``<!-- docs-test: background -->``
    servers (``rareindex api``, ``fakeweb``, ``worker``, ``scheduler``): each command starts in the
    background, the test waits until its port answers (or, without a port, until it has been up
    for a moment), and at the end of the document sends SIGTERM and expects exit status 0. A
    command ending in ``&`` in any block is treated the same way.
``<!-- docs-test: exit N -->``
    every command of the block must exit with status N (the error examples).
``<!-- docs-test: file PATH -->``
    the block (TOML, JSON, Python…) is written to PATH, relative to the working directory, at
    this point of the document.
``<!-- docs-test: checkout -->``
    the commands run in the repository checkout instead of the temporary directory (read-only
    commands such as the contract suite).

Any other fenced block is documentation and not run, except that an untagged block holding
``$ `` prompts is refused: tag it ``console`` so it runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "RUNNABLE",
    "Block",
    "Command",
    "DocError",
    "Marker",
    "Ports",
    "build_script",
    "commands_of",
    "parse_blocks",
    "strip_comment",
]

RUNNABLE = frozenset({"sh", "bash", "console", "shell"})
"""Fence languages whose commands are run."""

MarkerKind = Literal["skip", "background", "exit", "file", "checkout"]
_MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<body>.*?)\s*-->", re.DOTALL)
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
SERVER_DEFAULT_PORTS = {"api": 8000, "fakeweb": 8765}
"""Ports the documents may use; the test maps each to a free port so runs never collide."""


class DocError(Exception):
    """A document the test cannot run as written (a bad marker, an unmarked prompt block)."""


@dataclass(frozen=True, slots=True)
class Marker:
    kind: MarkerKind
    arg: str = ""


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: where it starts (1-based line of the fence), its language and text."""

    path: Path
    line: int
    lang: str
    text: str
    marker: Marker | None = None

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE


@dataclass(frozen=True, slots=True)
class Command:
    """One command of a block: its text, the line it is on, and what the doc shows it printing."""

    text: str
    line: int
    expected_errors: tuple[str, ...] = ()


def _parse_marker(body: str, where: str) -> Marker:
    if m := re.fullmatch(r"skip\s*\((?P<reason>.+)\)", body, re.DOTALL):
        return Marker("skip", " ".join(m["reason"].split()))
    if body == "skip" or body.startswith("skip"):
        raise DocError(f"{where}: a skip needs a reason: <!-- docs-test: skip (why) -->")
    if body == "background":
        return Marker("background")
    if body == "checkout":
        return Marker("checkout")
    if m := re.fullmatch(r"exit\s+(?P<code>\d{1,3})", body):
        return Marker("exit", m["code"])
    if m := re.fullmatch(r"file\s+(?P<path>\S+)", body):
        target = Path(m["path"])
        if target.is_absolute() or ".." in target.parts:
            raise DocError(f"{where}: a file marker takes a relative path inside the work dir")
        return Marker("file", m["path"])
    raise DocError(
        f"{where}: unknown marker 'docs-test: {body}'; use skip (reason), background, "
        "exit N, file PATH or checkout"
    )


def parse_blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path`` with the marker that precedes it."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    pending: tuple[Marker, int] | None = None
    i = 0
    while i < len(lines):
        text = lines[i]
        fence = _FENCE.match(text)
        if fence is None:
            stripped = text.strip()
            if m := _MARKER.fullmatch(stripped):
                if pending is not None:
                    raise DocError(f"{path.name}:{pending[1]}: marker not followed by a block")
                pending = (_parse_marker(m["body"], f"{path.name}:{i + 1}"), i + 1)
            elif "docs-test:" in stripped and stripped.startswith("<!--"):
                raise DocError(f"{path.name}:{i + 1}: a docs-test marker must be on one line")
            elif stripped and pending is not None:
                raise DocError(
                    f"{path.name}:{pending[1]}: a docs-test marker must come right before a block"
                )
            i += 1
            continue
        close = fence["fence"]
        lang = fence["info"].strip().split()[0].lower() if fence["info"].strip() else ""
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(close[0] * len(close))
            and set(lines[j].strip()) == {close[0]}
        ):
            body.append(lines[j][len(fence["indent"]) :] if fence["indent"] else lines[j])
            j += 1
        marker = pending[0] if pending else None
        blocks.append(Block(path, i + 1, lang, "\n".join(body) + "\n", marker))
        pending = None
        i = j + 1
    if pending is not None:
        raise DocError(f"{path.name}:{pending[1]}: marker not followed by a block")
    return blocks


def commands_of(block: Block) -> list[Command]:
    """The commands of a runnable block, continuation lines joined."""
    lines = block.text.splitlines()
    commands: list[Command] = []
    if block.lang == "console":
        current: list[str] | None = None
        start = 0
        errors: list[str] = []

        def flush() -> None:
            if current is not None:
                commands.append(Command("\n".join(current), start, tuple(errors)))

        for offset, line in enumerate(lines, start=block.line + 1):
            if line.startswith("$ "):
                flush()
                current, start, errors = [line[2:]], offset, []
            elif current is not None and current[-1].endswith("\\"):
                current.append(line.removeprefix("> "))
            elif line.startswith("error:") and current is not None:
                errors.append(line)
        flush()
        return commands
    buffer: list[str] = []
    start = 0
    for offset, line in enumerate(lines, start=block.line + 1):
        if not buffer and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not buffer:
            start = offset
        buffer.append(line)
        if not line.endswith("\\"):
            commands.append(Command("\n".join(buffer), start))
            buffer = []
    if buffer:
        raise DocError(f"{block.where}: the last command ends in a continuation backslash")
    return commands


@dataclass(slots=True)
class Ports:
    """Documented port -> the free port this run uses instead (after ``127.0.0.1:``,
    ``localhost:``, ``port `` and ``--port=``, in commands and in the errors they show)."""

    mapping: dict[int, int] = field(default_factory=dict)

    def apply(self, text: str) -> str:
        for documented, free in self.mapping.items():
            after = r"(?:(?<=127\.0\.0\.1:)|(?<=localhost:)|(?<=port )|(?<=--port=))"
            text = re.sub(rf"{after}{documented}\b", str(free), text)
        return text


def strip_comment(command: str) -> str:
    """``command`` without a trailing ``# comment`` (a ``#`` outside quotes, after a space)."""
    quote: str | None = None
    escaped = False
    for i, char in enumerate(command):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or command[i - 1] in " \t"):
            return command[:i].rstrip()
    return command.rstrip()


def _server(command: str) -> str | None:
    """``api``, ``fakeweb``, ``worker`` or ``scheduler`` when the command starts that server."""
    m = re.match(r"\s*(?:\S+=\S+\s+)*rareindex\s+(api|fakeweb|worker|scheduler)\b", command)
    return m[1] if m else None


def _background_command(command: str, where: str, ports: Ports) -> tuple[str, int | None]:
    """The command to start in the background and the port to wait for (None: no port)."""
    server = _server(command)
    if server in SERVER_DEFAULT_PORTS and "--port" not in command:
        command = f"{command} --port {SERVER_DEFAULT_PORTS[server]}"
    command = ports.apply(command)
    if m := re.search(r"--port[ =](\d+)", command):
        return command, int(m[1])
    if server in {"worker", "scheduler"}:
        return command, None
    raise DocError(f"{where}: a background command must be a rareindex server or give --port")


PRELUDE = r"""set -o pipefail  # a failing command before `| tail` is still a failure
__bg_pids=()
declare -A __bg_where
__note() { printf '%s\n' "$1" >> "$DOCS_TEST_FAIL"; }
__fail() { __note "$1"; __stop_bg; exit 1; }
__stop_bg() {  # SIGTERM every background server, newest first; each must exit 0
  local pid rc i
  for ((i=${#__bg_pids[@]}-1; i>=0; i--)); do
    pid=${__bg_pids[i]}
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid"
      __note "${__bg_where[$pid]}: did not stop within 30 s of SIGTERM"
    fi
    wait "$pid"; rc=$?
    if [ "$rc" -ne 0 ]; then
      __note "${__bg_where[$pid]}: exited $rc after SIGTERM (expected 0)"
    fi
  done
  __bg_pids=()
}
__ready() {  # pid port where: wait until the port answers, or (no port) the process stays up
  for _ in $(seq 600); do
    kill -0 "$1" 2>/dev/null || __fail "$3: exited before it was ready"
    if [ -z "$2" ]; then sleep 2; kill -0 "$1" 2>/dev/null && return 0; fi
    if [ -n "$2" ] && (exec 9<>"/dev/tcp/127.0.0.1/$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  __fail "$3: not listening on port $2 after 60 s"
}
"""


def build_script(blocks: list[Block], *, ports: Ports, repo: Path, files_dir: Path) -> str:
    """A bash script that runs the blocks' commands in order and stops at the first failure.

    A failure is written to ``$DOCS_TEST_FAIL`` as ``file:line: what happened``; background
    servers are stopped with SIGTERM at the end (or at the failure) and must exit 0.
    """
    out = [PRELUDE]
    for index, block in enumerate(blocks):
        marker = block.marker
        if marker and marker.kind == "skip":
            continue
        if marker and marker.kind == "file":
            staged = files_dir / f"{index}"
            staged.write_text(block.text)
            target = shlex.quote(marker.arg)
            out += [
                f"# {block.where}: file {marker.arg}",
                f'mkdir -p "$(dirname {target})" && cp {shlex.quote(str(staged))} {target}'
                f" || __fail {shlex.quote(f'{block.where}: cannot write {marker.arg}')}",
            ]
            continue
        if not block.runnable:
            if not block.lang and re.search(r"^\$ ", block.text, re.MULTILINE):
                raise DocError(
                    f"{block.where}: an untagged block with $ prompts; tag it ```console so it "
                    "runs, or mark it <!-- docs-test: skip (reason) -->"
                )
            continue
        expect = int(marker.arg) if marker and marker.kind == "exit" else 0
        background = bool(marker and marker.kind == "background")
        for command in commands_of(block):
            where = f"{block.path.name}:{command.line}"
            text = "\n".join(strip_comment(line) for line in command.text.splitlines())
            if text.rstrip().endswith("&") and not text.rstrip().endswith("&&"):
                text, background_here = text.rstrip()[:-1].rstrip(), True
            else:
                background_here = background
            out.append(f"# {where}")
            out.append(f"printf '+ %s %s\\n' \"$EPOCHREALTIME\" {shlex.quote(f'{where}: {text}')}")
            if background_here:
                started, port = _background_command(text, where, ports)
                out += [
                    f"{started} &",
                    '__pid=$!; __bg_pids+=("$__pid")',
                    f"__bg_where[$__pid]={shlex.quote(f'{where}: {started}')}",
                    f"__ready \"$__pid\" '{port or ''}' {shlex.quote(f'{where}: {started}')}",
                ]
                continue
            text = ports.apply(text)
            if marker and marker.kind == "checkout":
                text = f"( cd {shlex.quote(str(repo))} && {text}\n)"
            if command.expected_errors:
                out.append(f"__out=$( {{ {text}\n}} 2>&1 ); __rc=$?")
                out.append("printf '%s\\n' \"$__out\"")
                for shown in map(ports.apply, command.expected_errors):
                    # `…` in the doc stands for anything (a path, a port): the rest must match.
                    pattern = "*".join(shlex.quote(part) for part in shown.split("…") if part)
                    message = f"{where}: the doc shows {shown!r}, the command did not print it"
                    out.append(
                        f"case $'\\n'\"$__out\" in *$'\\n'{pattern}*) ;; "
                        f"*) __fail {shlex.quote(message)} ;; esac"
                    )
            else:
                out.append(text)
                out.append("__rc=$?")
            failure = f"{where}: exit $__rc, expected {expect}: "
            out.append(f'[ "$__rc" -eq {expect} ] || __fail "{failure}"{shlex.quote(text[:300])}')
    out.append("__stop_bg")
    out.append('[ ! -s "$DOCS_TEST_FAIL" ]')
    return "\n".join(out) + "\n"
