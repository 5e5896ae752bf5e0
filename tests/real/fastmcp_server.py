"""An MCP server written with FastMCP 4, as its users write theirs: typed tools (one with a structured
output model, one with annotations, one reporting progress and logging through its ``Context``, one
asking the user mid-call (elicitation, handshake era) and one asking before it acts (a 2026-07-28
guard tool)), resources, a resource template and prompts (a resource and a prompt asking first, as
2026-07-28 guards).

Run by tests/real with the python of the ``fastmcp`` virtual environment (scripts/install-real-mcp):
``python fastmcp_server.py stdio`` or ``python fastmcp_server.py http|sse PORT`` (bound to 127.0.0.1).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import anyio
import mcp.types as mcp_types
from fastmcp import Context, FastMCP
from fastmcp.apps.config import UI_EXTENSION_ID
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


@server.tool
async def confirm(action: str, ctx: Context) -> str:
    """Ask the user to confirm an action (an elicitation), and say what they answered."""
    answer = await ctx.elicit(f"Go ahead with {action}?", response_type=bool)
    if answer.action != "accept":
        return f"{action}: {answer.action}"
    return f"{action}: {'confirmed' if answer.data else 'refused'}"


def _approval(message: str, state: str) -> mcp_types.InputRequiredResult:
    """A 2026-07-28 guard's question: a yes/no form, and the state its retry brings back."""
    question = mcp_types.ElicitRequestFormParams(
        message=message,
        requested_schema={"type": "object", "properties": {"approve": {"type": "boolean"}}, "required": ["approve"]})
    return mcp_types.InputRequiredResult(input_requests={"approval": mcp_types.ElicitRequest(params=question)},
                                         request_state=state)


def _approved(ctx: Context) -> bool | None:
    """The user's answer to :func:`_approval` on a guard's retry; None on its first call."""
    answers = ctx.input_responses
    if not answers or "approval" not in answers:
        return None
    answer = mcp_types.ElicitResult.model_validate(answers["approval"])
    return answer.action == "accept" and bool((answer.content or {}).get("approve"))


@server.tool
async def transfer(amount: int, ctx: Context) -> str:
    """Move money once the user approves: a 2026-07-28 guard tool, which answers its first call with
    the question (an InputRequiredResult) and its retry with the outcome."""
    if (approved := _approved(ctx)) is None:
        return _approval(f"Transfer {amount} EUR?", f"amount={amount}")  # type: ignore[return-value]
    return f"{ctx.request_state}: {'transferred' if approved else 'not transferred'}"


@server.resource("vault://note")
async def note(ctx: Context) -> str:
    """A note shown once the user agrees (a 2026-07-28 guard resource)."""
    if (approved := _approved(ctx)) is None:
        return _approval("Show the note?", "note")  # type: ignore[return-value]
    return "the note says 42" if approved else "not shown"


@server.prompt
async def careful(topic: str, ctx: Context) -> str:
    """A prompt that asks the user first (a 2026-07-28 guard prompt)."""
    if (approved := _approved(ctx)) is None:
        return _approval(f"Use the careful prompt about {topic}?", topic)  # type: ignore[return-value]
    return f"Be careful about {ctx.request_state}." if approved else "Never mind."


@server.tool
async def wait(seconds: float, note: str) -> str:
    """Wait, then say so: writes "started" to the file ``note`` first, and "cancelled" when the call is
    cancelled meanwhile."""
    Path(note).write_text("started", encoding="utf-8")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        Path(note).write_text("cancelled", encoding="utf-8")
        raise
    return f"waited {seconds} s"


@server.tool
async def announce(ctx: Context) -> str:
    """Say, on this session, that the server's tool list changed (as a server does once it changed it)."""
    await ctx.send_notification(mcp_types.ToolListChangedNotification())
    return "announced"


@server.tool
def view_mode(ctx: Context) -> str:
    """Which result the client gets: "ui" for a host that declared MCP Apps, else "text" (as an
    app-enhanced tool chooses its result)."""
    return "ui" if ctx.client_supports_extension(UI_EXTENSION_ID) else "text"


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
