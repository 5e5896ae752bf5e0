"""``toolvet db upgrade`` and ``toolvet --version``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Toolvet
from tests.conftest import new_pg_database
from toolvet import __version__


def test_db_upgrade_creates_the_database_and_names_it(toolvet: Toolvet, home: Path) -> None:
    assert toolvet.ok("db", "upgrade").stdout == f"database is up to date: sqlite:///{home}/toolvet.sqlite3\n"
    assert (home / "toolvet.sqlite3").exists()
    assert toolvet.ok("db", "upgrade").exit_code == 0  # and again, with nothing to do


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
