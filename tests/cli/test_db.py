"""``toolvet db upgrade`` and ``toolvet --version``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Toolvet
from tests.conftest import new_pg_database
from toolvet import __version__
from toolvet.db.engine import make_engine
from toolvet.db.migrate import head_revision, upgrade


def test_db_upgrade_creates_the_database_and_names_it(toolvet: Toolvet, home: Path) -> None:
    url = f"sqlite:///{home}/toolvet.sqlite3"
    assert toolvet.ok("db", "upgrade").stdout == f"database created at revision {head_revision()}: {url}\n"
    assert (home / "toolvet.sqlite3").exists()
    assert toolvet.ok("db", "upgrade").stdout == f"database is up to date: {url}\n"  # and again, nothing to do


def test_db_upgrade_says_from_which_revision_it_moved(toolvet: Toolvet, home: Path) -> None:
    engine = make_engine(f"sqlite:///{home}/toolvet.sqlite3")
    try:
        upgrade(engine, "0020")
    finally:
        engine.dispose()
    out = toolvet.ok("db", "upgrade").stdout
    assert out == f"database upgraded from revision 0020 to {head_revision()}: sqlite:///{home}/toolvet.sqlite3\n"


@pytest.mark.postgres
def test_db_upgrade_hides_the_database_password(
    toolvet: Toolvet, pg_base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The throwaway cluster trusts local connections, so the password is accepted and ignored.
    url = new_pg_database(pg_base_url).replace("postgres@", "postgres:hunter2@")
    monkeypatch.setenv("TOOLVET_DATABASE_URL", url)
    out = toolvet.ok("db", "upgrade").stdout
    assert "hunter2" not in out and "postgres:***@" in out


def test_version_prints_the_package_version(toolvet: Toolvet) -> None:
    assert toolvet.ok("--version").stdout == f"toolvet {__version__}\n"
