"""toolvet's own conformance test server: every tool, resource, template and prompt the official MCP
conformance suite's server scenarios name, with the behaviour each scenario checks.

Built on the SDK's low-level ``Server`` (not ``MCPServer``) because the scenarios need handlers that
``MCPServer`` only reaches through private attributes: ``resources/subscribe``, ``resources/unsubscribe``
and ``logging/setLevel``. It speaks streamable HTTP on a loopback port, with an in-memory event store
so a tool can close its SSE stream and the client can resume it with ``Last-Event-ID``.

The scenarios are written against the 2025-11-25 handshake era, whose logging and sampling the SDK marks
deprecated for 2026-07-28. The server therefore sends ``notifications/message`` and
``sampling/createMessage`` as plain typed messages (``send_notification`` / ``send_request``) rather
than through the deprecated helpers: the wire is the same, and no deprecation warning is raised in a
test process where warnings are errors.

Run it alone with ``python -m tests.conformance.server [--port N]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import struct
import wave
import zlib
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp.types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.upstreams import Upstream, serve

NAME: Final = "toolvet-conformance"
RESOURCE_NOT_FOUND: Final = -32002  # the 2025-11-25 spec's code for an unknown resource URI
STEP: Final = 0.05  # the ~50 ms pause the logging and progress scenarios ask for between notifications
RETRY_MS: Final = 500  # the SSE retry hint sent in priming events
EVENTS_KEPT: Final = 1000  # the event store's bound

Context = ServerRequestContext[Any, Any]
LEVELS: Final[tuple[types.LoggingLevel, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


# ------------------------------------------------------------------------------------------ content


def _png_pixel(red: int, green: int, blue: int) -> bytes:
    """A 1x1 RGB PNG: signature, IHDR, one IDAT row (filter byte 0 and the pixel), IEND."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(bytes([0, red, green, blue]))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _silent_wav(milliseconds: int = 10) -> bytes:
    """A short mono 8 kHz 8-bit WAV of silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(b"\x80" * (8 * milliseconds))
    return buffer.getvalue()


RED_PIXEL: Final = base64.b64encode(_png_pixel(255, 0, 0)).decode()
SILENCE: Final = base64.b64encode(_silent_wav()).decode()


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def image() -> types.ImageContent:
    return types.ImageContent(type="image", data=RED_PIXEL, mime_type="image/png")


# ------------------------------------------------------------------------------------------- tools

NO_ARGUMENTS: Final[dict[str, Any]] = {"type": "object", "properties": {}}


def _one_string(name: str, description: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
    }


TOOLS: Final = [
    types.Tool(name="test_simple_text", description="Returns a simple text.", input_schema=NO_ARGUMENTS),
    types.Tool(name="test_image_content", description="Returns a PNG image.", input_schema=NO_ARGUMENTS),
    types.Tool(name="test_audio_content", description="Returns a WAV clip.", input_schema=NO_ARGUMENTS),
    types.Tool(name="test_embedded_resource", description="Returns an embedded resource.", input_schema=NO_ARGUMENTS),
    types.Tool(
        name="test_multiple_content_types",
        description="Returns text, an image and an embedded resource.",
        input_schema=NO_ARGUMENTS,
    ),
    types.Tool(
        name="test_tool_with_logging",
        description="Sends three info log messages while it runs.",
        input_schema=NO_ARGUMENTS,
    ),
    types.Tool(name="test_error_handling", description="Always fails with an error result.", input_schema=NO_ARGUMENTS),
    types.Tool(
        name="test_tool_with_progress",
        description="Reports progress 0, 50 and 100 of 100 while it runs.",
        input_schema=NO_ARGUMENTS,
    ),
    types.Tool(
        name="test_sampling",
        description="Asks the client's model to answer a prompt.",
        input_schema=_one_string("prompt", "The prompt to send to the model"),
    ),
    types.Tool(
        name="test_elicitation",
        description="Asks the user for a username and an email address.",
        input_schema=_one_string("message", "The message to show the user"),
    ),
    types.Tool(
        name="test_elicitation_sep1034_defaults",
        description="Asks the user for values whose fields all carry defaults.",
        input_schema=NO_ARGUMENTS,
    ),
    types.Tool(
        name="test_elicitation_sep1330_enums",
        description="Asks the user to choose from every kind of enum field.",
        input_schema=NO_ARGUMENTS,
    ),
    types.Tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
    types.Tool(
        name="test_reconnection",
        description="Closes its SSE stream before answering, so the client must resume the stream.",
        input_schema=NO_ARGUMENTS,
    ),
]

DEFAULTS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}

ENUMS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}

USER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


# --------------------------------------------------------------------------------------- resources

STATIC_TEXT: Final = "test://static-text"
STATIC_BINARY: Final = "test://static-binary"
WATCHED: Final = "test://watched-resource"
TEMPLATE: Final = "test://template/{id}/data"
TEMPLATE_PATTERN: Final = re.compile(r"^test://template/(?P<id>[^/]+)/data$")

RESOURCES: Final = [
    types.Resource(uri=STATIC_TEXT, name="static-text", description="A static text resource.", mime_type="text/plain"),
    types.Resource(uri=STATIC_BINARY, name="static-binary", description="A static PNG image.", mime_type="image/png"),
    types.Resource(
        uri=WATCHED, name="watched-resource", description="A resource clients subscribe to.", mime_type="text/plain"
    ),
]
TEMPLATES: Final = [
    types.ResourceTemplate(
        uri_template=TEMPLATE,
        name="template-data",
        description="JSON data for an id.",
        mime_type="application/json",
    )
]


def read(uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    """The contents of ``uri``, or a resource-not-found error."""
    if uri == STATIC_TEXT:
        return types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
        )
    if uri == STATIC_BINARY:
        return types.BlobResourceContents(uri=uri, mime_type="image/png", blob=RED_PIXEL)
    if uri == WATCHED:
        return types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content.")
    if match := TEMPLATE_PATTERN.match(uri):
        ident = match["id"]
        body = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        return types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(body))
    raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


# ----------------------------------------------------------------------------------------- prompts

PROMPTS: Final = [
    types.Prompt(name="test_simple_prompt", description="A prompt without arguments."),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two required arguments.",
        arguments=[
            types.PromptArgument(name="arg1", description="First test argument", required=True),
            types.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt that embeds a resource.",
        arguments=[types.PromptArgument(name="resourceUri", description="URI of the resource", required=True)],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt that carries an image."),
]

COMPLETIONS: Final[dict[tuple[str, str], list[str]]] = {
    ("test_prompt_with_arguments", "arg1"): ["paris", "park", "party", "test", "testing"],
    ("test_prompt_with_arguments", "arg2"): ["hello", "world"],
    (TEMPLATE, "id"): ["1", "2", "3", "123"],
}


def prompt_messages(name: str, arguments: dict[str, str]) -> list[types.PromptMessage]:
    if name == "test_simple_prompt":
        return [types.PromptMessage(role="user", content=text("This is a simple prompt for testing."))]
    if name == "test_prompt_with_arguments":
        arg1, arg2 = _required(arguments, "arg1"), _required(arguments, "arg2")
        return [types.PromptMessage(role="user", content=text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
    if name == "test_prompt_with_embedded_resource":
        uri = _required(arguments, "resourceUri")
        resource = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            types.PromptMessage(role="user", content=types.EmbeddedResource(type="resource", resource=resource)),
            types.PromptMessage(role="user", content=text("Please process the embedded resource above.")),
        ]
    if name == "test_prompt_with_image":
        return [
            types.PromptMessage(role="user", content=image()),
            types.PromptMessage(role="user", content=text("Please analyze the image above.")),
        ]
    raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {name}")


def _required(arguments: dict[str, str], name: str) -> str:
    if name not in arguments:
        raise MCPError(types.INVALID_PARAMS, f"Missing required argument: {name}")
    return arguments[name]


# ------------------------------------------------------------------------------------- event store


@dataclass
class MemoryEventStore(EventStore):
    """Events kept in memory (the newest ``EVENTS_KEPT``) so a closed SSE stream can be resumed."""

    events: deque[tuple[EventId, StreamId, types.JSONRPCMessage | None]] = field(
        default_factory=lambda: deque(maxlen=EVENTS_KEPT)
    )
    counter: int = 0

    async def store_event(self, stream_id: StreamId, message: types.JSONRPCMessage | None) -> EventId:
        self.counter += 1
        event_id = str(self.counter)
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        stream = next((stream for event_id, stream, _ in self.events if event_id == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, stream_id, message in list(self.events):
            if after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
            after = after or event_id == last_event_id
        return stream


# ------------------------------------------------------------------------------------------ server


@dataclass
class ConformanceState:
    """What the server remembers per client session: its log level and its resource subscriptions."""

    log_levels: dict[str | None, types.LoggingLevel] = field(default_factory=dict)
    subscriptions: dict[str | None, set[str]] = field(default_factory=dict)


def _session_id(ctx: Context) -> str | None:
    headers = getattr(ctx.request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def build_server(state: ConformanceState | None = None) -> Server[Any]:
    """The conformance server, with ``state`` (a fresh one by default) holding its per-session memory."""
    memory = state or ConformanceState()

    async def log(ctx: Context, level: types.LoggingLevel, data: str) -> None:
        threshold: types.LoggingLevel = memory.log_levels.get(_session_id(ctx), "debug")
        if LEVELS.index(level) < LEVELS.index(threshold):
            return
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=NAME)
        notification = types.LoggingMessageNotification(params=params)
        await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

    async def elicit(ctx: Context, message: str, schema: dict[str, Any]) -> types.CallToolResult:
        if not _client_can(ctx, types.ClientCapabilities(elicitation=types.ElicitationCapability())):
            return _failure("The client does not support elicitation.")
        answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        return _ok(f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}")

    async def simple_text(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return _ok("This is a simple text response for testing.")

    async def image_content(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(content=[image()])

    async def audio_content(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return types.CallToolResult(content=[types.AudioContent(type="audio", data=SILENCE, mime_type="audio/wav")])

    async def embedded_resource(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return types.CallToolResult(content=[types.EmbeddedResource(type="resource", resource=resource)])

    async def multiple_content_types(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        resource = types.TextResourceContents(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text=json.dumps({"test": "data", "value": 123}),
        )
        return types.CallToolResult(
            content=[
                text("Multiple content types test:"),
                image(),
                types.EmbeddedResource(type="resource", resource=resource),
            ]
        )

    async def with_logging(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        # The scenario asks for a pause between the messages, to show they arrive while the call runs.
        await log(ctx, "info", "Tool execution started")
        await anyio.sleep(STEP)
        await log(ctx, "info", "Tool processing data")
        await anyio.sleep(STEP)
        await log(ctx, "info", "Tool execution completed")
        return _ok("Tool with logging executed successfully.")

    async def error_handling(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return _failure("This tool intentionally returns an error for testing")

    async def with_progress(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        # report_progress is a no-op when the caller sent no progress token.
        for step, progress in enumerate((0, 50, 100)):
            if step:
                await anyio.sleep(STEP)
            await ctx.session.report_progress(progress, 100, f"{progress}% done")
        return _ok("Tool with progress executed successfully.")

    async def sampling(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        if not _client_can(ctx, types.ClientCapabilities(sampling=types.SamplingCapability())):
            return _failure("The client does not support sampling.")
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=text(str(args.get("prompt", ""))))],
                max_tokens=100,
            )
        )
        answer = await ctx.session.send_request(
            request, types.CreateMessageResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
        reply = answer.content.text if isinstance(answer.content, types.TextContent) else str(answer.content)
        return _ok(f"LLM response: {reply}")

    async def elicitation(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return await elicit(ctx, str(args.get("message", "Please provide your information")), USER_SCHEMA)

    async def sep1034_defaults(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return await elicit(ctx, "Please review and update the form fields with defaults", DEFAULTS_SCHEMA)

    async def sep1330_enums(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return await elicit(ctx, "Please choose from each kind of enum", ENUMS_SCHEMA)

    async def schema_2020_12(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        return _ok(f"Received: {json.dumps(args, sort_keys=True)}")

    async def reconnection(ctx: Context, args: dict[str, Any]) -> types.CallToolResult:
        # The SDK offers close_sse_stream only with an event store and a request stamped 2025-11-25 or later;
        # otherwise the answer simply rides the open stream.
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
        return _ok("Reconnection test completed.")

    handlers: dict[str, Callable[[Context, dict[str, Any]], Awaitable[types.CallToolResult]]] = {
        "test_simple_text": simple_text,
        "test_image_content": image_content,
        "test_audio_content": audio_content,
        "test_embedded_resource": embedded_resource,
        "test_multiple_content_types": multiple_content_types,
        "test_tool_with_logging": with_logging,
        "test_error_handling": error_handling,
        "test_tool_with_progress": with_progress,
        "test_sampling": sampling,
        "test_elicitation": elicitation,
        "test_elicitation_sep1034_defaults": sep1034_defaults,
        "test_elicitation_sep1330_enums": sep1330_enums,
        "json_schema_2020_12_tool": schema_2020_12,
        "test_reconnection": reconnection,
    }
    assert sorted(handlers) == sorted(tool.name for tool in TOOLS)

    async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await handler(ctx, dict(params.arguments or {}))

    async def list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=RESOURCES)

    async def list_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)

    async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        return types.ReadResourceResult(contents=[read(str(params.uri))])

    async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        memory.subscriptions.setdefault(_session_id(ctx), set()).add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        memory.subscriptions.get(_session_id(ctx), set()).discard(str(params.uri))
        return types.EmptyResult()

    async def list_prompts(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=PROMPTS)

    async def get_prompt(ctx: Context, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        return types.GetPromptResult(messages=prompt_messages(params.name, dict(params.arguments or {})))

    async def complete(ctx: Context, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        key = ref.name if isinstance(ref, types.PromptReference) else ref.uri
        known = COMPLETIONS.get((key, params.argument.name), [])
        values = [value for value in known if value.startswith(params.argument.value)]
        return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))

    async def set_level(ctx: Context, params: types.SetLevelRequestParams) -> types.EmptyResult:
        memory.log_levels[_session_id(ctx)] = params.level
        return types.EmptyResult()

    server: Server[Any] = Server(
        NAME,
        version="1.0.0",
        instructions="The MCP conformance suite's server scenarios, as served to toolvet's tests.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # Registered here, not as on_set_logging_level, which warns that logging is deprecated in 2026-07-28:
    # the handshake-era scenarios still set a level.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    return server


def _client_can(ctx: Context, capability: types.ClientCapabilities) -> bool:
    return ctx.session.check_client_capability(capability)


def _ok(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[text(value)])


def _failure(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[text(value)], is_error=True)


def conformance_app(state: ConformanceState | None = None) -> Starlette:
    """The server's streamable HTTP app at ``/mcp`` (sessions, SSE answers, resumable streams, and the
    SDK's DNS-rebinding protection for a loopback host)."""
    return build_server(state).streamable_http_app(event_store=MemoryEventStore(), retry_interval=RETRY_MS)


