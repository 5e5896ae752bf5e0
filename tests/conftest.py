"""Shared fixtures: settings in a temporary home, a migrated database on SQLite or on a throwaway
PostgreSQL server, a Context and principals of each role."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import psycopg
import pytest
from cryptography.fernet import Fernet

from tests.pg import PostgresUnavailable, throwaway_cluster
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

IN_CI = os.environ.get("CI", "").lower() == "true"
_db_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_base_url() -> Iterator[str]:
    """One throwaway PostgreSQL cluster for the session. Missing PostgreSQL skips locally, fails in CI."""
    try:
        with throwaway_cluster() as url:
            yield url
    except PostgresUnavailable as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL is required under CI=true: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")


def new_pg_database(base_url: str) -> str:
    name = f"toolvet_{os.getpid()}_{next(_db_counter)}"
    with psycopg.connect(base_url.replace("postgresql+psycopg", "postgresql") + "/postgres",
                         autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base_url}/{name}"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> str:
    """A fresh, empty database on each backend (tests using it run twice)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/toolvet.sqlite3"
    return new_pg_database(request.getfixturevalue("pg_base_url"))


@pytest.fixture
def settings(tmp_path: os.PathLike[str], database_url: str) -> Settings:
    return Settings(home=tmp_path, database_url=database_url, secret_key=Fernet.generate_key().decode())


@pytest.fixture
def ctx(settings: Settings) -> Iterator[Context]:
    context = Context.open(settings)
    yield context
    context.close()


@pytest.fixture
def admin() -> Principal:
    return Principal(actor="test:admin", role=Role.ADMIN)


@pytest.fixture
def operator() -> Principal:
    return Principal(actor="test:operator", role=Role.OPERATOR)


@pytest.fixture
def reader() -> Principal:
    return Principal(actor="test:reader", role=Role.READER)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
