"""A throwaway PostgreSQL cluster for the test session: initdb into a temporary directory, started with
pg_ctl on a free loopback port, removed afterwards. Runs the server as the ``postgres`` user when the
tests run as root (PostgreSQL refuses to run as root)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def find_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresUnavailable(RuntimeError):
    pass


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Yield a base URL ``postgresql+psycopg://postgres@127.0.0.1:PORT`` of a fresh cluster."""
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise PostgresUnavailable("initdb/pg_ctl not found (apt-get install postgresql)")
    as_user: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="toolvet-pg-"))
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres", "postgres")
    data, port = base / "data", _free_port()

    def run(*cmd: str) -> None:
        proc = subprocess.run([*as_user, *cmd], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise PostgresUnavailable(f"{cmd[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    try:
        run(initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
        run(pg_ctl, "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60", "-o",
            f"-h 127.0.0.1 -p {port} -k {base} -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
            "start")
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
        finally:
            run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(base, ignore_errors=True)
