"""The docs runner itself: it must fail on what is wrong, or the docs test proves nothing.

Each case is a small Markdown document run by :func:`run_document` exactly as README.md and
docs/*.md are, with plain shell commands instead of ``rareindex`` so it stays fast.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.docs.doc_blocks import DocError, Ports, commands_of, parse_blocks, strip_comment
from tests.docs.test_docs_commands import run_document

# A server for background blocks: listens on --port, exits 0 on SIGTERM (1 with --fail-on-term).
SERVER = textwrap.dedent(
    """\
    import signal, socket, sys, time
    port = int(sys.argv[sys.argv.index("--port") + 1])
    code = 1 if "--fail-on-term" in sys.argv else 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(code))
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    print(f"listening on {port}", flush=True)
    while True:
        time.sleep(0.1)
    """
)


PROBE = "import socket, sys; h, p = sys.argv[1].split(':'); socket.create_connection((h, int(p)))"


def doc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "guide.md"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_document_that_works_passes_and_keeps_its_shell_state(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        """\
        # Guide

        <!-- docs-test: file notes/hello.txt -->
        ```text
        hello
        ```

        ```sh
        export GREETING=$(cat notes/hello.txt)   # a comment
        ```

        Text between blocks.

        ```console
        $ test "$GREETING" = hello && echo ok
        ok
        ```

        ```python
        this is not run
        ```
        """,
    )
    run = run_document(path)
    assert run.failures == [], run.log
    assert run.commands == 2


def test_a_failing_command_fails_the_document_naming_its_line(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        """\
        ```sh
        true
        ls no-such-file
        echo never reached > reached.txt
        ```
        """,
    )
    run = run_document(path)
    assert run.failures == ["guide.md:3: exit 2, expected 0: ls no-such-file"]
    assert "never reached" not in run.log


def test_an_expected_exit_status_is_enforced_both_ways(tmp_path: Path) -> None:
    passing = doc(tmp_path, "<!-- docs-test: exit 3 -->\n```sh\nsh -c 'exit 3'\n```\n")
    assert run_document(passing).failures == []
    failing = doc(tmp_path, "<!-- docs-test: exit 3 -->\n```sh\ntrue\n```\n")
    assert run_document(failing).failures == ["guide.md:3: exit 0, expected 3: true"]


def test_an_error_line_shown_in_a_console_block_must_be_printed(tmp_path: Path) -> None:
    shown = (
        "<!-- docs-test: exit 2 -->\n```console\n"
        "$ echo 'error: port 8000 on /some/path is taken' >&2; exit 2\n"
        "error: port 8000 on … is taken\n```\n"
    )
    assert run_document(doc(tmp_path, shown)).failures == []
    wrong = shown.replace("is taken\n```", "is free\n```")
    failures = run_document(doc(tmp_path, wrong)).failures
    assert len(failures) == 1 and failures[0].startswith("guide.md:3: the doc shows 'error: port")
    assert failures[0].endswith("on … is free', the command did not print it")


def test_a_background_server_gets_a_free_port_and_must_stop_cleanly(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    text = f"""\
        <!-- docs-test: background -->
        ```sh
        python {tmp_path / "server.py"} --port 8765
        ```

        ```sh
        python -c "{PROBE}" 127.0.0.1:8765 && echo reachable
        ```
        """
    run = run_document(doc(tmp_path, text))
    assert run.failures == [], run.log
    assert "listening on 8765" not in run.log and "reachable" in run.log  # it was mapped
    failing = text.replace("--port 8765", "--port 8765 --fail-on-term")
    failures = run_document(doc(tmp_path, failing)).failures
    assert len(failures) == 1 and failures[0].endswith("exited 1 after SIGTERM (expected 0)")


def test_a_skipped_block_is_not_run(tmp_path: Path) -> None:
    path = doc(tmp_path, "<!-- docs-test: skip (too slow here) -->\n```sh\nfalse\n```\n")
    assert run_document(path).failures == []
    (block,) = parse_blocks(path)
    assert block.marker is not None and block.marker.arg == "too slow here"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```\n$ rareindex db upgrade\n```\n", "tag it ```console"),
        ("<!-- docs-test: skip -->\n```sh\ntrue\n```\n", "a skip needs a reason"),
        ("<!-- docs-test: sometimes -->\n```sh\ntrue\n```\n", "unknown marker"),
        ("<!-- docs-test: exit 2 -->\n\nprose\n\n```sh\ntrue\n```\n", "right before a block"),
        ("<!-- docs-test: file /etc/passwd -->\n```text\nx\n```\n", "relative path"),
        ("<!-- docs-test: background -->\n```sh\nsleep 100\n```\n", "rareindex server"),
    ],
)
def test_a_document_the_runner_cannot_run_as_written_fails(
    tmp_path: Path, text: str, message: str
) -> None:
    (failure,) = run_document(doc(tmp_path, text)).failures
    assert message in failure


def test_commands_are_split_joined_and_stripped_of_comments(tmp_path: Path) -> None:
    path = doc(
        tmp_path,
        """\
        ```console
        $ rareindex crawl \\
        >   cards-shop   # one run
        output line
        $ rareindex health
        ```
        """,
    )
    (block,) = parse_blocks(path)
    assert [c.text for c in commands_of(block)] == [
        "rareindex crawl \\\n  cards-shop   # one run",
        "rareindex health",
    ]
    assert strip_comment('curl -d \'{"a": "#1"}\' x  # post') == 'curl -d \'{"a": "#1"}\' x'
    with pytest.raises(DocError):
        parse_blocks(doc(tmp_path, "<!-- docs-test: exit 2 -->\n"))


def test_ports_are_mapped_only_where_they_are_ports() -> None:
    ports = Ports({8000: 41000})
    assert ports.apply("curl http://127.0.0.1:8000/x --port 8000 port 8000") == (
        "curl http://127.0.0.1:41000/x --port 41000 port 41000"
    )
    assert ports.apply("price 18000 and 8000.00 USD") == "price 18000 and 8000.00 USD"
