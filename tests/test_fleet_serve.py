"""Two real ``toolvet serve`` processes on one PostgreSQL database: a call made through one is seen
pending on the other's ``GET /api/v1/events``, approved there, and its decision seen on the first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cryptography.fernet import Fernet

from tests.conftest import new_pg_database
from tests.upstreams import modern_http_server
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

pytestmark = pytest.mark.postgres

BOUND = 30.0  # seconds any step may take


def start(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[str], str]:
    with open(log, "w") as err:  # a file: a pipe could fill and block the server
        proc = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=err)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("toolvet serving on "), log.read_text()
    return proc, line.split()[-1]


def request(url: str, token: str, body: dict[str, Any] | None = None) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode() if body is not None else b"{}"
    req = urllib.request.Request(url, data=data, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=BOUND) as response:
        return response.status, json.load(response)


class Events:
    """One open ``GET /api/v1/events`` stream, read event by event."""

    def __init__(self, base: str, token: str) -> None:
        req = urllib.request.Request(f"{base}/api/v1/events", headers={"Authorization": f"Bearer {token}"})
        self.response = urllib.request.urlopen(req, timeout=BOUND)
        assert self.response.readline() == b": toolvet events\n"  # subscribed before this was sent

    def next(self, kind: str, call_id: str) -> dict[str, Any]:
        """The next event of ``kind`` for ``call_id`` (others are skipped)."""
        for _ in range(100):
            line = self.response.readline().decode()
            if line.startswith("data: "):
                event = json.loads(line.removeprefix("data: "))
                if event["type"] == kind and event["callId"] == call_id:
                    return event
        raise AssertionError(f"no {kind} event for {call_id}")


@pytest.fixture
def fleet(pg_base_url: str, tmp_path: Path) -> Iterator[tuple[Context, dict[str, str]]]:
    url, key = new_pg_database(pg_base_url), Fernet.generate_key().decode()
    ctx = Context.open(Settings(home=tmp_path, database_url=url, secret_key=key))
    env = {**os.environ, "TOOLVET_DATABASE_URL": url, "TOOLVET_SECRET_KEY": key,
           "TOOLVET_DISCOVERY_INTERVAL": "3600"}
    yield ctx, env
    ctx.close()


def test_a_call_pending_on_one_replica_is_approved_on_the_other_and_both_see_it(fleet, tmp_path):
    ctx, env = fleet
    admin = Principal(actor="test:admin", role=Role.ADMIN)
    ops = tokens.create_token(ctx, admin, TokenCreate(role="admin", name="ops")).token
    alice = tokens.create_token(ctx, admin, TokenCreate(role="consumer", name="alice", user="alice")).token
    procs: list[subprocess.Popen[str]] = []
    with modern_http_server() as up:
        servers.create_server(ctx, admin, {"name": "up", "url": up.url})
        anyio.run(lambda: discovery.discover(ctx, admin, ["up"]))
        try:
            bases = []
            for index in range(2):
                proc, base = start({**env, "TOOLVET_HOME": str(tmp_path / f"r{index}")}, tmp_path / f"r{index}.log")
                procs.append(proc)
                bases.append(base)
            on_a, on_b = Events(bases[0], ops), Events(bases[1], ops)
            status, pending = request(f"{bases[0]}/api/v1/calls", alice,
                                      {"server_type": "up", "tool_name": "tool_0", "arguments": {"a": 1, "b": 2}})
            assert status == 202 and pending["status"] == "pending"
            assert on_b.next("tool-call-pending", pending["id"])["user"] == "alice"
            status, approved = request(f"{bases[1]}/api/v1/calls/{pending['id']}/approve", ops)
            assert status == 200 and approved["status"] == "done"
            assert on_a.next("tool-call-decided", pending["id"])["status"] == "done"
            for stream in (on_a, on_b):
                stream.response.close()
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
            for proc in procs:
                proc.communicate(timeout=BOUND)
    assert [proc.returncode for proc in procs] == [0, 0]
