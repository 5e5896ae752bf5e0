"""A tiny MCP server over stdio for tests, built with the SDK's MCPServer.

Its one tool, ``env_probe``, reports in its description (as JSON) what the process sees of the
variables named on the command line, so a test can check which environment the client passed.
``--fail MESSAGE`` instead writes MESSAGE to stderr and exits 3 before speaking MCP.
"""

from __future__ import annotations

import json
import os
import sys

from mcp.server.mcpserver import MCPServer


def main(argv: list[str]) -> None:
    if argv[:1] == ["--fail"]:
        print(argv[1] if len(argv) > 1 else "failing on purpose", file=sys.stderr, flush=True)
        raise SystemExit(3)
    seen = {name: os.environ.get(name) for name in argv}
    server = MCPServer("stdio-demo", version="0.0.1", log_level="WARNING")

    @server.tool(name="env_probe", description=json.dumps({"env": seen, "cwd": os.getcwd()}))
    def env_probe() -> str:
        return "ok"

    server.run("stdio")


if __name__ == "__main__":
    main(sys.argv[1:])
