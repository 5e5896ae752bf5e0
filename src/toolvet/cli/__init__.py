"""The ``toolvet`` command line: a Typer app whose commands each parse input, call one service
function and render the result. The CLI acts as a local admin (docs/cli.md).

``COMMANDS`` is the root's table: each entry names the module attribute holding a command group (a
``command_group``) or a command function, and the line ``toolvet --help`` shows for it. A command's
module is imported only when that command runs, so ``toolvet --version`` and ``toolvet --help`` import
neither the database layer nor the web stack nor the MCP SDK (``tests/cli/test_startup.py`` holds
that). Adding a command is one entry here; ``tool diff`` is added to ``toolvet.cli.tools.tool_app``
in its own module.
"""

from __future__ import annotations

import sys
from typing import Annotated, ClassVar

import typer

from toolvet import __version__
from toolvet.cli.group import LazyCommand, ToolvetGroup, ToolvetTyper, debugging, start_process

#: The root's commands. Each help line begins the command's own help (its docstring or group help).
COMMANDS: dict[str, LazyCommand] = {
    "db": LazyCommand("toolvet.cli.db:db_app", "The database toolvet keeps its registry in."),
    "serve": LazyCommand("toolvet.cli.serve:serve", "Serve toolvet over HTTP until interrupted."),
    "server": LazyCommand("toolvet.cli.servers:server_app",
                          "Register, inspect, change and remove upstream MCP servers."),
    "tool": LazyCommand("toolvet.cli.tools:tool_app", "List, inspect and decide about tools."),
    "toolset": LazyCommand("toolvet.cli.tool_sets:toolset_app",
                           "Define, inspect and remove tool sets: allow-lists of tools."),
    "review": LazyCommand("toolvet.cli.review:review", "Mark the tool's current definition as reviewed."),
    "call": LazyCommand("toolvet.cli.calls:call_app", "List, show, approve and deny calls."),
    "token": LazyCommand("toolvet.cli.tokens:token_app", "Create, list and revoke bearer tokens."),
    "audit": LazyCommand("toolvet.cli.audit:audit", "Show who did what to which object, and when."),
    "discover": LazyCommand("toolvet.cli.discover:discover", "List servers' tools now and reconcile them."),
    "demo": LazyCommand("toolvet.cli.demo:demo",
                        "Start the demo MCP server, register and discover it, then serve toolvet."),
    "check": LazyCommand("toolvet.cli.check:check",
                         "Show whether the tool runs without a dialog, is asked about or is refused."),
    "prompt": LazyCommand("toolvet.cli.entries:prompt_app", "List, inspect and decide about servers' prompts."),
    "resource": LazyCommand("toolvet.cli.entries:resource_app",
                            "List, inspect and decide about servers' resources and resource templates."),
    "import": LazyCommand("toolvet.cli.config_import:import_",
                          "Register the servers of an MCP client's config file"),
    "apply": LazyCommand("toolvet.cli.config_file:apply", "Make the registry match a file"),
    "export": LazyCommand("toolvet.cli.config_file:export", "Write the registry in the format toolvet apply reads"),
    "webhook": LazyCommand("toolvet.cli.webhooks:webhook_app",
                           "Alert webhooks: add, list, remove, and what was delivered."),
}


class RootGroup(ToolvetGroup):
    lazy: ClassVar[dict[str, LazyCommand]] = COMMANDS


app = ToolvetTyper(
    name="toolvet",
    cls=RootGroup,
    help="A registry and gateway for MCP tools.",
    no_args_is_help=True,
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


def main() -> None:
    """Run the CLI as a process. Errors inside commands are already one line (see ``group``); this
    catches what escapes before a command runs."""
    try:
        start_process(COMMANDS.get(sys.argv[1]) if len(sys.argv) > 1 else None)
        app(prog_name="toolvet")
    except Exception as exc:
        if debugging():
            raise
        typer.echo(f"error: internal error: {type(exc).__name__}: {exc}", err=True)
        raise SystemExit(1) from None
