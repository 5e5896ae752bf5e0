"""An MCP server over stdio whose tools use what a gateway must pass through, built with the SDK's MCPServer.

- ``steps(count)``: reports ``count`` progress steps and logs one message, then answers "done".
- ``ask(question)``: asks the client (elicitation) and answers with what it said.
- ``hang(marker)``: writes "started" to the file ``marker``, waits until it is cancelled, then writes
  "cancelled" there.
- ``whoami()``: this process's id, so a test can tell which process (session) served a call.
- ``roots()``: asks the client for its roots (``roots/list``) and answers with their URIs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve
from mcp.types import ListRootsResult
from pydantic import BaseModel


class Answer(BaseModel):
    answer: str


def ask_user(question: str) -> Elicit[Answer]:
    return Elicit(question, Answer)


def client_roots() -> ListRoots:
    return ListRoots()


def build() -> MCPServer:
    server = MCPServer("relay-lab", version="0.0.1", log_level="WARNING")

    @server.tool(name="steps", description="Reports progress steps, then answers.")
    async def steps(count: int, ctx: Context) -> str:
        for step in range(1, count + 1):
            await ctx.report_progress(step, count, f"step {step}")
        await ctx.info(f"finished {count} steps")
        return "done"

    # Asked the SDK's way for both eras: a server request mid-call (handshake era), or an
    # InputRequiredResult answered by the client's retry (2026-07-28).
    @server.tool(name="ask", description="Asks the user a question.")
    async def ask(question: str, answer: Annotated[Answer, Resolve(ask_user)]) -> str:
        return f"the user said {answer.answer}"

    @server.tool(name="hang", description="Waits until cancelled.")
    async def hang(marker: str) -> str:
        Path(marker).write_text("started")
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            Path(marker).write_text("cancelled")
            raise
        return "woke"

    @server.tool(name="whoami", description="The serving process's id.")
    def whoami() -> str:
        return str(os.getpid())

    @server.tool(name="roots", description="Lists the client's roots.")
    async def roots(listed: Annotated[ListRootsResult, Resolve(client_roots)]) -> str:
        return " ".join(str(root.uri) for root in listed.roots) or "no roots"

    return server


if __name__ == "__main__":
    build().run(sys.argv[1] if len(sys.argv) > 1 else "stdio")
