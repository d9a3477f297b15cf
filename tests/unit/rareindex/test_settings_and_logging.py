"""Settings pick the mode from configuration; bad values are one-line errors; secrets never leak."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from rareindex.errors import ConfigError
from rareindex.logging import configure_logging
from rareindex.settings import Settings, load_settings

SECRET = "fc-9f8e7d6c5b4a-very-secret"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RI_DATABASE_URL", "RI_BROKER_URL", "RI_FIRECRAWL_API_KEY", "RI_LOG_FORMAT"):
        monkeypatch.delenv(name, raising=False)


def test_embedded_by_default() -> None:
    settings = load_settings()
    assert settings.mode == "embedded"
    assert settings.database_url_or_default().startswith("sqlite:///")
    assert settings.database_url_or_default().endswith("/rareindex.db")


def test_fleet_when_broker_and_postgres_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RI_DATABASE_URL", "postgres://postgres@127.0.0.1/test")
    monkeypatch.setenv("RI_BROKER_URL", "redis://127.0.0.1:6379/0")
    settings = load_settings()
    assert settings.mode == "fleet"
    assert settings.database_url == "postgresql+psycopg://postgres@127.0.0.1/test"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RI_DATABASE_URL": "mysql://db/x"}, "RI_DATABASE_URL: scheme 'mysql' is not supported"),
        ({"RI_BROKER_URL": "kafka://k:9092"}, "RI_BROKER_URL: scheme 'kafka' is not supported"),
        ({"RI_BROKER_URL": "redis://127.0.0.1:6379/0"}, "need RI_DATABASE_URL=postgresql"),
        ({"RI_MAX_RUN_MINUTES": "0"}, "RI_MAX_RUN_MINUTES"),
    ],
)
def test_bad_settings_are_one_line_config_errors(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError) as excinfo:
        load_settings()
    assert message in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


def test_an_api_key_never_appears_in_repr_or_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RI_FIRECRAWL_API_KEY", SECRET)
    monkeypatch.setenv("RI_LOG_FORMAT", "json")
    settings = load_settings()
    assert settings.firecrawl_api_key is not None
    assert settings.firecrawl_api_key.get_secret_value() == SECRET
    assert SECRET not in repr(settings) and SECRET not in str(settings)

    stream = io.StringIO()
    configure_logging(settings, stream=stream)
    log = structlog.get_logger("test")
    log.info("settings.loaded", settings=settings.model_dump())
    log.info("engine.configured", api_key=SECRET, headers={"Authorization": f"Bearer {SECRET}"})
    log.warning("fetch.failed", url=f"https://api.example/scrape?key={SECRET}&url=x")
    log.error("oops", error=RuntimeError(f"bad key {SECRET}"))
    output = stream.getvalue()
    lines = [json.loads(line) for line in output.splitlines()]
    assert len(lines) == 4
    assert SECRET not in output
    assert lines[1]["api_key"] == "[redacted]"
    assert lines[2]["url"] == "https://api.example/scrape?key=[redacted]&url=x"


def test_console_format_locally_json_in_fleet(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    configure_logging(Settings(_env_file=None), stream=stream)  # type: ignore[call-arg]
    structlog.get_logger("t").info("db.upgraded", revision="0001")
    assert "db.upgraded" in stream.getvalue() and not stream.getvalue().startswith("{")

    monkeypatch.setenv("RI_DATABASE_URL", "postgresql+psycopg://h/db")
    monkeypatch.setenv("RI_BROKER_URL", "redis://h:6379/0")
    stream = io.StringIO()
    configure_logging(load_settings(), stream=stream)
    structlog.get_logger("t").info("db.upgraded", revision="0001")
    assert json.loads(stream.getvalue())["event"] == "db.upgraded"
