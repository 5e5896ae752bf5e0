"""An MCP server written with FastMCP 4, as its users write theirs: typed tools (one with a structured
output model, one with annotations, one reporting progress and logging through its ``Context``), a
resource, a resource template and a prompt.

Run by tests/real with the python of the ``fastmcp`` virtual environment (scripts/install-real-mcp):
``python fastmcp_server.py stdio`` or ``python fastmcp_server.py http|sse PORT`` (bound to 127.0.0.1).
"""

from __future__ import annotations

import sys
from typing import Annotated

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

server = FastMCP("toolvet-fastmcp", instructions="Arithmetic, a fixed forecast and a counter.")


class Forecast(BaseModel):
    city: str
    celsius: float
    conditions: list[str]


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool(annotations={"readOnlyHint": True, "title": "Forecast"})
def forecast(city: Annotated[str, Field(description="The city's name")]) -> Forecast:
    """Tomorrow's forecast for a city (always the same)."""
    return Forecast(city=city, celsius=21.5, conditions=["sunny", "dry"])


@server.tool
def greet(name: str = "world") -> str:
    """Say hello."""
    return f"Hello, {name}!"


@server.tool
async def count(n: Annotated[int, Field(ge=1, le=10)], ctx: Context) -> str:
    """Count to n, reporting each step as progress and as a log message."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
        await ctx.info(f"counted {i}")
    return f"counted to {n}"


@server.resource("settings://current")
def settings() -> dict[str, object]:
    """The server's settings."""
    return {"mode": "test", "version": 4}


@server.resource("settings://users/{user_id}")
def user(user_id: str) -> dict[str, str]:
    """One user's settings."""
    return {"id": user_id, "theme": "dark"}


@server.prompt
def summarise(text: str) -> str:
    """Summarise a text."""
    return f"Summarise this in one line: {text}"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run(show_banner=False)
    else:
        server.run(transport=sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]), show_banner=False,
                   log_level="warning")
