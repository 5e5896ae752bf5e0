"""The MCP endpoint ``/mcp`` (SPEC §6): one streamable-HTTP server for 2026-07-28 and handshake clients.

Built on the SDK's low-level ``Server``: ``tools/list`` answers the offered tools as ``{server}_{tool}``
plus toolvet's host tools (``toolvet_{name}``), ``tools/call`` runs through the one CallService both
doors share, and ``resources/read`` of a ``ui://`` resource goes to the server owning the tool that
names it. :class:`AccessGate` sits in front and enforces the tools' ``securitySchemes``.

Clients learn that the offered set changed: a watcher re-reads it every second and, when the hash of
its names and fingerprints moves, sends ``notifications/tools/list_changed`` to every handshake-era
session and publishes ``toolsListChanged`` to every 2026-07-28 ``subscriptions/listen`` stream.

The session manager runs in the FastAPI app's lifespan (``api/app.py``'s ``LIFETIME``), after the call
service. DNS-rebinding protection (Host/Origin checks) is on when toolvet binds a loopback address,
allowing loopback hosts on any port; bound elsewhere it is off (a public name is not known in advance,
and every call but ``noauth`` ones needs a token anyway).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import mcp.types as types
from fastapi import FastAPI
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import LOG_LEVEL_META_KEY
from mcp_types import INVALID_PARAMS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from toolvet import __version__
from toolvet.api.errors import UnexpectedErrors
from toolvet.errors import Forbidden, InvalidInput, NotFound, ToolvetError
from toolvet.gateway import outcomes
from toolvet.gateway.access import (
    ANONYMOUS,
    METADATA_PATH,
    AccessGate,
    Requirement,
    TokenCache,
    metadata,
    principal_of,
)
from toolvet.gateway.host_tools import register_host_tools
from toolvet.gateway.offered import OfferedCache, is_modern
from toolvet.gateway.relay import Relay
from toolvet.schemas.calls import CallCreate, CallStatus
from toolvet.services.auth import Role
from toolvet.services.calls import USER_DECLINED, CallService, error_result
from toolvet.services.context import Context
from toolvet.upstream.protocol import is_input_required

log = logging.getLogger("toolvet.gateway")

#: The key of the approval question in a 2026-07-28 InputRequiredResult.
APPROVAL_INPUT: Final = "toolvet.approval"
#: Marks a requestState that carries an upstream's own state (its server asked for input).
UPSTREAM_STATE: Final = "toolvet.upstream:"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether a 2026-07-28 request's client says (in its ``_meta``) that it answers elicitations."""
    meta = (ctx.params or {}).get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return isinstance(capabilities, dict) and capabilities.get("elicitation") is not None

def _forwarded_meta(ctx: ServerRequestContext[Any], log_level: str | None) -> dict[str, Any]:
    """What of the client's ``_meta`` goes upstream with its call (toolvet stamps its own protocol fields):
    the progress token, so the upstream's progress comes back to this client, and the level of log
    messages it wants (2026-07-28 servers send them only to a request that asks)."""
    meta = (ctx.params or {}).get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    forwarded: dict[str, Any] = {}
    token = meta.get("progressToken")
    if isinstance(token, str | int) and not isinstance(token, bool):
        forwarded["progressToken"] = token
    level = meta.get(LOG_LEVEL_META_KEY) if is_modern(ctx.protocol_version) else log_level
    if isinstance(level, str):
        forwarded[LOG_LEVEL_META_KEY] = level
    return forwarded


POLL_SECONDS: Final = 1.0
RESOURCE_NOT_FOUND: Final = -32002
LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS: Final = (
    "toolvet offers vetted tools of several MCP servers as {server}_{tool}, and its own "
    "operations as toolvet_{name}. A call that needs approval may wait for a person."
)


