"""One access rule for every way in: a tool's ``securitySchemes`` decide the same on ``/mcp``,
``POST /api/v1/calls``, approvals and ``POST /api/v1/decide``, for every kind of token.

Each test serves the whole app once with the lab upstream and runs one route for every
(scheme x token) pair; what it saw is compared with the route's column of :data:`EXPECTED`.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
import pytest

from tests.gateway.conftest import ADMIN, BOUND, Toolvet
from tests.gateway.lab import Lab, lab_server
from toolvet.schemas.tools import TokenCreate
from toolvet.services import discovery, preferences, tokens

pytestmark = pytest.mark.anyio

#: The lab's tools by scheme: ``noauth``, ``oauth2`` listing the scope files.read, and no schemes.
SCHEMES = {"noauth": "open", "oauth2[files.read]": "files", "none": "widget"}
#: The tokens, each with the user its calls are made for: none (the anonymous consumer), a consumer
#: without files.read (alice), a consumer holding it (carol), an operator (holding no OAuth scope).
TOKENS = {"none": "anonymous", "consumer": "alice", "consumer+files.read": "carol", "operator": "token:ops"}

RAN, UNAUTHENTICATED, FORBIDDEN = "ran", "401", "403"
RUNS, REFUSED = "runs", "refused naming files.read"

#: (scheme, token) -> what a call of the tool comes to: the same on /mcp, over REST and through an
#: approval (a call refused when it is made never waits for an approver).
CALLS = {
    ("noauth", "none"): RAN,
    ("noauth", "consumer"): RAN,
    ("noauth", "consumer+files.read"): RAN,
    ("noauth", "operator"): RAN,
    ("oauth2[files.read]", "none"): UNAUTHENTICATED,
    ("oauth2[files.read]", "consumer"): FORBIDDEN,
    ("oauth2[files.read]", "consumer+files.read"): RAN,
    ("oauth2[files.read]", "operator"): FORBIDDEN,
    ("none", "none"): UNAUTHENTICATED,
    ("none", "consumer"): RAN,
    ("none", "consumer+files.read"): RAN,
    ("none", "operator"): RAN,
}
#: ... and what /decide answers the same token about it.
DECISIONS = {
    key: {RAN: RUNS, FORBIDDEN: REFUSED, UNAUTHENTICATED: UNAUTHENTICATED}[outcome]
    for key, outcome in CALLS.items()
}
EXPECTED = {"mcp": CALLS, "rest": CALLS, "approve": CALLS, "decide": DECISIONS}

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def token_of(toolvet: Toolvet, token: str) -> str | None:
    return {"none": None, "consumer": toolvet.alice, "consumer+files.read": toolvet.scoped,
            "operator": toolvet.ops}[token]


def body(toolvet: Toolvet, scheme: str, token: str) -> dict[str, Any]:
    """A REST call of the scheme's tool; an operator names the user it calls for."""
    data: dict[str, Any] = {"server_type": "lab", "tool_name": SCHEMES[scheme], "arguments": {}}
    if token == "operator":
        data["user"] = TOKENS[token]
    return data


def every_mode(toolvet: Toolvet, mode: str) -> None:
    for user in TOKENS.values():
        preferences.set_permission_mode(toolvet.ctx, ADMIN, user, mode)


def outcome_of_status(status: int) -> str | None:
    return {401: UNAUTHENTICATED, 403: FORBIDDEN}.get(status)


async def test_the_mcp_endpoint_follows_the_table(toolvet: Toolvet):
    seen: dict[tuple[str, str], str] = {}
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        every_mode(toolvet, "allow")
        with toolvet.serve(), anyio.fail_after(BOUND * 2):
            for (scheme, token) in CALLS:
                name = f"lab_{SCHEMES[scheme]}"
                secret = token_of(toolvet, token)
                async with toolvet.http(secret) as http:
                    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                               "params": {"name": name, "arguments": {}}}
                    gate = await http.post(toolvet.mcp, json=message, headers=HEADERS)
                refused = outcome_of_status(gate.status_code)
                if refused is not None:
                    seen[scheme, token] = refused
                    continue
                async with toolvet.client(secret) as client:
                    result = await client.call_tool(name, {})
                seen[scheme, token] = RAN if not result.is_error else f"error: {result.content}"
    assert seen == EXPECTED["mcp"]
    assert "files" in lab.calls


