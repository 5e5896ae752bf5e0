"""Running the official MCP conformance suite's server scenarios and reading its per-scenario results.

``conformance server --url URL --suite all -o DIR`` runs every server scenario in turn against one
streamable HTTP endpoint and writes ``DIR/server-<scenario>-<timestamp>/checks.json`` for each: a list
of checks, each ``SUCCESS``, ``FAILURE``, ``WARNING`` or ``INFO``. A scenario passes when none of its
checks failed (the CLI's own rule for its exit code). A scenario that crashed writes no file and counts
as failed here.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tests.real_software import node22, npm_package

PACKAGE: Final = "@modelcontextprotocol/conformance"
SUITE_TIMEOUT: Final = 90.0  # the whole suite; a direct run takes a few seconds
LIST_TIMEOUT: Final = 30.0
RESULT_DIR: Final = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$")
LISTED: Final = re.compile(r"^\s+- (?P<scenario>\S+)")


@dataclass(frozen=True)
class Outcome:
    """One scenario's result: whether it passed, and the checks that failed or warned."""

    passed: bool
    failures: tuple[str, ...] = ()  # "check-id: error message"
    warnings: tuple[str, ...] = ()  # check ids

    def describe(self) -> str:
        return "; ".join(self.failures) or "passed"


def _cli() -> list[str]:
    return [str(node22()), str(npm_package(PACKAGE) / "dist" / "index.js")]


def server_scenarios() -> list[str]:
    """Every server scenario the installed suite knows (``conformance list --server``)."""
    listed = subprocess.run(
        [*_cli(), "list", "--server"], capture_output=True, text=True, timeout=LIST_TIMEOUT, check=True
    )
    return [match["scenario"] for line in listed.stdout.splitlines() if (match := LISTED.match(line))]


def _outcome(checks: list[dict[str, Any]]) -> Outcome:
    failures = tuple(f"{c['id']}: {c.get('errorMessage', '')}" for c in checks if c["status"] == "FAILURE")
    warnings = tuple(str(c["id"]) for c in checks if c["status"] == "WARNING")
    return Outcome(passed=not failures, failures=failures, warnings=warnings)


def run_server_scenarios(url: str, out: Path) -> dict[str, Outcome]:
    """Run every server scenario against ``url``; the outcome of each scenario the suite lists."""
    scenarios = server_scenarios()
    run = subprocess.run(
        [*_cli(), "server", "--url", url, "--suite", "all", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT,
        check=False,
    )
    written: dict[str, Outcome] = {}
    for folder in sorted(out.iterdir()) if out.exists() else []:
        match = RESULT_DIR.match(folder.name)
        if match and (folder / "checks.json").is_file():
            written[match["scenario"]] = _outcome(json.loads((folder / "checks.json").read_text()))
    tail = (run.stdout + run.stderr)[-600:]
    missing = Outcome(passed=False, failures=(f"no result written; the CLI ended with: {tail}",))
    return {scenario: written.get(scenario, missing) for scenario in scenarios}
