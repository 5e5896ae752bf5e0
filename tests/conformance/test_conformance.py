"""The official MCP conformance suite's server scenarios, run against toolvet's own conformance server:
directly, through the bearer-token proxy alone, and through toolvet's per-server endpoint.

The direct run says the test server does what the scenarios ask; the proxy run says the proxy changes
nothing a scenario can see; the toolvet run says which scenarios toolvet breaks when it stands in front
of a conforming server.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
import pytest

from tests.conformance.proxy import bearer_proxy_server
from tests.conformance.server import conformance_server, conformance_sse_app
from tests.conformance.suite import Outcome, run_server_scenarios
from tests.gateway.conftest import ADMIN, Toolvet
from tests.upstreams import serve
from toolvet.services import discovery, preferences, servers

# Scenarios that cannot pass against the SDK-built server, with the reason. None so far: see
# docs/conformance.md for the two warnings server-sse-polling reports.
IMPOSSIBLE_DIRECTLY: Final[dict[str, str]] = {}
TOKEN: Final = "conformance-proxy-token"
ROOT: Final = Path(__file__).resolve().parents[2]


def _report(outcomes: dict[str, Outcome]) -> str:
    return "\n".join(f"  {name}: {outcome.describe()}" for name, outcome in sorted(outcomes.items()))


@pytest.fixture(scope="module")
def direct(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    """Every server scenario's outcome against the conformance server, run once for the module."""
    with conformance_server() as server:
        yield run_server_scenarios(server.url, tmp_path_factory.mktemp("direct"))


def test_every_scenario_passes_against_the_conformance_server_directly(direct: dict[str, Outcome]):
    assert len(direct) >= 30, f"the suite listed only {sorted(direct)}"
    failing = {name: o for name, o in direct.items() if not o.passed and name not in IMPOSSIBLE_DIRECTLY}
    assert not failing, "scenarios failing directly:\n" + _report(failing)
    stale = {name: direct[name] for name in IMPOSSIBLE_DIRECTLY if direct.get(name, Outcome(False)).passed}
    assert not stale, "scenarios listed as impossible now pass; remove them:\n" + _report(stale)


def test_the_proxy_adds_the_bearer_token_and_changes_no_outcome(direct: dict[str, Outcome], tmp_path: Path):
    with conformance_server() as server, bearer_proxy_server(server.url, TOKEN) as proxy:
        proxied = run_server_scenarios(proxy.url, tmp_path)
    differ = {name: proxied[name] for name in direct if proxied[name].passed != direct[name].passed}
    assert not differ, "scenarios whose outcome the proxy changed:\n" + _report(differ)
    assert server.requests, "the proxy forwarded nothing"
    assert {r.headers.get("authorization") for r in server.requests} == {f"Bearer {TOKEN}"}
    rebinding = [r for r in server.requests if r.headers.get("host") == "evil.example.com"]
    assert rebinding, "the proxy did not forward the client's Host header"


@contextmanager
def upstream_over(transport: str) -> Iterator[dict[str, Any]]:
    """The conformance server over ``transport``, as toolvet registers it."""
    if transport == "stdio":
        yield {"command": sys.executable, "args": ["-m", "tests.conformance.server", "--stdio"], "cwd": str(ROOT)}
    elif transport == "sse":
        with serve(conformance_sse_app(), "/sse") as server:
            yield {"url": server.url, "transport": "sse"}
    else:
        with conformance_server() as server:
            yield {"url": server.url}


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["streamable-http", "stdio", "sse"])
async def test_no_scenario_that_passes_directly_fails_through_toolvet(
    direct: dict[str, Outcome], toolvet: Toolvet, tmp_path: Path, transport: str
):
    """The suite against toolvet's endpoint for the conformance server, which toolvet reaches over
    ``transport``: what the suite's client sends crosses toolvet's upstream client on each of them."""
    with upstream_over(transport) as registration:
        servers.create_server(toolvet.ctx, ADMIN, {"name": "conformance", **registration})
        [run] = await discovery.discover(toolvet.ctx, ADMIN, ["conformance"])
        assert run.status == "ok", run.error
        # Every call runs without an approval dialog, so the scenarios see the server's own answers.
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve():
            endpoint = f"{toolvet.base}/mcp/servers/conformance"
            with bearer_proxy_server(endpoint, toolvet.alice) as proxy:
                through = await anyio.to_thread.run_sync(run_server_scenarios, proxy.url, tmp_path)
    broken = {name: through[name] for name, o in direct.items() if o.passed and not through[name].passed}
    message = f"{len(broken)} of {len(direct)} scenarios pass directly but fail through toolvet ({transport}):\n"
    assert not broken, message + _report(broken)
