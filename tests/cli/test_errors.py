"""Errors are one line on stderr with exit 1, never a traceback; usage errors stay exit 2."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Toolvet


def run_toolvet(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed ``toolvet`` in its own process, with the test home's environment."""
    return subprocess.run(
        [sys.executable, "-m", "toolvet", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


def test_an_error_in_a_real_process_is_one_line_on_stderr_with_exit_1(home: Path) -> None:
    proc = run_toolvet(home, "server", "show", "nope")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "error: server 'nope' not found\n")


def test_a_real_process_lists_as_json_and_tables_without_colour_codes(home: Path) -> None:
    assert run_toolvet(home, "server", "add", "svc", "--url", "http://x/mcp").returncode == 0
    table = run_toolvet(home, "server", "list", FORCE_COLOR="")
    assert table.returncode == 0 and "svc" in table.stdout and "\x1b" not in table.stdout
    assert '"name": "svc"' in run_toolvet(home, "server", "list", "--json").stdout


def not_a_database(home: Path) -> str:
    """A database URL whose file holds something else: nothing a setting names, an unexpected state."""
    (home / "garbage.sqlite3").write_bytes(b"this is not a SQLite database file, it only sits where one should" * 20)
    return f"sqlite:///{home}/garbage.sqlite3"


def test_an_unexpected_failure_is_one_internal_error_line_in_a_real_process(home: Path) -> None:
    proc = run_toolvet(home, "server", "list", TOOLVET_DATABASE_URL=not_a_database(home))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: internal error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_toolvet_debug_keeps_the_traceback_of_an_unexpected_failure(home: Path) -> None:
    proc = run_toolvet(home, "server", "list", TOOLVET_DATABASE_URL=not_a_database(home), TOOLVET_DEBUG="1")
    assert proc.returncode == 1 and "Traceback" in proc.stderr


def test_a_usage_error_stays_typers_with_exit_2(home: Path) -> None:
    proc = run_toolvet(home, "server", "add", "--no-such-option")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--no-such-option" in proc.stderr


def test_a_malformed_setting_is_refused_naming_its_environment_variable(
    toolvet: Toolvet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLVET_PORT", "eighty")
    assert toolvet.fails("server", "list").startswith("error: TOOLVET_PORT: ")


def test_a_secret_key_that_is_not_a_fernet_key_is_one_clear_line(
    toolvet: Toolvet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLVET_SECRET_KEY", "not-a-key")
    assert toolvet.fails("server", "list").startswith("error: secret_key is not a valid Fernet key")


def test_each_invocation_reads_the_environment_afresh(
    toolvet: Toolvet, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toolvet.ok("server", "add", "first", "--url", "http://x/mcp")
    monkeypatch.setenv("TOOLVET_DATABASE_URL", f"sqlite:///{home}/other.sqlite3")
    assert toolvet.json("server", "list")["total"] == 0


def read_until(fd: int, marker: bytes, timeout: float = 30.0) -> bytes:
    """Read a pty until ``marker`` shows up (bounded: fails after ``timeout`` seconds of silence)."""
    seen = b""
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"no {marker!r} within {timeout}s; got {seen!r}"
        seen += os.read(fd, 1024)
    return seen


@pytest.mark.parametrize(("answer", "kept"), [(b"n\n", True), (b"y\n", False)])
def test_remove_on_a_terminal_asks_first_and_does_what_the_person_answers(
    toolvet: Toolvet, home: Path, answer: bytes, kept: bool
) -> None:
    toolvet.ok("server", "add", "svc", "--url", "http://x/mcp")
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolvet", "server", "remove", "svc"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=dict(os.environ),
    )
    os.close(terminal)
    try:
        assert b"Remove server svc and its 0 tool(s)? [y/N]" in read_until(controller, b"[y/N]")
        os.write(controller, answer)
        assert proc.wait(timeout=30) == (1 if kept else 0)
    finally:
        os.close(controller)
    assert (toolvet.json("server", "list")["total"] == 1) is kept
