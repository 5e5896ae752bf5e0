"""The MCP door obeys the decision ``POST /api/v1/decide`` explains: with a consumer token for each
user and scope of the varied registry of ``tests/api/test_decide_agrees_with_calls.py``, ``tools/list``
on ``/mcp`` shows exactly the tools ``/decide`` does not refuse, and each listed tool's ``tools/call``
runs or answers that it waits for an approver as ``/decide`` said (toolvet served by uvicorn, the SDK's
own client, SQLite)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.api.test_decide_agrees_with_calls import (
    ADDRESSES,
    SCOPES,
    USERS,
    agreeing_upstream,
    arguments_for,
    build_registry,
)
from tests.gateway.conftest import ADMIN, BOUND, Toolvet, open_toolvet
from toolvet.schemas.tools import TokenCreate
from toolvet.services import tokens

pytestmark = pytest.mark.anyio

PENDING = "is waiting for an approver"


@pytest.fixture
def served(tmp_path: os.PathLike[str]) -> Iterator[tuple[Toolvet, list[str]]]:
    """toolvet over the varied registry, answering a call that needs approval at once (pending)."""
    with agreeing_upstream() as (url, called), open_toolvet(tmp_path, approval_wait=0.0) as toolvet:
        build_registry(toolvet.ctx, ADMIN, url)
        with toolvet.serve():
            yield toolvet, called


def text_of(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


async def test_tools_list_and_tools_call_follow_decide(served: tuple[Toolvet, list[str]]) -> None:
    toolvet, called = served
    ran_upstream = 0
    with anyio.fail_after(BOUND):
        async with toolvet.http(toolvet.ops) as rest:
            for user, scope in itertools.product(USERS, SCOPES):
                token = tokens.create_token(toolvet.ctx, ADMIN, TokenCreate(
                    role="consumer", name=f"{user}-{scope}", user=user, scope=scope)).token
                decisions = {}
                for server, tool in ADDRESSES:
                    body = {"user": user, "scope": scope, "serverType": server, "toolName": tool}
                    response = await rest.post(f"{toolvet.base}/api/v1/decide", json=body)
                    assert response.status_code == 200, response.text
                    decisions[f"{server}_{tool}"] = (server, tool, response.json())
                async with toolvet.client(token) as client:
                    listed = {t.name for t in (await client.list_tools()).tools}
                    assert listed == {name for name, (*_, d) in decisions.items() if not d["refused"]}, (user, scope)
                    for name in sorted(listed):
                        server, tool, decision = decisions[name]
                        result = await client.call_tool(name, arguments_for(server, tool))
                        pending = PENDING in text_of(result)
                        assert pending is not decision["autoAllow"], (user, scope, name, text_of(result))
                        if decision["autoAllow"] and server != "toolvet":
                            ran_upstream += 1
    assert ran_upstream > 0 and len(called) == ran_upstream
