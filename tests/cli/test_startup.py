"""The CLI starts without the heavy half of toolvet: ``import toolvet.cli``, ``toolvet --version`` and
``toolvet --help`` import neither the database layer nor the web stack nor the MCP SDK, and a
command that reads the registry does not import the SDK or the HTTP client. Each is checked in a
fresh interpreter, where ``sys.modules`` says what was imported (the figures are bench/cli.py's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from toolvet.cli import COMMANDS, app

HEAVY = ("sqlalchemy", "fastapi", "starlette", "mcp", "httpx2", "uvicorn", "alembic", "jinja2")
# What a command that reads the registry needs is the database layer; the SDK and HTTP stack it is not.
NEVER_FOR_A_READ = ("fastapi", "starlette", "mcp", "httpx2", "uvicorn", "jinja2")

PROBE = """
import json, sys
args, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["toolvet", *args]
try:
    {body}
except SystemExit:
    pass
print("\\n" + json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in watched)))
"""


def modules(home: Path, body: str, args: list[str], watched: tuple[str, ...]) -> list[str]:
    """The modules of the watched top-level packages a fresh interpreter has imported after ``body``."""
    script = PROBE.format(body=body)
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(args), json.dumps(list(watched))],
                          capture_output=True, text=True, timeout=60, env=dict(os.environ), check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    found: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


def imported(home: Path, body: str, args: list[str], watched: tuple[str, ...]) -> list[str]:
    """The watched top-level packages a fresh interpreter has imported after running ``body``."""
    return sorted({name.split(".")[0] for name in modules(home, body, args, watched)})


def test_importing_the_cli_imports_no_database_web_or_sdk_module(home: Path) -> None:
    assert imported(home, "import toolvet.cli", [], HEAVY) == []


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_version_and_help_import_no_database_web_or_sdk_module(home: Path, args: list[str]) -> None:
    assert imported(home, "from toolvet.cli import main; main()", args, HEAVY) == []


@pytest.mark.parametrize("args", [["tool", "list"], ["server", "list"], ["call", "list"], ["audit"], ["check"],
                                  ["export"]])
def test_a_command_that_reads_the_registry_imports_neither_the_sdk_nor_the_web_stack(
    home: Path, args: list[str]
) -> None:
    watched = (*NEVER_FOR_A_READ, "sqlalchemy")
    assert imported(home, "from toolvet.cli import main; main()", args, watched) == ["sqlalchemy"]


# What a read on SQLite does without: migrating (the database is at the newest schema), the other
# database's dialect, and the findings rules (stored findings are read, none are computed).
NOT_FOR_A_READ_ON_SQLITE = ("alembic", "sqlalchemy.dialects.postgresql", "toolvet.domain.findings.static",
                            "toolvet.domain.findings.shadowing")


@pytest.mark.parametrize("args", [["tool", "list"], ["server", "list"], ["call", "list"]])
def test_a_read_on_sqlite_loads_no_migration_no_postgresql_dialect_and_no_findings_rule(
    home: Path, args: list[str]
) -> None:
    subprocess.run([sys.executable, "-m", "toolvet", "db", "upgrade"], capture_output=True, timeout=60,
                   env=dict(os.environ), check=True)
    found = modules(home, "from toolvet.cli import main; main()", args, ("sqlalchemy", "alembic", "toolvet"))
    # The probe sees what the command does use: SQLite's dialect and the models.
    assert {"sqlalchemy.dialects.sqlite", "toolvet.db.models"} <= set(found)
    assert [name for name in found if name.startswith(NOT_FOR_A_READ_ON_SQLITE)] == []


def test_the_version_is_printed_without_importing_a_command(home: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "toolvet", "--version"], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ), check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("toolvet ")


def test_every_command_in_the_table_loads_and_its_help_line_is_its_own(home: Path) -> None:
    """The root's --help shows the table's lines without importing the commands: each must say what
    the command's own help says first."""
    root = typer.main.get_command(app)
    ctx = root.make_context("toolvet", ["--help"], resilient_parsing=True)
    for name, lazy in COMMANDS.items():
        command = root.get_command(ctx, name)
        assert command is not None, name
        own = (command.help or "").split("\n\n")[0].replace("\n", " ").strip()
        assert own.startswith(lazy.help.rstrip(".")), (name, lazy.help, own)



START = """
import gc, json, sys, weakref
from toolvet.cli import COMMANDS
from toolvet.cli.group import start_process

start_process(COMMANDS["tool"])
frozen, enabled, imported = gc.get_freeze_count(), gc.isenabled(), "toolvet.cli.tools" in sys.modules


class Cycle:
    pass


made_after = Cycle()
made_after.me = made_after
gone = weakref.ref(made_after)
del made_after
gc.collect()
print(json.dumps({"frozen": frozen, "enabled": enabled, "imported": imported, "collected": gone() is None}))
"""


def test_a_process_sets_start_up_aside_from_the_collector_and_collects_what_it_makes_later(home: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ), check=False)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    # The command's module is imported and what start-up made is frozen; the collector runs again for
    # what the command makes, cycles included.
    assert seen["imported"] and seen["enabled"] and seen["collected"]
    assert seen["frozen"] > 10_000
