"""SIGTERM stops a real ``toolvet serve`` as Ctrl-C does: the request in flight finishes, a live event
stream ends (it does not hold the grace period), the discovery writer process and multiprocessing's
resource tracker end, the leases are given back, exit code 0."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import anyio.to_thread
import psutil
from cryptography.fernet import Fernet
from sqlalchemy import func, select
from starlette.types import Message, Receive, Scope, Send

from tests.upstreams import raw_pages_app, serve
from toolvet.db.models import Lease
from toolvet.schemas.tools import TokenCreate
from toolvet.services import servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

LISTING = {None: {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}}
BOUND = 60.0  # seconds any step may take before the test fails


class Gate:
    """An upstream whose ``tools/list`` answers wait until the test opens the gate."""

    def __init__(self) -> None:
        self.waiting = 0
        self.changed = threading.Condition()
        self.open = threading.Event()

    def wait_for(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.waiting >= count, timeout=BOUND), self.waiting

    def app(self) -> Any:
        inner = raw_pages_app(LISTING)

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            messages: list[Message] = []
            if scope["type"] == "http" and scope["method"] == "POST":
                while not messages or messages[-1].get("more_body", False):
                    messages.append(await receive())
                body = b"".join(m.get("body", b"") for m in messages)
                if b'"tools/list"' in body:
                    with self.changed:
                        self.waiting += 1
                        self.changed.notify_all()
                    await anyio.to_thread.run_sync(self.open.wait, BOUND)
            replay = iter(messages)

            async def replayed() -> Message:
                return next(replay, None) or await receive()

            await inner(scope, replayed, send)

        return app


def test_sigterm_lets_the_request_in_flight_finish_and_leaves_nothing_behind(tmp_path: Path) -> None:
    key = Fernet.generate_key().decode()
    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/toolvet.sqlite3", secret_key=key)
    ctx = Context.open(settings)
    admin = Principal(actor="test:admin", role=Role.ADMIN)
    token = tokens.create_token(ctx, admin, TokenCreate(role="admin", name="ops")).token
    gate = Gate()
    env = {**os.environ, "TOOLVET_HOME": str(tmp_path), "TOOLVET_DATABASE_URL": settings.database_url or "",
           "TOOLVET_SECRET_KEY": key, "TOOLVET_DISCOVERY_WRITER_MIN_SERVERS": "1",
           "TOOLVET_SHUTDOWN_GRACE": str(BOUND)}
    outcome: dict[str, Any] = {}
    with serve(gate.app(), "/mcp") as upstream:
        servers.create_server(ctx, admin, {"name": "up", "url": upstream.url})
        proc = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            gate.wait_for(1)  # the scheduler's sweep (with its writer process) is listing the server

            def discover_now() -> None:
                request = urllib.request.Request(f"{url}/api/v1/servers/up/discover", method="POST",
                                                 headers={"Authorization": f"Bearer {token}"})
                with urllib.request.urlopen(request, timeout=BOUND) as response:
                    outcome["status"], outcome["run"] = response.status, json.load(response)

            events = urllib.request.urlopen(urllib.request.Request(  # an operator's live list, open
                f"{url}/api/v1/events", headers={"Authorization": f"Bearer {token}"}), timeout=BOUND)
            assert events.readline() == b": toolvet events\n"
            caller = threading.Thread(target=discover_now)
            caller.start()
            gate.wait_for(2)  # ... and so is the operator's request, in flight
            children = psutil.Process(proc.pid).children(recursive=True)
            assert children  # the discovery writer process (and the resource tracker)
            proc.send_signal(signal.SIGTERM)
            assert events.read().strip() == b""  # the stream ends (no event): the client reconnects elsewhere
            events.close()
            gate.open.set()
            caller.join(BOUND)
            _, err = proc.communicate(timeout=BOUND)
        finally:
            gate.open.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=BOUND)
    assert proc.returncode == 0, err
    assert "timeout graceful shutdown exceeded" not in err  # nothing had to be cancelled
    assert outcome["status"] == 200 and outcome["run"]["status"] == "ok"
    _, alive = psutil.wait_procs(children, timeout=BOUND)
    assert alive == []
    with ctx.db.transaction() as session:
        assert session.scalar(select(func.count()).select_from(Lease)) == 0
    ctx.close()
