"""current_revision and head_revision read the version table and the scripts' headers without
importing Alembic (a command's start-up); they must answer exactly as Alembic does, and leave to
Alembic whatever they cannot settle alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import text

from rareindex.storage import current_revision, head_revision, make_engine, upgrade
from rareindex.storage.migrate import DEFAULT_MIGRATIONS, _config, _single_head

SCRIPT = '''"""{message}

Revision ID: {rev}
Revises: {down}
"""

revision{annotation} = {rev!r}
down_revision = {down!r}
branch_labels = {labels!r}
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
'''


def _alembic_head(migrations: Path) -> str | None:
    return ScriptDirectory.from_config(_config(migrations)).get_current_head()


def _migrations(tmp_path: Path, *scripts: tuple[str, object, object]) -> Path:
    versions = tmp_path / "migrations" / "versions"
    versions.mkdir(parents=True)
    for number, (rev, down, labels) in enumerate(scripts):
        (versions / f"{number:04d}_{rev}.py").write_text(
            SCRIPT.format(
                message=f"revision = 'not this {rev}'",  # a header-like line in the docstring
                rev=rev,
                down=down,
                labels=labels,
                annotation=": str" if number % 2 else "",
            )
        )
    return tmp_path / "migrations"


def test_the_repository_s_head_is_alembic_s() -> None:
    assert _single_head(DEFAULT_MIGRATIONS / "versions") is not None
    assert head_revision() == _alembic_head(DEFAULT_MIGRATIONS)


def test_a_linear_history_is_read_from_the_headers(tmp_path: Path) -> None:
    migrations = _migrations(tmp_path, ("a1", None, None), ("b2", "a1", None), ("c3", "b2", None))
    assert _single_head(migrations / "versions") == "c3"
    assert head_revision(migrations_dir=migrations) == _alembic_head(migrations) == "c3"


@pytest.mark.parametrize(
    "scripts",
    [
        [("a1", None, None), ("b2", "a1", None), ("c3", "a1", None)],  # two heads
        [("a1", None, None), ("b2", "a1", "feature")],  # a branch label
        [("a1", None, None), ("b2", "a1", None), ("c3", "a1", None), ("d4", ("b2", "c3"), None)],
    ],
    ids=["two-heads", "branch-label", "merge"],
)
def test_what_the_headers_cannot_settle_is_alembic_s_answer(
    tmp_path: Path, scripts: list[tuple[str, object, object]]
) -> None:
    migrations = _migrations(tmp_path, *scripts)
    assert _single_head(migrations / "versions") is None
    try:
        expected: object = _alembic_head(migrations)
    except CommandError as exc:
        with pytest.raises(CommandError, match="head"):
            head_revision(migrations_dir=migrations)
        assert "head" in str(exc)
    else:
        assert head_revision(migrations_dir=migrations) == expected


def test_the_current_revision_is_alembic_s(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'rareindex.db'}")
    try:

        def alembic_says() -> str | None:
            with engine.connect() as conn:
                return MigrationContext.configure(conn).get_current_revision()

        assert current_revision(engine) is None and alembic_says() is None  # no table
        upgrade(engine)
        assert current_revision(engine) == alembic_says() == head_revision()
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM alembic_version"))
        assert current_revision(engine) is None and alembic_says() is None  # an empty table
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO alembic_version VALUES ('0001'), ('0002')"))
        with pytest.raises(CommandError, match="more than one head"):
            alembic_says()
        with pytest.raises(CommandError, match="more than one head"):
            current_revision(engine)
    finally:
        engine.dispose()
