"""Running the official MCP conformance suite's scenarios and reading its per-scenario results.

``conformance server --url URL --suite all -o DIR`` runs every server scenario in turn against one
streamable HTTP endpoint and writes ``DIR/server-<scenario>-<timestamp>/checks.json`` for each: a list
of checks, each ``SUCCESS``, ``FAILURE``, ``WARNING`` or ``INFO``. A scenario passes when none of its
checks failed (the CLI's own rule for its exit code). A scenario that crashed or hung writes no file
and counts as failed here.

``conformance client --command CMD --scenario NAME -o DIR`` starts the scenario's own test server (and
authorization server), runs ``CMD URL`` as the client under test and writes ``DIR/NAME-<timestamp>/
checks.json`` (``auth/NAME`` scenarios one folder deeper). :func:`run_client_scenarios` runs every client
scenario that way, a few at a time, each in its own output folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tests.real_software import node22, npm_package

PACKAGE: Final = "@modelcontextprotocol/conformance"
SUITE_TIMEOUT: Final = 45.0  # the whole suite in one process; a direct run takes about 2 s
SCENARIO_TIMEOUT: Final = 15.0  # one scenario run on its own
PARALLEL: Final = 4
LIST_TIMEOUT: Final = 30.0
RESULT_DIR: Final = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
LISTED: Final = re.compile(r"^\s+- (?P<scenario>\S+)")
#: A client scenario runs its own servers and the client's whole set-up (a fresh toolvet, its database).
CLIENT_TIMEOUT: Final = 60.0
CLIENT_PARALLEL: Final = 3


@dataclass(frozen=True)
class Outcome:
    """One scenario's result: whether it passed, and the checks that failed or warned."""

    passed: bool
    failures: tuple[str, ...] = ()  # "check-id: error message"
    warnings: tuple[str, ...] = ()  # check ids

    def describe(self) -> str:
        if self.failures:
            return "; ".join(self.failures)
        return f"passed with warnings {', '.join(self.warnings)}" if self.warnings else "passed"


def _cli() -> list[str]:
    return [str(node22()), str(npm_package(PACKAGE) / "dist" / "index.js")]


def server_scenarios() -> list[str]:
    """Every server scenario the installed suite knows (``conformance list --server``)."""
    listed = subprocess.run(
        [*_cli(), "list", "--server"], capture_output=True, text=True, timeout=LIST_TIMEOUT, check=True
    )
    return [match["scenario"] for line in listed.stdout.splitlines() if (match := LISTED.match(line))]


def client_scenarios() -> list[str]:
    """Every client scenario the installed suite knows (``conformance list --client``)."""
    listed = subprocess.run(
        [*_cli(), "list", "--client"], capture_output=True, text=True, timeout=LIST_TIMEOUT, check=True
    )
    return [match["scenario"] for line in listed.stdout.splitlines() if (match := LISTED.match(line))]


def run_client_scenarios(
    command: list[str], out: Path, cwd: Path, *, scenarios: list[str] | None = None, env: dict[str, str] | None = None
) -> dict[str, Outcome]:
    """Run each client scenario (every one the suite lists, unless ``scenarios`` names some) with
    ``command`` (run in ``cwd`` with ``env`` added to this environment, the scenario's URL appended) as
    the client under test; the outcome of each. One whose CLI wrote no result failed, with what it said."""

    def one(scenario: str) -> Outcome:
        folder = out / scenario.replace("/", "_")
        arguments = ["client", "--command", " ".join(command), "--scenario", scenario, "-o", str(folder),
                     "--timeout", str(int(CLIENT_TIMEOUT * 1000))]
        try:
            done = subprocess.run([*_cli(), *arguments], capture_output=True, text=True, cwd=cwd,
                                  env={**os.environ, **(env or {})}, timeout=CLIENT_TIMEOUT + 15, check=False)
            said = (done.stdout + done.stderr)[-600:]
        except subprocess.TimeoutExpired:
            said = f"stopped after {CLIENT_TIMEOUT + 15:.0f} s"
        written = sorted(folder.rglob("checks.json"))
        if not written:
            return Outcome(False, (f"no result written; the CLI said: {said}",))
        return _outcome(json.loads(written[-1].read_text()))

    scenarios = client_scenarios() if scenarios is None else scenarios
    with ThreadPoolExecutor(max_workers=CLIENT_PARALLEL) as pool:
        return dict(zip(scenarios, pool.map(one, scenarios), strict=True))


def python_module(module: str) -> list[str]:
    """The command that runs ``module`` with this interpreter."""
    return [sys.executable, "-m", module]


def _outcome(checks: list[dict[str, Any]]) -> Outcome:
    failures = tuple(f"{c['id']}: {c.get('errorMessage') or c.get('description', '')}"
                     for c in checks if c["status"] == "FAILURE")
    warnings = tuple(str(c["id"]) for c in checks if c["status"] == "WARNING")
    return Outcome(passed=not failures, failures=failures, warnings=warnings)


def _written(out: Path) -> dict[str, Outcome]:
    found: dict[str, Outcome] = {}
    for folder in sorted(out.iterdir()) if out.exists() else []:
        match = RESULT_DIR.match(folder.name)
        if match and (folder / "checks.json").is_file():
            found[match["scenario"]] = _outcome(json.loads((folder / "checks.json").read_text()))
    return found


def _run(arguments: list[str], timeout: float) -> str:
    """Run the CLI; its output, or why it was stopped."""
    try:
        done = subprocess.run([*_cli(), *arguments], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"stopped after {timeout:.0f} s"
    return (done.stdout + done.stderr)[-600:]


def run_server_scenarios(url: str, out: Path) -> dict[str, Outcome]:
    """Run every server scenario against ``url``; the outcome of each scenario the suite lists.

    One CLI process runs them all (fast: node starts once). If it is stopped at ``SUITE_TIMEOUT`` (a
    scenario hung) or ends without a scenario's result, each scenario still missing is run on its own,
    ``PARALLEL`` at a time, each stopped at ``SCENARIO_TIMEOUT``, so one hang costs one scenario.
    """
    scenarios = server_scenarios()
    _run(["server", "--url", url, "--suite", "all", "-o", str(out)], SUITE_TIMEOUT)
    missing = [scenario for scenario in scenarios if scenario not in _written(out)]

    def alone(scenario: str) -> str:
        return _run(["server", "--url", url, "--scenario", scenario, "-o", str(out)], SCENARIO_TIMEOUT)

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        said = dict(zip(missing, pool.map(alone, missing), strict=True))
    written = _written(out)
    return {
        scenario: written.get(scenario) or Outcome(False, (f"no result written; the CLI said: {said[scenario]}",))
        for scenario in scenarios
    }
