"""The files toolvet creates are its owner's alone: home 0700, the SQLite file, its WAL and SHM, and the
key file 0600, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    """A umask that would leave every new file world-readable and writable."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("permissive_umask")
def test_a_fresh_home_its_database_wal_shm_and_key_are_private(tmp_path: Path) -> None:
    home = tmp_path / "new" / "home"
    ctx = Context.open(Settings(home=home, database_url=None, secret_key=None))
    try:
        tokens.create_token(ctx, Principal(actor="test", role=Role.ADMIN), TokenCreate(role="reader"))
        database = home / "toolvet.sqlite3"
        wal, shm = Path(f"{database}-wal"), Path(f"{database}-shm")
        assert wal.exists() and shm.exists()  # written in WAL mode, connection still open
        assert mode(home) == 0o700
        for path in (database, wal, shm, home / "secret.key"):
            assert mode(path) == 0o600, path.name
    finally:
        ctx.close()


@pytest.mark.usefixtures("permissive_umask")
def test_a_database_file_outside_home_is_private_too(tmp_path: Path) -> None:
    database = tmp_path / "data" / "registry.db"
    ctx = Context.open(Settings(home=tmp_path / "home", database_url=f"sqlite:///{database}", secret_key=None))
    try:
        assert mode(database) == 0o600 and mode(database.parent) == 0o700
    finally:
        ctx.close()


def test_an_existing_database_file_keeps_the_mode_its_owner_gave_it(tmp_path: Path) -> None:
    database = tmp_path / "shared.db"
    database.touch()
    database.chmod(0o640)
    ctx = Context.open(Settings(home=tmp_path, database_url=f"sqlite:///{database}", secret_key=None))
    try:
        assert mode(database) == 0o640
    finally:
        ctx.close()
