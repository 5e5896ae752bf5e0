"""The command classes every ``toolvet`` command is built from: commands imported only when run,
usage errors as one line, and an option given twice (``--writable --read-only``) refused by name.

This module imports nothing but Typer and the error tree, so ``toolvet --version`` and ``toolvet
--help`` start without the database layer, the web stack or the MCP SDK: each command group is a
:class:`LazyCommand` in the root group's table, imported the first time it is run (or its own
``--help`` is asked for). The root ``--help`` lists the groups from the table's one-line help.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from toolvet.errors import ToolvetError

DEBUG_ENV = "TOOLVET_DEBUG"


def debugging() -> bool:
    """True when ``TOOLVET_DEBUG=1``: unexpected errors keep their traceback."""
    return os.environ.get(DEBUG_ENV, "") == "1"


def fail(message: str) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and exit 1."""
    typer.echo("error: " + " ".join(message.splitlines()), err=True)
    raise typer.Exit(1)


class UsageProblem(typer.TyperException):
    """A command line the parser accepts but toolvet refuses (options that contradict); exit 2."""

    exit_code = 2


def exclusive(*given: tuple[str, bool]) -> None:
    """Refuse options that each mean something the others undo (``--all`` with ``--status``),
    naming them: ``given`` is each option's name and whether it was given."""
    named = [name for name, present in given if present]
    if len(named) > 1:
        raise UsageProblem(f"{' and '.join(named)} contradict each other: give one of them")


@dataclass(frozen=True)
class LazyCommand:
    """A command of the root group: ``target`` is ``module:attribute`` (a Typer group or a command
    function), imported when the command runs; ``help`` is its line in ``toolvet --help``."""

    target: str
    help: str

    def import_module(self) -> ModuleType:
        return importlib.import_module(self.target.partition(":")[0])

    def load(self, name: str) -> Any:
        found = getattr(self.import_module(), self.target.partition(":")[2])
        if isinstance(found, typer.Typer):
            return typer.main.get_group(found)  # a group even with one command (db upgrade)
        single = ToolvetTyper()
        single.command(name)(found)
        return typer.main.get_command(single)


def start_process(command: LazyCommand | None) -> None:
    """Import what a ``toolvet`` process runs (``command``'s module, when a command is named) and
    set it aside from the cyclic garbage collector (``gc.freeze``); for the process entry point only.

    Start-up makes over a hundred thousand objects (classes, functions, SQLAlchemy's mappers,
    pydantic's validators) that all live until the process ends, so the collector's passes over them
    find nothing. Paused while the command's module imports and frozen after, they are never walked:
    not during the import, not while the command runs, and not in the collection the interpreter runs
    when it exits, which took longer than a ``tool list``'s query and table together (docs/benchmarks.md).
    Objects made afterwards are collected as before."""
    gc.disable()
    try:
        if command is not None:
            command.import_module()
    finally:
        gc.freeze()
        gc.enable()


def _used(param: Any, args: Sequence[str]) -> list[str]:
    """Which of an option's spellings appear on the command line, in order, each once."""
    names = [*param.opts, *param.secondary_opts]
    seen: list[str] = []
    for arg in args:
        if arg == "--":
            break
        for name in names:
            if (arg == name or arg.startswith(name + "=")) and name not in seen:
                seen.append(name)
    return seen or list(param.opts)


def refuse_repeated_options(command: Any, ctx: Any, args: Sequence[str]) -> None:
    """Refuse an option given more than once where only one value is kept (the parser would let the
    last one win silently): ``--writable --read-only`` names both, ``--approval user --approval
    operator`` names the option."""
    _opts, _rest, order = command.make_parser(ctx).parse_args(args=list(args))
    counts: dict[int, int] = {}
    for param in order:
        if param.param_type_name == "option" and not param.multiple and not getattr(param, "count", False):
            counts[id(param)] = counts.get(id(param), 0) + 1
    for param in order:
        if counts.get(id(param), 0) > 1:
            names = _used(param, args)
            exclusive(*((name, True) for name in names))
            raise UsageProblem(f"{names[0]} is given {counts[id(param)]} times: give it once")


class ToolvetCommand(TyperCommand):
    """A command that refuses contradicting options before it runs."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            refuse_repeated_options(self, ctx, args)
        return super().parse_args(ctx, args)


class ToolvetGroup(TyperGroup):
    """A command group. The root one (a subclass naming ``lazy``) imports its commands on demand, turns
    errors raised by any subcommand into one line and exit 1, and prints usage errors as one line."""

    lazy: ClassVar[dict[str, LazyCommand]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *(name for name in self.lazy if name not in self.commands)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in self.lazy:
            found = self.commands[cmd_name] = self.lazy[cmd_name].load(cmd_name)
        return found

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The root's list comes from the table, so ``toolvet --help`` imports no command module.
        rows = [(name, self.lazy[name].help if name in self.lazy else self.commands[name].get_short_help_str())
                for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.TyperException, typer.Exit, typer.Abort):
            raise  # usage errors, --help and deliberate exits: main() reports them
        except ToolvetError as exc:
            fail(exc.message)
        except Exception as exc:
            if debugging():
                raise
            fail(f"internal error: {type(exc).__name__}: {exc}")

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:
            show_usage_error(exc)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("error: aborted, nothing changed", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def show_usage_error(exc: typer.TyperException) -> None:
    """A usage error as one line naming the command's --help; ``toolvet GROUP`` alone prints the
    group's help (Typer raises that as an error too, told apart here by name as Typer itself does)."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        typer.echo(exc.format_message(), err=True)
        return
    # Typer checks choices with pydantic, whose messages begin "Value error, ": the option says enough.
    message = " ".join(exc.format_message().split()).replace("Value error, ", "")
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    typer.echo(f"error: {message}{hint}", err=True)


class ToolvetTyper(typer.Typer):
    """A Typer app whose commands are :class:`ToolvetCommand`, its groups :class:`ToolvetGroup`, with
    plain (not Rich) help and errors."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("cls", ToolvetGroup)
        kwargs.setdefault("rich_markup_mode", None)
        kwargs.setdefault("add_completion", False)
        kwargs.setdefault("pretty_exceptions_enable", False)
        super().__init__(**kwargs)

    def command(self, name: str | None = None, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
        kwargs.setdefault("cls", ToolvetCommand)
        return super().command(name, *args, **kwargs)


def command_group(help: str) -> ToolvetTyper:
    """A command group (``toolvet tool …``): plain help, shown when it is run without a command."""
    return ToolvetTyper(help=help, no_args_is_help=True)
