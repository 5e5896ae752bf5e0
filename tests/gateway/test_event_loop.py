"""Database work never runs on the event loop that serves ``/mcp``: a held SQLite write lock stalls only
the work that waits for it, never another client's MCP session."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import pytest

from tests.gateway.conftest import ADMIN, Toolvet
from tests.upstreams import modern_http_server
from toolvet.services import audit, calls, preferences

pytestmark = pytest.mark.anyio


async def test_mcp_answers_while_another_process_holds_the_sqlite_write_lock(toolvet: Toolvet):
    with modern_http_server() as up:
        await toolvet.register("demo", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        database = Path(toolvet.ctx.settings.resolved_database_url().removeprefix("sqlite:///"))
        with toolvet.serve():
            holder = sqlite3.connect(database, timeout=0, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process's write transaction: the lock is taken
            answered_under_lock = False
            try:
                async with anyio.create_task_group() as tg, toolvet.http(toolvet.ops) as rest:
                    # A discovery of the same server now waits for the lock (it writes its run): the work
                    # that needs the database waits, in a worker thread, and nothing else does.
                    tg.start_soon(rest.post, f"{toolvet.base}/api/v1/servers/demo/discover")
                    await anyio.sleep(0.2)
                    with anyio.fail_after(5):
                        async with toolvet.client(toolvet.alice, mode="legacy") as client:
                            listed = [t.name for t in (await client.list_tools()).tools]
                            result = await client.call_tool("demo_tool_0", {"a": 20, "b": 22})
                    answered_under_lock = holder.in_transaction
                    holder.execute("ROLLBACK")
                    tg.cancel_scope.cancel()
                # The call's row and audit entry waited in the journal, and reach the database now.
                with anyio.fail_after(10):
                    while not (done := calls.list_calls(toolvet.ctx, ADMIN, status="done")).items:
                        await anyio.sleep(0.05)
            finally:
                if holder.in_transaction:
                    holder.execute("ROLLBACK")
                holder.close()
    assert answered_under_lock
    assert "demo_tool_0" in listed
    assert not result.is_error and result.structured_content == {"result": 42}
    assert [(c.tool_name, c.user) for c in done.items] == [("tool_0", "alice")]
    assert len(audit.list_entries(toolvet.ctx, ADMIN, action="call.run").items) == 1
