"""The official MCP conformance suite's server scenarios, run against toolvet's own conformance server:
directly, through the bearer-token proxy alone, and through toolvet's per-server endpoint.

The direct run says the test server does what the scenarios ask; the proxy run says the proxy changes
nothing a scenario can see; the toolvet run says which scenarios toolvet breaks when it stands in front
of a conforming server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Final

import anyio.to_thread
import pytest

from tests.conformance.proxy import bearer_proxy_server
from tests.conformance.server import conformance_server
from tests.conformance.suite import Outcome, run_server_scenarios
from tests.gateway.conftest import ADMIN, Toolvet
from toolvet.services import preferences

# Scenarios that cannot pass against the SDK-built server, with the reason. None so far: see
# docs/conformance.md for the two warnings server-sse-polling reports.
IMPOSSIBLE_DIRECTLY: Final[dict[str, str]] = {}
TOKEN: Final = "conformance-proxy-token"


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


@pytest.mark.anyio
async def test_no_scenario_that_passes_directly_fails_through_toolvet(
    direct: dict[str, Outcome], toolvet: Toolvet, tmp_path: Path
):
    with conformance_server() as server:
        await toolvet.register("conformance", server.url)
        # Every call runs without an approval dialog, so the scenarios see the server's own answers.
        preferences.set_permission_mode(toolvet.ctx, ADMIN, "alice", "allow")
        with toolvet.serve():
            endpoint = f"{toolvet.base}/mcp/servers/conformance"
            with bearer_proxy_server(endpoint, toolvet.alice) as proxy:
                through = await anyio.to_thread.run_sync(run_server_scenarios, proxy.url, tmp_path)
    broken = {name: through[name] for name, o in direct.items() if o.passed and not through[name].passed}
    message = f"{len(broken)} of {len(direct)} scenarios pass directly but fail through toolvet:\n"
    assert not broken, message + _report(broken)
