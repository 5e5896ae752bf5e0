"""Replicas as operators run them: PostgreSQL, two ``toolvet serve`` processes and a round-robin proxy
without stickiness on loopback. Both eras' clients list and call through the proxy, a pending call is
approved on the other replica, an edit on the other replica reaches a handshake-era client's stream,
and after a ``kill -9`` of the replica a call waits on, the survivor serves the session, the client's
retry resumes the call, and the tool runs once.

Nothing here needs the replicas to share an event bus: each replica reads what the other wrote from
the database (decisions within half a second, the offered set within a second).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from cryptography.fernet import Fernet
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from tests.conftest import new_pg_database
from tests.fleet import Forwarded, RoundRobin, replicas
from tests.upstreams import serve
from toolvet.schemas.tools import TokenCreate
from toolvet.services import call_store, discovery, preferences, servers, tokens
from toolvet.services.auth import Principal, Role
from toolvet.services.context import Context
from toolvet.settings import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

ADMIN = Principal(actor="test:admin", role=Role.ADMIN)
BOUND = 60.0


def bank(ledger: list[dict[str, Any]], lock: threading.Lock) -> MCPServer:
    """An upstream with a read and a destructive tool; every transfer it runs is in ``ledger``."""
    server = MCPServer("bank", log_level="WARNING")

    @server.tool(name="balance", description="The balance of an account.")
    def balance(account: str) -> int:
        return len(account) * 100

    @server.tool(name="transfer", description="Moves money. Runs once per request, or money is lost.")
    def transfer(amount: int, note: str) -> str:
        with lock:
            ledger.append({"amount": amount, "note": note})
        return f"moved {amount}"

    return server


def on_list_changed(event: anyio.Event) -> Any:
    async def handler(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            event.set()

    return handler


@asynccontextmanager
async def client(url: str, token: str, mode: str, **kwargs: Any) -> AsyncIterator[Client]:
    async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=BOUND) as http,
                Client(streamable_http_client(url, http_client=http), mode=mode, cache=None, **kwargs) as made):
        yield made


def call_to(proxy: RoundRobin, note: str) -> Forwarded | None:
    """The forwarded ``tools/call`` POST whose arguments carry ``note`` (the latest)."""
    found = [f for f in proxy.forwarded if f.method == "POST" and b'"tools/call"' in f.body
             and json.dumps(note).encode() in f.body]
    return found[-1] if found else None


async def pending_call(http: httpx2.AsyncClient, replica: str, note: str) -> str:
    """The id of bob's pending call with ``note``, as a replica's REST API lists it (bounded wait)."""
    with anyio.fail_after(BOUND):
        while True:
            page = (await http.get(f"{replica}/api/v1/calls", params={"status": "pending"})).json()
            found = [c["id"] for c in page["items"] if c["arguments"].get("note") == note]
            if found:
                return str(found[0])
            await anyio.sleep(0.05)  # polling the replica's API, as an approver's console does


def other(proxy: RoundRobin, replica: str) -> str:
    return next(r for r in proxy.replicas if r != replica)


async def test_two_replicas_behind_a_round_robin_proxy_serve_both_eras_and_survive_a_kill(
    pg_base_url: str, tmp_path: Path
):
    database_url = new_pg_database(pg_base_url)
    key = Fernet.generate_key().decode()
    ctx = Context.open(Settings(home=tmp_path, database_url=database_url, secret_key=key))
    ledger: list[dict[str, Any]] = []
    lock = threading.Lock()
    try:
        make = tokens.create_token
        alice = make(ctx, ADMIN, TokenCreate(role="consumer", user="alice", name="alice")).token
        bob = make(ctx, ADMIN, TokenCreate(role="consumer", user="bob", name="bob")).token
        ops = make(ctx, ADMIN, TokenCreate(role="operator", name="ops")).token
        preferences.set_permission_mode(ctx, ADMIN, "alice", "allow")  # bob's calls ask an approver
        with serve(bank(ledger, lock).streamable_http_app(), "/mcp") as up:
            servers.create_server(ctx, ADMIN, {"name": "bank", "url": up.url})
            with anyio.fail_after(BOUND):
                (run,) = await discovery.discover(ctx, ADMIN, ["bank"])
            assert run.status == "ok", run.error
            env = {"TOOLVET_DATABASE_URL": database_url, "TOOLVET_SECRET_KEY": key,
                   "TOOLVET_APPROVAL_WAIT": "120", "TOOLVET_DISCOVERY_INTERVAL": "3600"}
            homes = [tmp_path / "a", tmp_path / "b"]
            for home in homes:
                home.mkdir()
            with replicas({**env, "TOOLVET_HOME": str(homes[0])}, homes[0], 1) as (first,), \
                    replicas({**env, "TOOLVET_HOME": str(homes[1])}, homes[1], 1) as (second,):
                proxy = RoundRobin([first.url, second.url])
                with serve(proxy.app, "") as front:
                    await _through_the_fleet(proxy, f"{front.url}/mcp", alice, bob, ops,
                                             {first.url: first, second.url: second}, ledger)
        done = call_store.list_calls(ctx, ADMIN, status=None).items
    finally:
        ctx.close()
    # Nothing ran twice: one transfer per intent, and one call row each.
    assert sorted(entry["note"] for entry in ledger) == ["first", "second"]
    transfers = [c for c in done if c.tool_name == "transfer"]
    assert sorted(c.arguments["note"] for c in transfers) == ["first", "second"]
    assert all(c.status.value == "done" for c in transfers)


async def _through_the_fleet(proxy: RoundRobin, mcp: str, alice: str, bob: str, ops: str,
                             by_url: dict[str, Any], ledger: list[dict[str, Any]]) -> None:
    told = anyio.Event()
    async with (client(mcp, alice, "legacy", message_handler=on_list_changed(told)) as old,
                client(mcp, alice, "2026-07-28") as new, client(mcp, bob, "legacy") as asks,
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {ops}"}, timeout=BOUND) as rest):
        with anyio.fail_after(BOUND):
            # 1. Lists and calls, both eras, every request to the next replica.
            listed_old = {t.name for t in (await old.list_tools()).tools}
            listed_new = {t.name for t in (await new.list_tools()).tools}
            assert {"bank_balance", "bank_transfer"} <= listed_old & listed_new
            for client_ in (old, new):
                results = [await client_.call_tool("bank_balance", {"account": "x" * i}) for i in range(1, 5)]
                assert [r.structured_content for r in results] == [{"result": 100 * i} for i in range(1, 5)]
            served = {f.replica for f in proxy.forwarded if f.method == "POST"}
            assert served == set(proxy.replicas)  # both replicas answered (handshake-era sessions too)

            # 2. A pending call is approved on the replica it did not reach.
            async with anyio.create_task_group() as tg:
                outcome: dict[str, Any] = {}

                async def first_transfer() -> None:
                    outcome["first"] = await asks.call_tool("bank_transfer", {"amount": 5, "note": "first"})

                tg.start_soon(first_transfer)
                call_id = await pending_call(rest, proxy.replicas[0], "first")
                reached = call_to(proxy, "first")
                assert reached is not None
                approved = await rest.post(f"{other(proxy, reached.replica)}/api/v1/calls/{call_id}/approve",
                                           json={})
                assert approved.status_code == 200, approved.text
            assert outcome["first"].structured_content == {"result": "moved 5"}

            # 3. An edit on the replica that does not hold the handshake-era client's GET stream reaches it.
            streams = [f.replica for f in proxy.forwarded if f.method == "GET"]
            assert streams, "the handshake-era client opened no GET stream"
            edited = await rest.patch(f"{other(proxy, streams[-1])}/api/v1/servers/bank/tools/balance",
                                      json={"enabled": False})
            assert edited.status_code == 200, edited.text
            await told.wait()
            assert "bank_balance" not in {t.name for t in (await old.list_tools()).tools}

        # 4. kill -9 of the replica a pending call waits on: the survivor serves the session, the
        #    client's retry resumes the call, and one approval runs it once.
        with anyio.fail_after(BOUND):
            async def doomed() -> None:
                with contextlib.suppress(MCPError):  # "SSE stream ended": the client sees its request cut
                    await asks.call_tool("bank_transfer", {"amount": 7, "note": "second"})

            with anyio.CancelScope() as waiting:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(doomed)
                    await pending_call(rest, proxy.replicas[0], "second")
                    reached = call_to(proxy, "second")
                    assert reached is not None
                    by_url[reached.replica].kill()
                    await anyio.to_thread.run_sync(reached.broken.wait, BOUND)
                    waiting.cancel()  # the client gives up on the cut request (if it has not yet), and retries
            survivor = other(proxy, reached.replica)
            async with anyio.create_task_group() as tg:
                retried: dict[str, Any] = {}

                async def retry() -> None:
                    retried["second"] = await asks.call_tool("bank_transfer", {"amount": 7, "note": "second"})

                tg.start_soon(retry)
                call_id = await pending_call(rest, survivor, "second")
                approved = await rest.post(f"{survivor}/api/v1/calls/{call_id}/approve", json={})
                assert approved.status_code == 200, approved.text
            assert retried["second"].structured_content == {"result": "moved 7"}
            assert [e["note"] for e in ledger].count("second") == 1
            # The survivor serves the sessions opened through the fleet, whichever replica opened them.
            assert {t.name for t in (await old.list_tools()).tools} >= {"bank_transfer"}
            assert "bank_transfer" in {t.name for t in (await new.list_tools()).tools}