async def test_rest_calls_follow_the_table(toolvet: Toolvet):
    seen: dict[tuple[str, str], str] = {}
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        every_mode(toolvet, "allow")
        with toolvet.serve(), anyio.fail_after(BOUND * 2):
            for (scheme, token) in CALLS:
                before = len(lab.calls)
                async with toolvet.http(token_of(toolvet, token)) as http:
                    answer = await http.post(f"{toolvet.base}/api/v1/calls", json=body(toolvet, scheme, token))
                refused = outcome_of_status(answer.status_code)
                if refused is not None:
                    assert lab.calls[before:] == [], (scheme, token)
                    seen[scheme, token] = refused
                    continue
                done = answer.status_code == 200 and answer.json()["status"] == "done"
                seen[scheme, token] = RAN if done and lab.calls[before:] == [SCHEMES[scheme]] else answer.text
    assert seen == EXPECTED["rest"]


async def test_approved_calls_follow_the_table(toolvet: Toolvet):
    """Every user asks first: the token's call waits (202), then an operator approves it and it runs.
    A call its token may not make is refused when it is made, so no approver ever sees it."""
    seen: dict[tuple[str, str], str] = {}
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        every_mode(toolvet, "ask")
        with toolvet.serve(), anyio.fail_after(BOUND * 2):
            async with toolvet.http(toolvet.ops) as ops:
                for (scheme, token) in CALLS:
                    async with toolvet.http(token_of(toolvet, token)) as http:
                        made = await http.post(f"{toolvet.base}/api/v1/calls", json=body(toolvet, scheme, token))
                    refused = outcome_of_status(made.status_code)
                    if refused is not None:
                        seen[scheme, token] = refused
                        continue
                    assert made.status_code == 202, made.text
                    before = len(lab.calls)
                    approved = await ops.post(f"{toolvet.base}/api/v1/calls/{made.json()['id']}/approve", json={})
                    done = approved.status_code == 200 and approved.json()["status"] == "done"
                    ran = lab.calls[before:] == [SCHEMES[scheme]]
                    seen[scheme, token] = RAN if done and ran else approved.text
            async with toolvet.http(toolvet.ops) as ops:
                pending = await ops.get(f"{toolvet.base}/api/v1/calls", params={"status": "pending"})
    assert seen == EXPECTED["approve"]
    assert pending.json()["total"] == 0


async def test_decide_follows_the_table_and_names_the_missing_scope(toolvet: Toolvet):
    seen: dict[tuple[str, str], str] = {}
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        every_mode(toolvet, "allow")
        with toolvet.serve(), anyio.fail_after(BOUND * 2):
            for (scheme, token) in CALLS:
                question = {"user": TOKENS[token], "scope": "default", "serverType": "lab",
                            "toolName": SCHEMES[scheme]}
                async with toolvet.http(token_of(toolvet, token)) as http:
                    answer = await http.post(f"{toolvet.base}/api/v1/decide", json=question)
                refused = outcome_of_status(answer.status_code)
                if refused is not None:
                    seen[scheme, token] = refused
                    continue
                decision = answer.json()
                if decision["refused"]:
                    named = any("files.read" in reason for reason in decision["reasons"])
                    seen[scheme, token] = REFUSED if named else str(decision["reasons"])
                else:
                    seen[scheme, token] = RUNS if decision["autoAllow"] else str(decision["reasons"])
    assert seen == EXPECTED["decide"]
    assert lab.calls == []  # deciding calls nothing


# --- approvals: whose scopes count ------------------------------------------------------------------


async def test_an_approver_needs_no_scope_of_its_own_the_token_that_made_the_call_had_it(toolvet: Toolvet):
    """carol's call of the tool needing files.read is made with her token that holds the scope; an
    operator holding none approves it, and so may another token of carol's that lacks it."""
    lacking = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="consumer", user="carol", name="carol-2")).token
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "carol", "ask")
        with toolvet.serve(), anyio.fail_after(BOUND):
            calls = f"{toolvet.base}/api/v1/calls"
            async with toolvet.http(toolvet.scoped) as carol:
                first = (await carol.post(calls, json={"server_type": "lab", "tool_name": "files"})).json()
                second = (await carol.post(calls, json={"server_type": "lab", "tool_name": "files"})).json()
            async with toolvet.http(toolvet.ops) as ops:
                by_operator = await ops.post(f"{calls}/{first['id']}/approve", json={})
            async with toolvet.http(lacking) as carol_2:
                by_other_token = await carol_2.post(f"{calls}/{second['id']}/approve", json={})
                made = await carol_2.post(calls, json={"server_type": "lab", "tool_name": "files"})
    assert first["status"] == second["status"] == "pending"
    assert first["reasons"][0] == "the token holds the OAuth scopes this tool needs: files.read"
    assert by_operator.json()["status"] == by_other_token.json()["status"] == "done"
    assert made.status_code == 403 and "files.read" in made.json()["error"]["message"]
    assert lab.calls == ["files", "files"]


