"""How every command runs: fresh settings, an opened Context, the local admin, and errors as one line.

The CLI acts as a local admin on the database it is pointed at. No stack trace
reaches a user, so every ``ToolvetError`` (and anything unexpected, unless ``TOOLVET_DEBUG=1``)
becomes one ``error: ...`` line on stderr and exit code 1 (``toolvet.cli.group``).
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from pydantic import ValidationError

from toolvet.cli.group import fail
from toolvet.errors import InvalidInput
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings


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