class _GatewayServer(Server[Any]):
    """The low-level Server, telling handshake-era clients it announces tool-list changes."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def security_for(host: str) -> TransportSecuritySettings:
    """Host/Origin checks for a server bound to ``host`` (see the module docstring)."""
    if host not in LOOPBACK:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class Gateway:
    """``/mcp`` for one app: the SDK server, its session manager (per lifespan) and the change watcher."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.offered = OfferedCache(ctx)
        self.tokens = TokenCache(ctx)
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        with warnings.catch_warnings():
            # logging/setLevel is deprecated at 2026-07-28 and the SDK warns when it is served; toolvet
            # serves handshake-era clients too, which still send it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = self._make_server()
        if not ctx.settings.gateway_tracing:
            # The SDK puts its OpenTelemetry span around every request by default (trace context read
            # from _meta, a span made and ended): a tenth of a millisecond per call with no tracer.
            # The SDK documents the opt-out: drop it from the list, which holds nothing else at this point.
            self.server.middleware = []
        self.server.middleware.append(self._remember_session)
        self.manager: StreamableHTTPSessionManager | None = None
        self.gate = AccessGate(self._serve, self.tokens, self._requirement)
        self._sessions: dict[int, ServerSession] = {}
        #: The log level each handshake-era client set with logging/setLevel (by session).
        self._log_levels: dict[int, str] = {}
        self.announced = 0  # how many list changes were announced (tests and logs)

    def _make_server(self) -> _GatewayServer:
        return _GatewayServer(
            "toolvet",
            version=__version__,
            title="toolvet gateway",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            # A dict result is shaped and validated by the SDK's runner like a model (its _dump_result
            # and per-version serialisation take both); the handler's type names only the model.
            on_call_tool=self._call_tool,  # type: ignore[arg-type]
            on_read_resource=self._read_resource,
            on_subscriptions_listen=self.listen,
            get_tool_input_schema=self._input_schema,
            on_set_logging_level=self._set_log_level,
        )

    # ------------------------------------------------------------------ lifetime and transport

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Serve for the app's lifetime: host tools registered, sessions managed, changes watched."""
        service = self.service()
        register_host_tools(service)
        self.offered = OfferedCache(self.ctx, service)
        self.manager = StreamableHTTPSessionManager(
            app=self.server, security_settings=security_for(self.ctx.settings.host)
        )
        async with self.manager.run(), anyio.create_task_group() as tg:
            tg.start_soon(self._watch)
            try:
                yield
            finally:
                self.listen.close()
                tg.cancel_scope.cancel()
                self._sessions.clear()
                self.manager = None

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None:
            await JSONResponse({"error": "the MCP endpoint is not running"}, status_code=503)(
                scope, receive, send
            )
            return
        await self.manager.handle_request(scope, receive, send)

    def service(self) -> CallService:
        service = self.ctx.calls
        if not isinstance(service, CallService):
            raise RuntimeError("the gateway needs a running CallService (api/app.py LIFETIME)")
        return service

    # ------------------------------------------------------------------ tools

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """A listed tool's ``inputSchema``, for the SDK's ``Mcp-Param-*`` header check.

        Without it the SDK runs a whole ``tools/list`` through the handler chain on every
        ``tools/call`` to find the schema. This reads the same cached offered set (refreshed every
        second by the watcher); None (not listed, or nothing read yet) skips the header check, as
        the SDK does for a tool its listing does not name. Arguments are still validated against the
        stored ``inputSchema`` by the call service.
        """
        offered = self.offered.peek()
        tool = offered.by_name.get(name) if offered is not None else None
        schema = tool.wire.get("inputSchema") if tool is not None else None
        return schema if isinstance(schema, dict) else None

    async def _requirement(self, name: str) -> Requirement | None:
        tool = (await self.offered.get()).by_name.get(name)
        return tool.need if tool is not None else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor:
            raise MCPError(INVALID_PARAMS, "invalid cursor: toolvet lists every tool on one page")
        offered = await self.offered.get()
        tools = offered.listing(
            modern=is_modern(ctx.protocol_version), anonymous=principal_of(ctx.request) is None
        )
        # The list depends on who asks (noauth tools only without a token): a private cache scope.
        return types.ListToolsResult(tools=tools, ttl_ms=int(POLL_SECONDS * 1000), cache_scope="private")

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        name = params.name
        server, sep, tool = name.partition("_")
        offered = (await self.offered.get()).by_name.get(name)
        if not sep or not server or not tool:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        principal = principal_of(ctx.request)
        if principal is None:
            if offered is None or not offered.need.noauth:
                raise MCPError(INVALID_PARAMS, f"{name} needs a bearer token")
            principal = ANONYMOUS
        modern = is_modern(ctx.protocol_version)
        data = CallCreate(
            server_type=server,
            tool_name=tool,
            arguments=dict(params.arguments or {}),
            user=None if principal.role is Role.CONSUMER else (principal.user or principal.actor),
        )
        resume: dict[str, Any] | None = None
        if modern and params.request_state is not None:
            state = str(params.request_state)
            if not state.startswith(UPSTREAM_STATE):
                # The retry of a call this endpoint asked the user about (2026-07-28 multi-round trip).
                return await self._answered(principal, server, tool, params)
            # The retry of a call whose upstream asked for input: it goes through the policy again
            # and upstream with the client's answers and the upstream's own state.
            resume = {"inputResponses": (ctx.params or {}).get("inputResponses") or {}}
            if upstream_state := state[len(UPSTREAM_STATE):]:
                resume["requestState"] = upstream_state
        asks = modern and _can_elicit(ctx)
        elicit = None if modern else self._elicitation(ctx)
        try:
            call = await self.service().submit(
                principal, data, wait=0 if asks else self.ctx.settings.approval_wait, elicit=elicit,
                hooks=Relay(ctx), meta=_forwarded_meta(ctx, self._log_levels.get(id(ctx.session), "debug")),
                resume=resume,
            )
        except NotFound:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        except (Forbidden, InvalidInput) as exc:
            return types.CallToolResult.model_validate(error_result(exc.message))
        except ToolvetError as exc:
            return types.CallToolResult.model_validate(error_result(f"{name}: {exc.message}"))
        if asks and call.status is CallStatus.PENDING:
            # Ask the user in this call's answer; their client calls again with the response and this
            # state. The call is stored pending meanwhile, so an approver over REST may decide it too.
            form = types.ElicitRequestFormParams(message=outcomes.question(call),
                                                 requested_schema=outcomes.DECISION_SCHEMA)
            return types.InputRequiredResult(
                input_requests={APPROVAL_INPUT: types.ElicitRequest(params=form)}, request_state=call.id
            )
        if modern and is_input_required(call.result):
            # The upstream needs input from this client first: ask it, keeping the upstream's state
            # under a prefix of toolvet's, so the retry is told apart from an approval's.
            raw = dict(call.result or {})
            raw["requestState"] = UPSTREAM_STATE + str(raw.get("requestState") or "")
            try:
                return types.InputRequiredResult.model_validate(raw)
            except ValidationError as exc:
                return types.CallToolResult.model_validate(error_result(
                    f"{name}: the upstream asked for input in a malformed way: {exc.errors()[0]['msg']}"))
        return outcomes.result_of(call, modern=modern)

    async def _answered(
        self, principal: Any, server: str, tool: str, params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        """Decide (and run) the pending call named by the retry's state, by its user's answer."""
        service = self.service()
        call_id = str(params.request_state)
        try:
            call = service.get(principal, call_id)
        except (NotFound, Forbidden):
            raise MCPError(INVALID_PARAMS, "unknown request state: call the tool again") from None
        if (call.server_type, call.tool_name) != (server, tool):
            raise MCPError(INVALID_PARAMS, "the request state belongs to another tool's call")
        response = (params.input_responses or {}).get(APPROVAL_INPUT)
        answer = outcomes.answer_of(response) if isinstance(response, types.ElicitResult) else "deny"
        if call.status is CallStatus.PENDING:
            try:
                if answer == "deny":
                    call = await service.deny(principal, call_id)
                    call = call.model_copy(update={"result": error_result(USER_DECLINED)})
                else:
                    call = await service.approve(principal, call_id, allow_always=answer == "always")
            except ToolvetError:  # decided by someone else, or expired, meanwhile: answer what it became
                call = service.get(principal, call_id)
        return outcomes.result_of(call, modern=True)

    def _elicitation(self, ctx: ServerRequestContext[Any]) -> Any:
        """The ask-the-user callback when this client can answer an elicitation, else None."""
        session = ctx.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None or not session.can_send_request:
            return None
        bound = self.ctx.settings.approval_ttl

        async def ask(call: Any) -> outcomes.Answer | None:
            try:
                with anyio.fail_after(bound):
                    answer = await session.elicit_form(
                        outcomes.question(call), outcomes.DECISION_SCHEMA, related_request_id=ctx.request_id
                    )
            except Exception:  # timed out, refused, no back channel: the client could not ask, so pending
                log.info("elicitation for call %s failed; waiting for an approver instead", call.id)
                return None
            return outcomes.answer_of(answer)

        return ask

    async def _set_log_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """A handshake-era client's log level: asked of every upstream its calls reach."""
        self._log_levels[id(ctx.session)] = params.level
        return types.EmptyResult()

    # ------------------------------------------------------------------ resources

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        offered = await self.offered.get()
        owner = next((t for t in offered.tools if t.resource_uri == uri and t.server != "toolvet"), None)
        if not uri.startswith("ui://") or owner is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        if owner.need.missing(principal_of(ctx.request)) is not None:
            raise MCPError(INVALID_PARAMS, f"{uri} belongs to {owner.name}, which this token may not use")
        service = self.service()
        target = service.target_of(owner.server, owner.tool)
        if target is None or service.pool is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        try:
            raw = await service.pool.call(owner.server, target, "resources/read", {"uri": uri})
        except ToolvetError as exc:
            raise MCPError(RESOURCE_NOT_FOUND, f"{uri}: {exc.message}") from None
        return types.ReadResourceResult.model_validate(raw)

    # ------------------------------------------------------------------ list changes

    async def _remember_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Keep each handshake-era connection's session, to send it list_changed later."""
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized" and not is_modern(ctx.protocol_version):
            # The SDK exposes no public handle on the connection; its exit stack tells us when it ends.
            connection = getattr(ctx.session, "_connection", None)
            if (
                connection is not None
                and connection.has_standalone_channel
                and id(connection) not in self._sessions
            ):
                self._sessions[id(connection)] = ctx.session
                connection.exit_stack.callback(self._sessions.pop, id(connection), None)
        return result

    async def _watch(self) -> None:
        last: str | None = None
        while True:
            try:
                signature = (await self.offered.get(fresh=True)).signature
            except Exception:
                log.exception("could not read the offered tools")
            else:
                if last is not None and signature != last:
                    await self.announce()
                last = signature
            await anyio.sleep(POLL_SECONDS)

    async def announce(self) -> None:
        """Tell every connected client that the tool list changed (both eras)."""
        self.announced += 1
        await self.bus.publish(ToolsListChanged())
        async with anyio.create_task_group() as tg:
            for key, session in list(self._sessions.items()):
                tg.start_soon(self._notify, key, session)

    async def _notify(self, key: int, session: ServerSession) -> None:
        try:
            with anyio.fail_after(5):
                await session.send_tool_list_changed()
        except Exception:
            self._sessions.pop(key, None)


# ---------------------------------------------------------------------- mounting


def mount_gateway(app: FastAPI, ctx: Context) -> Gateway:
    """Mount ``/mcp`` and the protected-resource metadata on ``app``; run it with :func:`gateway_lifetime`."""
    gateway = Gateway(ctx)
    app.state.gateway = gateway

    async def resource_metadata(request: Request) -> JSONResponse:
        """RFC 9728 protected-resource metadata for ``/mcp``."""
        offered = await gateway.offered.get()
        return JSONResponse(metadata(request.scope, offered.scopes()))

    # Answered ahead of the app's middleware when the app allows it (api.app.ToolvetAPI), and routed
    # first in the table otherwise (a prefixed path): an MCP call never matches every API route first.
    if hasattr(app, "mcp_app"):
        app.mcp_app = UnexpectedErrors(gateway.gate)
    app.router.routes.insert(0, Route("/mcp", endpoint=gateway.gate))
    for path in (METADATA_PATH, METADATA_PATH + "/mcp"):
        app.router.routes.append(Route(path, endpoint=resource_metadata, methods=["GET"]))
    return gateway


def gateway_lifetime(app: FastAPI) -> Any:
    """The LIFETIME entry: runs the app's gateway (after the call service is entered)."""
    gateway: Gateway = app.state.gateway
    return gateway.run()


__all__ = ["Gateway", "gateway_lifetime", "mount_gateway", "security_for"]
