"""The official MCP conformance suite's client scenarios, with toolvet as the client under test.

Each scenario's test server (and authorization server) is the suite's own, written with the TypeScript
SDK: independent of the Python SDK toolvet's upstream client is built on. ``tests/conformance/client.py``
drives toolvet as an operator and an app would (register, connect, discover, call through
``/mcp/servers/{name}``), so what the suite judges is what toolvet says to an upstream: the handshake,
the standing stream, resumption, elicitation relayed from the server to the app, and every OAuth step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tests.conformance.suite import Outcome, client_scenarios, python_module, run_client_scenarios
from tests.real_software import node22, npm_package

ROOT: Final = Path(__file__).resolve().parents[2]

# Scenarios toolvet does not pass, each with the reason (docs/conformance.md, "Client scenarios").
NOT_SUPPORTED: Final[dict[str, str]] = {
    "auth/client-credentials-jwt": "private_key_jwt client authentication is not an OAuth setting toolvet offers",
    "auth/cross-app-access-complete-flow": "the identity-assertion (cross-app access) grant is not one toolvet offers",
    "auth/2025-03-26-oauth-metadata-backcompat": (
        "the authorization server's metadata names an issuer other than the URL it was fetched for; the MCP "
        "SDK's flow refuses that mismatch (RFC 8414 section 3.3), and toolvet keeps the check"),
}


def _report(outcomes: dict[str, Outcome]) -> str:
    return "\n".join(f"  {name}: {outcome.describe()}" for name, outcome in sorted(outcomes.items()))


def test_toolvet_passes_every_client_scenario_it_supports(tmp_path: Path) -> None:
    node22(), npm_package("@modelcontextprotocol/conformance")  # skip, or fail under CI=true, without them
    outcomes = run_client_scenarios(python_module("tests.conformance.client"), tmp_path, ROOT)
    assert len(outcomes) >= 20, f"the suite listed only {sorted(outcomes)}"
    failing = {name: o for name, o in outcomes.items() if not o.passed and name not in NOT_SUPPORTED}
    assert not failing, f"{len(failing)} client scenarios fail with toolvet as the client:\n" + _report(failing)
    stale = {name: outcomes[name] for name in NOT_SUPPORTED if outcomes.get(name, Outcome(False)).passed}
    assert not stale, "scenarios listed as not supported now pass; remove them:\n" + _report(stale)


def test_an_app_of_the_2026_07_28_era_answers_the_elicitation_scenario(tmp_path: Path) -> None:
    """The app behind toolvet speaks 2026-07-28 while the scenario's server speaks the handshake era: the
    elicitation reaches it as an ``InputRequiredResult`` and its retry answers the server's request. (The
    other scenarios are between toolvet and the server; the app's era does not touch them.)"""
    node22(), npm_package("@modelcontextprotocol/conformance")
    scenario = "elicitation-sep1034-client-defaults"
    assert scenario in client_scenarios()
    outcomes = run_client_scenarios(python_module("tests.conformance.client"), tmp_path, ROOT, scenarios=[scenario],
                                    env={"TOOLVET_CONFORMANCE_APP_MODE": "2026-07-28"})
    assert outcomes[scenario].passed, outcomes[scenario].describe()
