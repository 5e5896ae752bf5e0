"""Two real ``toolvet serve`` processes on one PostgreSQL database never list the same server at the
same time, and both do share the work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.fernet import Fernet
from sqlalchemy import func, select
from starlette.types import Message, Receive, Scope, Send

from tests.conftest import new_pg_database
from tests.upstreams import raw_pages_app, serve
from toolvet.db.models import DiscoveryRun
from toolvet.services import servers
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

pytestmark = pytest.mark.postgres

SERVERS = 5
HOLD = 0.2  # seconds each listing stays open: a slow upstream, so overlapping passes would show
LISTING = {None: {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}}


class InFlight:
    """Per request path: how many ``tools/list`` calls are open now, and the most ever open at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.total = 0

    def app(self) -> Any:
        inner = raw_pages_app(LISTING)
        tracker = self

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["method"] != "POST":
                await inner(scope, receive, send)
                return
            messages: list[Message] = []
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request" or not message.get("more_body", False):
                    break
            body = b"".join(m.get("body", b"") for m in messages)
            replay = iter(messages)

            async def replayed() -> Message:
                return next(replay, None) or await receive()

            try:
                method = json.loads(body).get("method")
            except ValueError:
                method = None
            if method != "tools/list":
                await inner(scope, replayed, send)
                return
            path = scope["path"]
            with tracker.lock:
                tracker.now[path] = tracker.now.get(path, 0) + 1
                tracker.most[path] = max(tracker.most.get(path, 0), tracker.now[path])
                tracker.total += 1
            try:
                await anyio.sleep(HOLD)  # the slow upstream, not test synchronisation
                await inner(scope, replayed, send)
            finally:
                with tracker.lock:
                    tracker.now[path] -= 1

        return app


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Started ``toolvet serve`` processes; each is terminated (then killed) whatever the test did."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
    for proc in started:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def progress_of(ctx: Context) -> tuple[int, int]:
    """(ok runs so far, distinct processes that ran them)."""
    with ctx.db.transaction() as session:
        ok = select(DiscoveryRun.runner).where(DiscoveryRun.status == "ok").subquery()
        counts = select(func.count(), func.count(func.distinct(ok.c.runner))).select_from(ok)
        row = session.execute(counts).one()
    return int(row[0]), int(row[1])


def log_tail(directory: Path, index: int) -> str:
    return (directory / f"serve{index}.log").read_text(errors="replace")[-2000:]


def test_two_serve_processes_never_list_one_server_at_once(
    pg_base_url: str, tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    database_url = new_pg_database(pg_base_url)
    key = Fernet.generate_key().decode()
    ctx = Context.open(Settings(home=tmp_path, database_url=database_url, secret_key=key))
    admin = Principal(actor="test:admin", role=Role.ADMIN)
    tracker = InFlight()
    try:
        with serve(tracker.app(), "/s0") as upstream:
            base = upstream.url.rsplit("/", 1)[0]
            for index in range(SERVERS):
                servers.create_server(ctx, admin, {"name": f"s{index}", "url": f"{base}/s{index}"})
            env = {**os.environ, "TOOLVET_DATABASE_URL": database_url, "TOOLVET_HOME": str(tmp_path),
                   "TOOLVET_SECRET_KEY": key, "TOOLVET_DISCOVERY_INTERVAL": "0.5"}
            for index in range(2):
                with open(tmp_path / f"serve{index}.log", "wb") as log:  # a file: a pipe could fill and block
                    processes.append(subprocess.Popen(
                        [sys.executable, "-m", "toolvet", "serve", "--port", "0"], env=env,
                        stdout=log, stderr=subprocess.STDOUT))
            deadline = time.monotonic() + 90
            while not ((progress := progress_of(ctx))[0] >= 20 and progress[1] == 2):
                dead = [i for i, p in enumerate(processes) if p.poll() is not None]
                assert not dead, f"toolvet serve exited: {log_tail(tmp_path, dead[0])}"
                assert time.monotonic() < deadline, f"(ok runs, runners) only {progress} within 90 s"
                time.sleep(0.2)  # polling the database, the only thing both processes share
            for proc in processes:
                proc.send_signal(signal.SIGINT)
            for proc in processes:
                proc.wait(timeout=20)
        with ctx.db.transaction() as session:
            ok_runners = select(DiscoveryRun.runner).where(DiscoveryRun.status == "ok")
            runners = set(session.scalars(ok_runners).all())
            per_server = dict(session.execute(
                select(DiscoveryRun.server_name, func.count()).group_by(DiscoveryRun.server_name)).all())
    finally:
        ctx.close()
    assert tracker.total >= 20
    assert set(tracker.most) == {f"/s{index}" for index in range(SERVERS)}
    assert max(tracker.most.values()) == 1, tracker.most
    assert len(runners) == 2, runners  # both processes ran passes, each under its own lease holder id
    assert set(per_server) == {f"s{index}" for index in range(SERVERS)}
