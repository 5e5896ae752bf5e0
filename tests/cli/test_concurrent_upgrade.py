"""Replicas started together on an empty database all migrate it: the migrations run under a
database lock, so none of them crashes on another's half-made schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from tests.conftest import new_pg_database
from toolvet.db.engine import make_engine
from toolvet.db.migrate import current_revision, head_revision

PROCESSES = 3


def upgrade_together(url: str, home: Path) -> list[subprocess.CompletedProcess[str]]:
    """``toolvet db upgrade`` in PROCESSES processes started at once on ``url``."""
    env = {**os.environ, "TOOLVET_DATABASE_URL": url, "TOOLVET_HOME": str(home),
           "TOOLVET_SECRET_KEY": Fernet.generate_key().decode()}
    procs = [subprocess.Popen([sys.executable, "-m", "toolvet", "db", "upgrade"], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(PROCESSES)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def at_head(url: str) -> bool:
    engine = make_engine(url)
    try:
        return current_revision(engine) == head_revision()
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_three_processes_migrate_an_empty_postgresql_database_ten_times_and_none_crashes(pg_base_url, tmp_path):
    for run in range(10):
        url = new_pg_database(pg_base_url)
        for result in upgrade_together(url, tmp_path / str(run)):
            assert result.returncode == 0, (run, result.stderr)
            assert result.stdout.startswith(("database created at revision", "database is up to date")), result.stdout
        assert at_head(url)


def test_three_processes_migrate_an_empty_sqlite_file_and_none_crashes(tmp_path):
    for run in range(3):
        url = f"sqlite:///{tmp_path}/{run}/toolvet.sqlite3"
        for result in upgrade_together(url, tmp_path / str(run)):
            assert result.returncode == 0, (run, result.stderr)
        assert at_head(url)