def conformance_sse_app(state: ConformanceState | None = None) -> ASGIApp:
    """The same server over the legacy HTTP+SSE transport: the stream at ``/sse``, messages at
    ``/messages/`` (one session per stream)."""
    server = build_server(state)
    sse = SseServerTransport("/messages/")

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/sse" and scope["method"] == "GET":
            async with sse.connect_sse(scope, receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())
        elif scope["type"] == "http" and scope["path"].startswith("/messages/"):
            await sse.handle_post_message(scope, receive, send)
        elif scope["type"] == "http":
            await PlainTextResponse("not found", status_code=404)(scope, receive, send)

    return app


@contextmanager
def conformance_server(state: ConformanceState | None = None) -> Iterator[Upstream]:
    """Serve the conformance server on a free 127.0.0.1 port in a background thread."""
    with serve(conformance_app(state), "/mcp") as upstream:
        yield upstream


async def serve_stdio() -> None:
    """Serve the same server on this process's stdin and stdout (one session)."""
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8765, help="loopback port (default 8765)")
    parser.add_argument("--stdio", action="store_true", help="serve on stdin and stdout instead of HTTP")
    options = parser.parse_args()
    if options.stdio:
        anyio.run(serve_stdio)
        return
    print(f"conformance server at http://127.0.0.1:{options.port}/mcp", flush=True)
    uvicorn.run(conformance_app(), host="127.0.0.1", port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
