"""What an upstream does while a call runs reaches the calling client through ``/mcp``, over stdio.

The upstream is ``tests/servers/relay_server.py``, a real child process: pooled sessions, progress,
logging, elicitation, cancellation and restarts are all exercised across a process boundary.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.servers import relay_server
from tests.upstreams import handshake_only_http_server, modern_http_server
from toolvet.schemas.tools import TokenCreate
from toolvet.services import audit, calls, discovery, preferences, servers, tokens

pytestmark = pytest.mark.anyio

RELAY = Path(__file__).parents[1] / "servers" / "relay_server.py"
ERAS = ["2026-07-28", "legacy"]


async def _register_relay(toolvet: Toolvet, name: str = "relay") -> None:
    servers.create_server(toolvet.ctx, ADMIN, {"name": name, "command": sys.executable, "args": [str(RELAY)]})
    with anyio.fail_after(BOUND):
        runs = await discovery.discover(toolvet.ctx, ADMIN, [name])
    assert runs[0].status == "ok", runs[0].error
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")


async def relay_upstream(toolvet: Toolvet, stack: contextlib.ExitStack, upstream: str) -> None:
    """The relay server registered as ``relay``: over stdio ("stdio..."), else over streamable HTTP
    speaking only the handshake (served until ``stack`` closes)."""
    if upstream.startswith("stdio"):
        await _register_relay(toolvet)
        return
    up = stack.enter_context(handshake_only_http_server(relay_server.build()))
    await toolvet.register("relay", up.url)
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


@pytest.mark.parametrize("mode", ERAS)
async def test_a_stdio_upstream_serves_calls_through_mcp_on_one_reused_process(toolvet: Toolvet, mode):
    await _register_relay(toolvet)
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode=mode) as client:
            first = await client.call_tool("relay_whoami", {})
            second = await client.call_tool("relay_whoami", {})
    assert not first.is_error, first
    assert _text(first) == _text(second) and _text(first).isdigit()


async def test_a_stdio_upstream_that_died_is_started_again_for_the_next_call(toolvet: Toolvet):
    await _register_relay(toolvet)
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice) as client:
            pid = int(_text(await client.call_tool("relay_whoami", {})))
            os.kill(pid, signal.SIGKILL)
            after: types.CallToolResult | None = None
            for _ in range(50):  # the call that meets the dead pipe fails; the next starts a new process
                after = await client.call_tool("relay_whoami", {})
                if not after.is_error:
                    break
    assert after is not None and not after.is_error, after
    assert int(_text(after)) != pid


async def test_each_user_gets_an_upstream_session_of_their_own(toolvet: Toolvet):
    await _register_relay(toolvet)
    preferences.set_permission_mode(toolvet.ctx, ADMIN, "bob", "allow")
    bob = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="consumer", user="bob", name="bob")).token
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice) as a, toolvet.client(bob) as b:
            alice_pid = _text(await a.call_tool("relay_whoami", {}))
            bob_pid = _text(await b.call_tool("relay_whoami", {}))
            alice_again = _text(await a.call_tool("relay_whoami", {}))
    assert alice_pid == alice_again and alice_pid != bob_pid


@pytest.mark.parametrize("mode", ERAS)
async def test_upstream_progress_reaches_the_calling_client(toolvet: Toolvet, mode):
    await _register_relay(toolvet)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode=mode) as client:
            result = await client.call_tool("relay_steps", {"count": 3}, progress_callback=on_progress)
    assert _text(result) == "done"
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]


@pytest.mark.parametrize(("level", "expected"), [(None, [("info", "finished 1 steps")]), ("error", [])])
async def test_upstream_log_messages_reach_a_handshake_era_client_at_the_level_its_connection_set(
    toolvet: Toolvet, level, expected
):
    await _register_relay(toolvet)
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode="legacy", logging_callback=on_log) as client:
            if level is not None:  # held for the connection's later requests
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await client.set_logging_level(level)
            await client.call_tool("relay_steps", {"count": 1})
    assert [(entry.level, entry.data) for entry in logged] == expected


@pytest.mark.parametrize("upstream", ["stdio, 2026-07-28", "http, handshake era"])
@pytest.mark.parametrize("mode", ERAS)
async def test_an_upstream_elicitation_is_asked_of_the_calling_client(toolvet: Toolvet, mode, upstream):
    """Every pairing of eras: a modern upstream asks with an InputRequiredResult (relayed to a modern
    client, answered by asking a handshake-era one); a handshake-era upstream asks mid-call (relayed
    to a handshake-era client, or asked of a modern one with an InputRequiredResult while the upstream
    call waits)."""
    asked: list[str] = []

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "blue"})

    with contextlib.ExitStack() as stack:
        await relay_upstream(toolvet, stack, upstream)
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice, mode=mode, elicitation_callback=on_elicit) as client:
                result = await client.call_tool("relay_ask", {"question": "Which colour?"})
    assert asked == ["Which colour?"]
    assert _text(result) == "the user said blue"


async def test_an_elicitation_for_a_client_that_cannot_answer_is_refused_with_the_reason(toolvet: Toolvet):
    await _register_relay(toolvet)
    with toolvet.serve(), anyio.fail_after(BOUND):
        async with toolvet.client(toolvet.alice, mode="legacy") as client:
            result = await client.call_tool("relay_ask", {"question": "Which colour?"})
    assert result.is_error
    assert "did not declare elicitation" in _text(result)


@pytest.mark.parametrize("mode", ERAS)
async def test_a_cancelled_call_is_cancelled_upstream_and_recorded_with_its_audit_entry(
    toolvet: Toolvet, tmp_path: Path, mode
):
    await _register_relay(toolvet)
    marker = tmp_path / "cancelled.txt"
    with toolvet.serve():
        async with toolvet.client(toolvet.alice, mode=mode) as client:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(client.call_tool, "relay_hang", {"marker": str(marker)})
                    while not marker.exists():  # the upstream runs it: now the client gives up
                        await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()
                while marker.read_text() != "cancelled":
                    await anyio.sleep(0.05)
        with anyio.fail_after(BOUND):
            while not (page := calls.list_calls(toolvet.ctx, ADMIN, status="cancelled")).items:
                await anyio.sleep(0.05)
    assert marker.read_text() == "cancelled"
    (call,) = page.items
    assert (call.server_type, call.tool_name, call.user) == ("relay", "hang", "alice")
    (entry,) = audit.list_entries(toolvet.ctx, ADMIN, action="call.cancel").items
    assert entry.object_id == "tool:relay/hang" and entry.after["call"] == call.id
    assert entry.after["status"] == "cancelled"


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_call_given_up_is_cancelled_upstream_over_http_as_each_era_cancels(toolvet: Toolvet, tmp_path: Path,
                                                                                  era: str):
    """Over streamable HTTP a 2026-07-28 request is cancelled by aborting its POST (that wire has no
    notification from client to server); a handshake-era one by ``notifications/cancelled``."""
    marker = tmp_path / "cancelled.txt"
    serving = modern_http_server if era == "2026-07-28" else handshake_only_http_server
    with serving(relay_server.build()) as up:
        await toolvet.register("relay", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve():
            async with toolvet.client(toolvet.alice) as client:
                with anyio.fail_after(BOUND):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(client.call_tool, "relay_hang", {"marker": str(marker)})
                        while not marker.exists():
                            await anyio.sleep(0.05)
                        tg.cancel_scope.cancel()
                    while marker.read_text() != "cancelled":  # the upstream stopped the work
                        await anyio.sleep(0.05)
        methods = [r.body.get("method") for r in up.requests if isinstance(r.body, dict)]
    assert "tools/call" in methods
    assert ("notifications/cancelled" in methods) is (era != "2026-07-28"), methods
