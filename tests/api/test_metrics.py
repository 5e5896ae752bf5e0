"""``GET /metrics`` after real calls over ASGI (the app's lifespan running, a real SDK upstream on
loopback), parsed with ``prometheus_client``'s own parser."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from tests.upstreams import modern_http_server
from toolvet.services import discovery, preferences, servers, tools
from toolvet.services.auth import Principal
from toolvet.services.context import Context

pytestmark = pytest.mark.anyio
BOUND = 30.0
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> Samples:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def scrape(client: httpx2.AsyncClient, headers: dict[str, str]) -> Samples:
    response = await client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


async def call(client: httpx2.AsyncClient, token: str, tool: str, arguments: dict[str, Any]) -> int:
    body = {"server_type": "up", "tool_name": tool, "arguments": arguments}
    response = await client.post("/api/v1/calls", json=body, headers={"Authorization": f"Bearer {token}"})
    return response.status_code


async def test_calls_discovery_tools_and_pending_calls_are_counted(
    served: httpx2.AsyncClient, ctx: Context, admin: Principal, mint: Callable[..., str],
    as_operator: dict[str, str],
) -> None:
    before = await scrape(served, as_operator)
    alice, bob = mint("consumer", name="alice", user="alice"), mint("consumer", name="bob", user="bob")
    with modern_http_server() as up:
        servers.create_server(ctx, admin, {"name": "up", "url": up.url})
        with anyio.fail_after(BOUND):
            [run] = await discovery.discover(ctx, admin, ["up"])
        assert run.status == "ok"
        tools.update_tool(ctx, admin, "up", "tool_2", {"enabled": False})
        preferences.set_permission_mode(ctx, admin, "alice", "allow")
        assert await call(served, alice, "tool_0", {"a": 1, "b": 2}) == 200  # ran
        assert await call(served, alice, "tool_0", {"a": 3, "b": 4}) == 200  # ran
        assert await call(served, alice, "tool_0", {"a": "one", "b": 2}) == 200  # invalid
        assert await call(served, bob, "tool_1", {"text": "hi"}) == 202  # pending: bob is asked
        assert await call(served, alice, "tool_2", {"text": "hi"}) == 403  # refused: disabled
        after = await scrape(served, as_operator)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("toolvet_calls_total", server="up", tool="tool_0", outcome="ran") == 2
    assert delta("toolvet_calls_total", server="up", tool="tool_0", outcome="invalid") == 1
    assert delta("toolvet_calls_total", server="up", tool="tool_1", outcome="pending") == 1
    assert delta("toolvet_calls_total", server="up", tool="tool_2", outcome="refused") == 1
    for part in ("toolvet", "upstream"):
        assert delta(f"toolvet_call_{part}_seconds_count", server="up") == 2
        assert delta(f"toolvet_call_{part}_seconds_sum", server="up") > 0
    assert delta("toolvet_discovery_pass_seconds_count", status="ok") == 1
    # What the database holds, read at scrape time.
    assert value(after, "toolvet_discovery_runs", status="ok") == 1
    assert value(after, "toolvet_pending_calls") == 1
    assert value(after, "toolvet_tools", server="up", review_state="unreviewed", held="false") == 3
    assert value(after, "toolvet_upstream_sessions", server="up") == 1  # alice's session


async def test_metrics_need_an_operator_unless_opened(
    served: httpx2.AsyncClient, app: FastAPI, ctx: Context, as_reader: dict[str, str], as_admin: dict[str, str],
) -> None:
    assert (await served.get("/metrics")).status_code == 401
    assert (await served.get("/metrics", headers=as_reader)).status_code == 403
    assert (await served.get("/metrics", headers=as_admin)).status_code == 200
    ctx.settings = ctx.settings.model_copy(update={"metrics_open": True})
    assert (await served.get("/metrics")).status_code == 200


MULTIPROCESS_CHILD = """
import sys
from toolvet.services import metrics
metrics.call_outcome("up", "tool_0", "ran")
if sys.argv[1] == "render":
    from prometheus_client.registry import Collector
    class Nothing(Collector):
        def collect(self):
            return []
    sys.stdout.write(metrics.render(Nothing()).decode())
"""


def test_with_a_multiprocess_directory_every_process_counts_toward_one_scrape(tmp_path: os.PathLike[str]) -> None:
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    for role in ("count", "count", "render"):
        done = subprocess.run([sys.executable, "-c", MULTIPROCESS_CHILD, role], env=env, capture_output=True,
                              text=True, timeout=BOUND, check=True)
    assert value(parse(done.stdout), "toolvet_calls_total", server="up", tool="tool_0", outcome="ran") == 3
