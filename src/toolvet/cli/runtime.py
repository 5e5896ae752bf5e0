"""How every command runs: fresh settings, an opened Context, the local admin, and errors as one line.

SPEC §7: the CLI acts as a local admin on the database it is pointed at. SPEC §8: no stack trace
reaches a user, so every ``ToolvetError`` (and anything unexpected, unless ``TOOLVET_DEBUG=1``)
becomes one ``error: ...`` line on stderr and exit code 1. Usage errors stay Click's (exit 2).
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from pydantic import ValidationError
from typer._click import Context as ClickContext  # typer vendors click; this is its Context
from typer.core import TyperGroup

from toolvet.errors import InvalidInput, ToolvetError
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

DEBUG_ENV = "TOOLVET_DEBUG"


def debugging() -> bool:
    """True when ``TOOLVET_DEBUG=1``: unexpected errors keep their traceback."""
    return os.environ.get(DEBUG_ENV, "") == "1"


def fail(message: str) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr and exit 1."""
    typer.echo("error: " + " ".join(message.splitlines()), err=True)
    raise typer.Exit(1)


def load_settings() -> Settings:
    """Settings read from the environment now (tests change it between invocations, so no cache)."""
    try:
        return Settings()
    except ValidationError as exc:
        err = exc.errors()[0]
        field = "TOOLVET_" + "_".join(str(p) for p in err["loc"]).upper()
        raise InvalidInput(str(err["msg"]), field) from None


def local_admin() -> Principal:
    """The principal the CLI acts as: an admin named after the local user."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return Principal(actor=f"cli:{user}", role=Role.ADMIN)


@contextmanager
def open_context() -> Iterator[Context]:
    """A Context on the configured database, migrated to the newest schema, closed afterwards."""
    ctx = Context.open(load_settings())
    try:
        yield ctx
    finally:
        ctx.close()


@contextmanager
def local() -> Iterator[tuple[Context, Principal]]:
    """The Context and the local admin, for one command."""
    with open_context() as ctx:
        yield ctx, local_admin()


def confirm_or_refuse(question: str, yes: bool) -> None:
    """Go on when ``--yes`` was given or a person on a terminal agrees; refuse otherwise."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise InvalidInput("no terminal to confirm on; pass --yes to go ahead", "--yes")
    if not typer.confirm(question, default=False):
        fail("aborted, nothing changed")


class ToolvetGroup(TyperGroup):
    """The root command group; it turns errors raised by any subcommand into one line and exit 1."""

    def invoke(self, ctx: ClickContext) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.TyperException, typer.Exit, typer.Abort):
            # Usage errors (exit 2), --help and deliberate exits are Typer's to report.
            raise
        except ToolvetError as exc:
            fail(exc.message)
        except Exception as exc:
            if debugging():
                raise
            fail(f"internal error: {type(exc).__name__}: {exc}")
