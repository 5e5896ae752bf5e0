"""The CLI driven in-process with Typer's runner, on a real SQLite database in a temporary home."""

from __future__ import annotations

import getpass
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner, Result

from toolvet.cli import app
from toolvet.services.context import Context
from toolvet.settings import Settings

LOCAL_ACTOR = f"cli:{getpass.getuser()}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toolvet home with its own SQLite database and secret key, set the way a user would: by env."""
    monkeypatch.setenv("TOOLVET_HOME", str(tmp_path))
    monkeypatch.setenv("TOOLVET_DATABASE_URL", f"sqlite:///{tmp_path}/toolvet.sqlite3")
    monkeypatch.setenv("TOOLVET_SECRET_KEY", Fernet.generate_key().decode())
    monkeypatch.delenv("TOOLVET_DEBUG", raising=False)
    return tmp_path


class Toolvet:
    """``toolvet(...)`` runs one command line; ``ok``/``fails``/``json`` assert how it went."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        return self.runner.invoke(app, list(args), input=input)

    def ok(self, *args: str) -> Result:
        result = self(*args)
        assert result.exit_code == 0, (
            f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        )
        return result

    def fails(self, *args: str) -> str:
        """Run a command that must be refused; return its one error line."""
        result = self(*args)
        assert result.exit_code == 1, (
            f"exit {result.exit_code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        )
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
        assert result.stdout == ""
        return lines[0]

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "--json").stdout)


@pytest.fixture
def toolvet(home: Path) -> Toolvet:
    return Toolvet()


@pytest.fixture
def service(home: Path) -> Iterator[Context]:
    """A Context on the same database, for asking the services what the CLI should have printed."""
    ctx = Context.open(Settings())
    yield ctx
    ctx.close()


OBJECT_SCHEMA = '{"type": "object", "properties": {"q": {"type": "string"}}}'


@pytest.fixture
def hand(toolvet: Toolvet) -> Toolvet:
    """A manual server ``hand`` with one hand-registered tool ``search``."""
    toolvet.ok("server", "add", "hand", "--url", "http://127.0.0.1:9/mcp", "--manual")
    toolvet.ok(
        "tool",
        "add",
        "hand",
        "--name",
        "search",
        "--input-schema",
        OBJECT_SCHEMA,
        "--annotations",
        '{"readOnlyHint": true}',
    )
    return toolvet
