"""Setup mistakes name what is wrong in one line, exit 1, in a real process: a database URL that is
not one, a PostgreSQL server that cannot be reached, a port in use (serve and demo), a home or a
database file that cannot be written."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def toolvet_with(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolvet", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env}, check=False)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert (proc.returncode, proc.stdout) == (1, ""), (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr.rstrip("\n")


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield busy.getsockname()[1]


@pytest.mark.parametrize("url", ["notaurl", "sqlite//no-colon", "://"])
def test_a_database_url_that_is_not_one_is_named(home: Path, url: str) -> None:
    proc = toolvet_with("tool", "list", TOOLVET_DATABASE_URL=url)
    assert one_error_line(proc) == "error: TOOLVET_DATABASE_URL: not a database URL"


def test_an_unreachable_postgresql_is_named_with_its_host_and_port(home: Path) -> None:
    with socket.socket() as closed:  # bound, never listening: a connection to it is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        proc = toolvet_with("server", "list", TOOLVET_DATABASE_URL=f"postgresql://toolvet:pw@127.0.0.1:{port}/tv")
    line = one_error_line(proc)
    assert line.startswith(f"error: cannot reach PostgreSQL at 127.0.0.1:{port}: "), line
    assert "pw" not in line


@pytest.mark.parametrize("command", [["serve"], ["demo"]])
def test_a_port_in_use_is_named(home: Path, busy_port: int, command: list[str]) -> None:
    proc = toolvet_with(*command, "--port", str(busy_port))
    assert one_error_line(proc).startswith(f"error: port {busy_port} is in use (on 127.0.0.1)")


def test_a_home_that_cannot_be_written_is_named(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    unwritable = tmp_path / "a-file" / "home"
    proc = toolvet_with("tool", "list", TOOLVET_HOME=str(unwritable), TOOLVET_DATABASE_URL="")
    assert one_error_line(proc) == f"error: TOOLVET_HOME: cannot write to {unwritable}: Not a directory"


def test_a_database_file_that_cannot_be_created_names_the_database_url(home: Path) -> None:
    (home / "a-file").write_text("")
    proc = toolvet_with("tool", "list", TOOLVET_DATABASE_URL=f"sqlite:///{home}/a-file/db.sqlite3")
    assert one_error_line(proc) == f"error: TOOLVET_DATABASE_URL: cannot write to {home}/a-file: Not a directory"

