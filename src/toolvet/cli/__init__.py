"""The ``toolvet`` command line: a Typer app whose commands each parse input, call one service
function and render the result (STYLE rule 2). The CLI acts as a local admin (SPEC §7).

Each module named in ``COMMAND_MODULES`` exposes ``register(app: typer.Typer)``; adding a command
group (``discover``, ``demo``, ``check``) is one line there. ``tool diff`` is added to
``toolvet.cli.tools.tool_app`` from its own module's ``register``.
"""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from toolvet import __version__
from toolvet.cli.runtime import ToolvetGroup, debugging

COMMAND_MODULES: list[str] = [
    "db",
    "serve",
    "servers",
    "tools",
    "tool_sets",
    "review",
    "tokens",
    "audit",
    "discover",
    "demo",
    "check",
    "webhooks",
]

app = typer.Typer(
    name="toolvet",
    cls=ToolvetGroup,
    help="A registry and gateway for MCP tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"toolvet {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """toolvet works on the database named by TOOLVET_DATABASE_URL (default: SQLite in TOOLVET_HOME)."""


for _module in COMMAND_MODULES:
    importlib.import_module(f"toolvet.cli.{_module}").register(app)


def main() -> None:
    """Run the CLI. Errors inside commands are already one line (see ``runtime``); this catches what
    escapes before a command runs."""
    try:
        app(prog_name="toolvet")
    except Exception as exc:
        if debugging():
            raise
        typer.echo(f"error: internal error: {type(exc).__name__}: {exc}", err=True)
        raise SystemExit(1) from None
