"""The errors a newcomer meets first are one line each, with the fix, and exit status 2.

Through the real ``rareindex`` entry point in a subprocess, as a user would meet them: no
database, a wrong URL scheme, a connector file with a typo, a missing engine key, a port in use.
Each must print exactly one line on stderr, starting with ``error:`` and naming the fix — never a
traceback. README.md ("When something is wrong") lists the same five.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from rareindex.errors import ConfigError
from rareindex.fetching import require_runnable
from rareindex.registry import load_registry
from rareindex.settings import Settings, load_settings
from rareindex_connectors import ConnectorMeta
from tests.cli_helpers import REPO, run_cli

UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:9/rareindex"  # port 9: nothing listens


def one_error_line(result: subprocess.CompletedProcess[str], *fixes: str) -> str:
    """The single ``error:`` line of a failed command; it must contain every one of ``fixes``."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    for fix in fixes:
        assert fix in lines[0], (fix, lines[0])
    return lines[0]


@pytest.fixture
def connectors_dir(tmp_path: Path) -> Path:
    target = tmp_path / "connectors"
    shutil.copytree(REPO / "connectors", target)
    return target


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory whose embedded database is at the newest schema."""
    data = tmp_path_factory.mktemp("migrated")
    assert run_cli("db", "upgrade", env={"RI_DATA_DIR": str(data)}).returncode == 0
    return data


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that something is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


# --- 1. no database -------------------------------------------------------------------------


def test_an_unreachable_database_says_start_it_or_use_sqlite(tmp_path: Path) -> None:
    result = run_cli(
        "db", "upgrade", env={"RI_DATA_DIR": str(tmp_path), "RI_DATABASE_URL": UNREACHABLE}
    )
    line = one_error_line(
        result, "cannot reach the database at", "start it, or unset RI_DATABASE_URL", "SQLite"
    )
    assert line.startswith(f"error: cannot reach the database at {UNREACHABLE}: ")


def test_a_missing_database_on_a_running_server_says_createdb(tmp_path: Path) -> None:
    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=2).close()
    except OSError:
        reason = "PostgreSQL is not reachable on 127.0.0.1:5432; run `make services`"
        if os.environ.get("CI") == "true":  # under CI a missing service is a failure
            pytest.fail(f"CI=true: {reason}", pytrace=False)
        pytest.skip(reason)
    name = f"ri_missing_{secrets.token_hex(4)}"
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    result = run_cli("db", "upgrade", env={"RI_DATA_DIR": str(tmp_path), "RI_DATABASE_URL": url})
    one_error_line(
        result, f'database "{name}" does not exist', f"createdb -h 127.0.0.1 -U postgres {name}"
    )


# --- 2. wrong URL scheme -----------------------------------------------------------------------


def test_a_wrong_scheme_lists_the_accepted_ones(tmp_path: Path) -> None:
    url = "mysql://root@localhost/rareindex"
    result = run_cli("db", "upgrade", env={"RI_DATA_DIR": str(tmp_path), "RI_DATABASE_URL": url})
    one_error_line(
        result,
        "RI_DATABASE_URL: scheme 'mysql' is not supported",
        "postgresql+psycopg://",
        "postgres://",
        "sqlite:///",
    )


@pytest.mark.parametrize(
    ("url", "read_as"),
    [
        ("postgres://u@db/x", "postgresql+psycopg://u@db/x"),
        ("postgresql://u@db/x", "postgresql+psycopg://u@db/x"),
        ("localhost:5432/x", None),
        ("postgresql+asyncpg://u@db/x", None),
    ],
)
def test_which_schemes_are_read_and_which_refused(url: str, read_as: str | None) -> None:
    if read_as is None:
        with pytest.raises(ConfigError, match="is not supported; use postgresql"):
            load_settings(database_url=url)
    else:
        assert load_settings(database_url=url).database_url == read_as


# --- 3. a connector file with a typo ---------------------------------------------------------

STORE = 'source = "Typo Store"\nbase_url = "https://typo.example"\ncurrency = "USD"\n'


def test_a_store_file_with_a_typo_names_file_line_and_fix(
    tmp_path: Path, connectors_dir: Path
) -> None:
    path = connectors_dir / "shopify" / "typo-store.toml"
    path.write_text(STORE + 'categories = ["tcg_card"]\ncolections = ["graded"]\n')
    env = {"RI_DATA_DIR": str(tmp_path), "RI_CONNECTORS_DIR": str(connectors_dir)}
    line = one_error_line(
        run_cli("connectors", "check", "typo-store", env=env),
        "colections: unknown key (did you mean 'collections'?)",
    )
    assert line.startswith(f"error: {path}:5: ")  # the file and line, not "no connector …"


@pytest.mark.parametrize(
    ("text", "fixes"),
    [
        (
            STORE + 'categories = ["tcg_card"]\ncolour = "red"\n',
            [":5: ", "colour: unknown key; valid keys: id, source, base_url"],
        ),
        (
            STORE + 'categories = ["tcg_card"]\nrefresh_class = "FAST"\n',
            [":5: ", "refresh_class: Input should be 'HOT', 'ACTIVE', 'NORMAL' or 'ARCHIVE'"],
        ),
        (
            STORE.replace('"https://typo.example"', '"https://typo.example'),
            ["not valid TOML", "(at line 2, column"],
        ),
    ],
    ids=["unknown-key", "bad-value", "toml-syntax"],
)
def test_other_mistakes_name_the_file_the_line_and_what_is_valid(
    tmp_path: Path, text: str, fixes: list[str]
) -> None:
    path = tmp_path / "shopify" / "typo-store.toml"
    path.parent.mkdir()
    path.write_text(text)
    registry = load_registry(tmp_path)
    with pytest.raises(ConfigError) as raised:
        registry.get("typo-store")
    message = str(raised.value)
    assert message.startswith(str(path)) and "\n" not in message
    for fix in fixes:
        assert fix in message, (fix, message)


# --- 4. a missing engine key ---------------------------------------------------------------

WALLED = STORE + 'categories = ["sneaker"]\nengines = ["firecrawl"]\n'
KEY_FIX = (
    "connector 'walled-store' fetches only with firecrawl",
    "RI_FIRECRAWL_API_KEY is not set",
    "export RI_FIRECRAWL_API_KEY=<your key>",
)


@pytest.mark.parametrize("command", [("connectors", "check"), ("crawl",)], ids=" ".join)
def test_a_connector_needing_a_paid_engine_names_the_key_to_set(
    migrated: Path, connectors_dir: Path, command: tuple[str, ...]
) -> None:
    (connectors_dir / "shopify" / "walled-store.toml").write_text(WALLED)
    env = {"RI_DATA_DIR": str(migrated), "RI_CONNECTORS_DIR": str(connectors_dir)}
    one_error_line(run_cli(*command, "walled-store", env=env), *KEY_FIX)


def _meta(**overrides: object) -> ConnectorMeta:
    fields: dict[str, object] = {
        "id": "walled-store",
        "source": "Walled Store",
        "engines": ("firecrawl",),
        "categories": ("sneaker",),
        "capabilities": ("listing",),
    }
    return ConnectorMeta.model_validate({**fields, **overrides})


def test_require_runnable_refuses_only_what_cannot_fetch() -> None:
    bare = Settings(_env_file=None)  # type: ignore[call-arg]
    keyed = Settings(_env_file=None, firecrawl_api_key="fc-test")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match="export RI_FIRECRAWL_API_KEY"):
        require_runnable(_meta(), bare, env={})
    require_runnable(_meta(), keyed, env={})
    require_runnable(_meta(engines=("api", "firecrawl")), bare, env={})  # api can still fetch
    both = _meta(engines=("firecrawl", "scrapfly"))
    with pytest.raises(ConfigError, match="RI_FIRECRAWL_API_KEY / RI_SCRAPFLY_API_KEY are not set"):
        require_runnable(both, bare, env={})
    with pytest.raises(ConfigError, match="needs PSA_API_TOKEN"):
        require_runnable(_meta(engines=("api",), requires=("PSA_API_TOKEN",)), bare, env={})
    require_runnable(
        _meta(engines=("api",), requires=("PSA_API_TOKEN",)), bare, env={"PSA_API_TOKEN": "x"}
    )


# --- 5. a port in use ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["api", "fakeweb"])
def test_a_port_in_use_says_pick_another(migrated: Path, busy_port: int, command: str) -> None:
    result = run_cli(command, "--port", str(busy_port), env={"RI_DATA_DIR": str(migrated)})
    one_error_line(
        result,
        f"port {busy_port} on 127.0.0.1 is already in use",
        "pick another with --port",
    )
