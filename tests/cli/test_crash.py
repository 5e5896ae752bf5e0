"""Nothing answered is lost: ``toolvet serve`` killed with SIGKILL right after answering N calls has
kept every one of their call rows and audit entries, in the database or in its call journal, which
the next start moves in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy import func, select

from tests.upstreams import modern_http_server
from toolvet.db.models import AuditEntry, PendingCall
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.call_journal import CallJournal
from toolvet.services.context import Context

ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
CALLS = 40


def _served(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()  # printed once the server accepts connections
    assert line.startswith("toolvet serving on http://127.0.0.1:"), (line, proc.stderr and proc.stderr.read())
    return line.split()[-1]


async def _calls(url: str, token: str) -> list[bool]:
    answered: list[bool] = []
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="2026-07-28", cache=None) as client,
    ):

        async def one(n: int) -> None:
            result = await client.call_tool("demo_tool_0", {"a": n, "b": 1})
            answered.append(not result.is_error and result.structured_content == {"result": n + 1})

        async with anyio.create_task_group() as tg:
            for n in range(CALLS):
                tg.start_soon(one, n)
    return answered


def test_calls_answered_before_a_kill_9_are_all_recorded(home: Path) -> None:
    with modern_http_server() as up:
        ctx = Context.open()
        try:
            servers.create_server(ctx, ADMIN, {"name": "demo", "url": up.url})
            runs = anyio.run(discovery.discover, ctx, ADMIN, ["demo"])
            assert runs[0].status == "ok", runs[0].error
            preferences.set_permission_mode(ctx, ADMIN, "alice", "allow")
            token = tokens.create_token(ctx, ADMIN, TokenCreate(role="consumer", user="alice", name="a")).token
        finally:
            ctx.close()
        proc = subprocess.Popen([sys.executable, "-m", "toolvet", "serve", "--port", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        try:
            answered = anyio.run(_calls, _served(proc), token)
        finally:
            proc.kill()  # SIGKILL, the moment the last answer arrived: no shutdown runs
            proc.wait(timeout=30)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
    assert answered == [True] * CALLS
    ctx = Context.open(migrate=False)
    try:
        # What toolvet does when it starts again: it moves in what the killed process journalled.
        CallJournal(ctx).recover()
        with ctx.db.transaction() as session:
            rows = session.scalar(select(func.count()).select_from(PendingCall)
                                  .where(PendingCall.tool_name == "tool_0", PendingCall.status == "done"))
            entries = session.scalar(select(func.count()).select_from(AuditEntry)
                                     .where(AuditEntry.action == "call.run"))
    finally:
        ctx.close()
    assert (rows, entries) == (CALLS, CALLS)

