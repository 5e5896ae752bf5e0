"""The house rules that a grep can check: no private module or attribute of the SDK or the HTTP stack
anywhere in ``src/``, and only the upstream package talks to MCP servers."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "toolvet"
PRIVATE = re.compile(r"mcp\.(client|shared|server)\._|httpcore2\._|_network_backend|httpx2\._")
CLIENT_SIDE = re.compile(r"^\s*(from|import) (mcp\.client|httpx2)\b", re.M)


def sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_no_private_module_or_attribute_of_the_sdk_or_the_http_stack_is_used():
    hits = [f"{path.relative_to(SRC)}:{n}: {line.strip()}" for path in sources()
            for n, line in enumerate(path.read_text().splitlines(), 1) if PRIVATE.search(line)]
    assert hits == []


def test_only_the_upstream_package_imports_the_sdks_client_side():
    # httpx2 is the one HTTP stack for talking to servers; discovery and services build the client
    # the upstream package gives them, and type against it.
    allowed = {"upstream", "discovery", "services"}
    strays = [str(path.relative_to(SRC)) for path in sources()
              if CLIENT_SIDE.search(path.read_text()) and path.relative_to(SRC).parts[0] not in allowed]
    assert strays == []
    assert not [p for p in sources() if "mcp.client" in p.read_text() and p.relative_to(SRC).parts[0] != "upstream"]