class ReschemedLab(Lab):
    """The lab whose ``widget`` tool can start to list an OAuth scope (its fingerprint stays the same:
    ``securitySchemes`` are not part of the contract)."""

    widget_scopes: list[str] | None = None

    def tools(self) -> list[types.Tool]:
        listed = super().tools()
        if self.widget_scopes is None:
            return listed
        schemes = {"securitySchemes": [{"type": "oauth2", "scopes": self.widget_scopes}]}
        return [t.model_copy(update={"meta": {**(t.meta or {}), **schemes}}) if t.name == "widget" else t
                for t in listed]


async def test_a_pending_call_fails_on_approval_when_the_tool_starts_to_need_a_scope(toolvet: Toolvet):
    lab = ReschemedLab()
    with lab_server(lab) as (up, _):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "ask")
        with toolvet.serve(), anyio.fail_after(BOUND):
            calls = f"{toolvet.base}/api/v1/calls"
            async with toolvet.http(toolvet.alice) as alice:
                made = (await alice.post(calls, json={"server_type": "lab", "tool_name": "widget"})).json()
            lab.widget_scopes = ["files.read"]
            runs = await discovery.discover(toolvet.ctx, ADMIN, ["lab"])
            assert runs[0].status == "ok", runs[0].error
            assert toolvet.ctx.calls is not None
            toolvet.ctx.calls.forget()  # what a change made in this process does; another's is seen in 1 s
            async with toolvet.http(toolvet.ops) as ops:
                approved = (await ops.post(f"{calls}/{made['id']}/approve", json={})).json()
    assert made["status"] == "pending"
    # The securitySchemes are part of the tool's contract: the call was made on another definition.
    assert approved["status"] == "failed" and "definition changed after the call was made" in approved["error"]
    assert lab.calls == []



# --- revocation -------------------------------------------------------------------------------------


async def test_a_revoked_token_is_refused_at_once_on_mcp_and_over_rest(toolvet: Toolvet):
    admin = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(role="admin", name="root")).token
    alice_id = next(t.id for t in tokens.list_tokens(toolvet.ctx, ADMIN) if t.name == "alice")
    with lab_server() as (up, lab):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                before = await client.call_tool("lab_widget", {})  # the token's principal is now kept
            async with toolvet.http(admin) as root:
                revoked = await root.delete(f"{toolvet.base}/api/v1/tokens/{alice_id}")
            async with toolvet.http(toolvet.alice) as http:
                message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "lab_widget", "arguments": {}}}
                on_mcp = await http.post(toolvet.mcp, json=message, headers=HEADERS)
                over_rest = await http.post(f"{toolvet.base}/api/v1/calls",
                                            json={"server_type": "lab", "tool_name": "widget"})
                deciding = await http.post(f"{toolvet.base}/api/v1/decide", json={
                    "user": "alice", "scope": "default", "serverType": "lab", "toolName": "widget"})
    assert not before.is_error and revoked.status_code == 204
    assert on_mcp.status_code == over_rest.status_code == deciding.status_code == 401
    assert 'error="invalid_token"' in on_mcp.headers["www-authenticate"]
    assert lab.calls == ["widget"]


async def test_a_token_revoked_through_the_service_in_the_servers_process_is_refused_at_once_on_mcp(
    toolvet: Toolvet,
):
    """``toolvet token revoke`` runs this service function in its own process, whose revocation a server
    sees within ``READ_TTL`` (docs/gateway.md); in the server's own process it holds at once."""
    alice_id = next(t.id for t in tokens.list_tokens(toolvet.ctx, ADMIN) if t.name == "alice")
    with lab_server() as (up, _):
        await toolvet.register("lab", up.url)
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve(), anyio.fail_after(BOUND):
            async with toolvet.client(toolvet.alice) as client:
                before = await client.call_tool("lab_widget", {})
            tokens.revoke_token(toolvet.ctx, ADMIN, alice_id)
            async with toolvet.http(toolvet.alice) as http:
                message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "lab_widget", "arguments": {}}}
                after = await http.post(toolvet.mcp, json=message, headers=HEADERS)
    assert not before.is_error and after.status_code == 401
