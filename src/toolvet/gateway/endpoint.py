"""One MCP endpoint: a view of the offered set, served to 2026-07-28 and handshake-era clients alike.

Built on the SDK's low-level ``Server``, with its own streamable-HTTP session manager. ``/mcp`` lists
every offered tool as ``{server}_{tool}`` (toolvet's own as ``toolvet_{name}``);
``/mcp/servers/{name}`` lists one server's offered tools under their own names; ``/mcp/sets/{name}``
lists the offered tools an operator's tool set names, as ``{server}_{tool}``. In each, what the
model sees follows the caller: anonymous callers see ``noauth`` tools only, and a token's scope hides
the tools its disabled map names. ``tools/call`` runs through the one CallService both doors share;
what the upstream sends while a call runs (progress, log messages, elicitation, sampling, a request
for input) is relayed to the caller (``relay``). Prompts, resources and completions are federated
from the view's servers (``federation``). :class:`~toolvet.gateway.access.AccessGate` sits in front
and enforces the tools' ``securitySchemes``.

A server's view declares what that server declared (resources, prompts, completions, logging) and
nothing it did not, so a client that checks capabilities sees the server as it is.
"""

from __future__ import annotations

import copy
import logging
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_thread
import mcp.types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, LOG_LEVEL_META_KEY
from pydantic import ValidationError
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from toolvet import __version__
from toolvet.cache import READ_TTL
from toolvet.domain.names import HOST_SERVER
from toolvet.domain.policy import ApprovalFloor
from toolvet.errors import Forbidden, InvalidInput, NotFound, ToolvetError, UpstreamError
from toolvet.gateway import outcomes
from toolvet.gateway.access import AccessGate, TokenCache, principal_of
from toolvet.gateway.conversation import PARKED_STATE, Conversation
from toolvet.gateway.federation import EntryCache, Federation, ambiguous, holds_links, split_namespaced
from toolvet.gateway.notices import notices_of
from toolvet.gateway.offered import AGGREGATE, OfferedCache, View, is_modern
from toolvet.gateway.relay import Relay, undeclared
from toolvet.gateway.sessions import Sessions, session_id_of
from toolvet.gateway.subscriptions import Subscriptions
from toolvet.gateway.tasks import CAPABILITY as TASKS_CAPABILITY
from toolvet.gateway.tasks import TaskRoutes, Tasks, asked_task
from toolvet.schemas.calls import CallCreate, CallOut, CallStatus
from toolvet.services.access import ANONYMOUS, Requirement
from toolvet.services.auth import Principal, Role
from toolvet.services.calls import USER_DECLINED, CallService, error_result
from toolvet.upstream.protocol import is_input_required

log = logging.getLogger("toolvet.gateway")

#: The key of the approval question in a 2026-07-28 InputRequiredResult.
APPROVAL_INPUT: Final = "toolvet.approval"
#: Marks a requestState that carries an upstream's own state (its server asked for input).
UPSTREAM_STATE: Final = "toolvet.upstream:"
CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
#: How often the change watcher re-reads the offered set, and how long a client may keep a listing:
#: as long as the offered set is cached, so a poll never reads a set the cache would still serve.
POLL_SECONDS: Final = READ_TTL
RESOURCE_NOT_FOUND: Final = -32002
SUBSCRIPTIONS: Final = ("resources/subscribe", "resources/unsubscribe")
LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
INSTRUCTIONS: Final = (
    "toolvet offers vetted tools of several MCP servers as {server}_{tool}, and its own "
    "operations as toolvet_{name}. A call that needs approval may wait for a person."
)
SET_INSTRUCTIONS: Final = (
    "toolvet offers the vetted tools of the tool set {name} as {{server}}_{{tool}}. A call that needs "
    "approval may wait for a person."
)


def _can_elicit(ctx: ServerRequestContext[Any]) -> bool:
    """Whether a 2026-07-28 request's client says (in its ``_meta``) that it answers elicitations."""
    meta = (ctx.params or {}).get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return isinstance(capabilities, dict) and capabilities.get("elicitation") is not None


def _can_answer_questions(ctx: ServerRequestContext[Any]) -> bool:
    """Whether a 2026-07-28 request's client declared elicitation, sampling or roots (in its ``_meta``)."""
    meta = (ctx.params or {}).get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return isinstance(capabilities, dict) and any(
        capabilities.get(name) is not None for name in ("elicitation", "sampling", "roots"))


def _request_meta(ctx: ServerRequestContext[Any], log_level: str | None) -> dict[str, Any]:
    """What of the client's ``_meta`` goes upstream with its request (toolvet stamps its own protocol
    fields): the progress token, so the upstream's progress comes back to this client, and the level of
    log messages it wants (2026-07-28 servers send them only to a request that asks)."""
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


def security_for(host: str) -> TransportSecuritySettings:
    """Host/Origin checks for a server bound to ``host``: on for a loopback address (loopback hosts on
    any port allowed), off elsewhere (a public name is not known in advance, and every call but
    ``noauth`` ones needs a token anyway)."""
    if host not in LOOPBACK:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


class _ViewServer(Server[Any]):
    """The low-level Server, telling handshake-era clients it announces list changes (its own tools',
    and the prompts and resources it relays: ``gateway.notices``) and relays tasks, where it does."""

    relays_tasks = False

    def get_capabilities(
        self, notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None, *, protocol_version: str | None = None,
    ) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(notification_options, experimental_capabilities, extensions,
                                                protocol_version=protocol_version)
        if self.relays_tasks and (protocol_version is None or not is_modern(protocol_version)):
            capabilities.tasks = TASKS_CAPABILITY
        return capabilities

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, prompts_changed=True,
                                                        resources_changed=True),
            experimental_capabilities,
            extensions,
        )


def _declares(capabilities: Mapping[str, Any] | None, name: str) -> bool:
    return capabilities is None or isinstance(capabilities.get(name), dict)


class Endpoint:
    """One view's MCP endpoint: its SDK server, session manager, access gate and connected sessions.

    ``upstream_capabilities`` is what the view's one server declared (None for ``/mcp``, which serves
    every feature over all servers).
    """

    def __init__(
        self, service: CallService, offered: OfferedCache, tokens: TokenCache, view: View = AGGREGATE,
        upstream_capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.service = service
        self.ctx = service.ctx
        self.offered = offered
        self.view = view
        self.capabilities = upstream_capabilities
        self.federation = Federation(prefixed=view.server is None, entries=EntryCache(self.ctx), offered=offered,
                                     view=view)
        self.tasks = Tasks(TaskRoutes(), lambda ctx: self._caller(self._principal(ctx)), self._upstream)
        self.subscriptions = Subscriptions(
            service, notices_of(service), lambda ctx: self._caller(self._principal(ctx)),
            self._by_uri, lambda server: self.view.serves(server))
        with warnings.catch_warnings():
            # logging/setLevel is deprecated at 2026-07-28 and the SDK warns when it is served; toolvet
            # serves handshake-era clients too, which still send it.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server = self._make_server()
        if not self.ctx.settings.gateway_tracing:
            # The SDK puts its OpenTelemetry span around every request by default (trace context read
            # from _meta, a span made and ended): a tenth of a millisecond per call with no tracer.
            # The SDK documents the opt-out: drop it from the list, which holds nothing else at this point.
            self.server.middleware = []
        self.server.middleware.append(self._remember_session)
        if _declares(self.capabilities, "tasks"):
            self.tasks.register(self.server)
            self.server.relays_tasks = True
        self.sessions: Sessions | None = None
        self.gate = AccessGate(self._serve, tokens, self._requirement, self._anonymous)
        #: Calls of 2026-07-28 clients in flight, by id, until they answer (gateway.conversation).
        self._conversations: dict[str, Conversation] = {}
        self._tg: anyio.abc.TaskGroup | None = None

    def _make_server(self) -> _ViewServer:
        caps = self.capabilities
        handlers: dict[str, Any] = {}
        if _declares(caps, "resources"):
            handlers |= {"on_list_resources": self._list_resources,
                         "on_list_resource_templates": self._list_resource_templates}
            # Subscriptions are served wherever resources are: a server discovered in the 2026-07-28 era
            # does not say whether it takes the handshake era's resources/subscribe, and its own answer
            # (an error, if it does not) is passed on.
            handlers |= {"on_subscribe_resource": self.subscriptions.subscribe,
                         "on_unsubscribe_resource": self.subscriptions.unsubscribe}
        if _declares(caps, "prompts"):
            handlers |= {"on_list_prompts": self._list_prompts, "on_get_prompt": self._get_prompt}
        if _declares(caps, "completions"):
            handlers["on_completion"] = self._complete
        if _declares(caps, "logging"):
            handlers["on_set_logging_level"] = self._set_log_level
        name, title, instructions = self._identity()
        return _ViewServer(
            name,
            version=__version__,
            title=title,
            instructions=instructions,
            on_list_tools=self._list_tools,
            # A dict result is shaped and validated by the SDK's runner like a model (its _dump_result
            # and per-version serialisation take both); the handler's type names only the model.
            on_call_tool=self._call_tool,  # type: ignore[arg-type]
            on_read_resource=self._read_resource,
            on_subscriptions_listen=self.subscriptions.listen,
            on_roots_list_changed=self.subscriptions.roots_changed,
            get_tool_input_schema=self._input_schema,
            **handlers,
        )

    def _identity(self, title: str | None = None, description: str | None = None) -> tuple[str, str, str | None]:
        """The name, title and instructions this endpoint introduces itself with (a set's own title
        and description when its operator gave them)."""
        view = self.view
        if view.server is not None:
            return view.server, f"{view.server} through toolvet", None
        if view.tool_set is not None:
            instructions = SET_INSTRUCTIONS.format(name=view.tool_set)
            return (view.tool_set, title or f"{view.tool_set} through toolvet",
                    f"{description}\n\n{instructions}" if description else instructions)
        return "toolvet", "toolvet gateway", INSTRUCTIONS

    def retarget(self, view: View, *, title: str | None = None, description: str | None = None) -> bool:
        """Serve ``view`` from now on (a tool set that was edited), keeping every connected session;
        whether what it lists changed."""
        changed = view != self.view
        self.view = view
        _, self.server.title, self.server.instructions = self._identity(title, description)
        return changed

    def key(self) -> str:
        """The endpoint's path, naming its sessions."""
        if self.view.server is not None:
            return f"/mcp/servers/{self.view.server}"
        if self.view.tool_set is not None:
            return f"/mcp/sets/{self.view.tool_set}"
        return "/mcp"

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Serve until cancelled (a task of the gateway's)."""
        sessions = Sessions(self.server, self.ctx, self.service.events, self.key(),
                            security_for(self.ctx.settings.host))
        try:
            async with sessions.run(), anyio.create_task_group() as tg:
                self.sessions = sessions
                self._tg = tg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._tg = None
            self.subscriptions.close()
            self.sessions = None

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.sessions is None:
            await JSONResponse({"error": "the MCP endpoint is not running"}, status_code=503)(
                scope, receive, send
            )
            return
        await self.sessions.handle(scope, receive, send)

    # ------------------------------------------------------------------ who may see what

    def _principal(self, ctx: ServerRequestContext[Any]) -> Principal | None:
        return principal_of(ctx.request)

    async def _hidden(self, principal: Principal | None) -> dict[str, set[str]]:
        """The tools the principal's scope disables (hidden from the model, as calls to them are refused)."""
        if principal is None or principal.role is not Role.CONSUMER:
            return {}
        return await self.service.disabled_in(principal.scope or "default")

    async def _servers(self, principal: Principal | None) -> list[str]:
        """The upstream servers whose prompts and resources this caller sees: the view's one server, or
        (on ``/mcp``) every server with an offered tool the caller may see."""
        offered = await self.offered.get()
        hidden = await self._hidden(principal)
        visible = {
            tool.server for tool in offered.names(self.view).values()
            if tool.server != HOST_SERVER and tool.need.missing(principal) is None
            and tool.tool not in hidden.get(tool.server, ())
        }
        if self.view.server is not None:
            if self.view.server not in visible:
                raise MCPError(INVALID_PARAMS, f"this token may use no tool of {self.view.server}")
            return [self.view.server]
        return sorted(visible)

    def _caller(self, principal: Principal | None) -> str:
        if principal is None:
            return ANONYMOUS.user or "anonymous"
        return principal.user or principal.actor

    # ------------------------------------------------------------------ tools

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """A listed tool's ``inputSchema``, for the SDK's ``Mcp-Param-*`` header check.

        Without it the SDK runs a whole ``tools/list`` through the handler chain on every
        ``tools/call`` to find the schema. This reads the same cached offered set (refreshed every
        second by the watcher); None (not listed, or nothing read yet) skips the header check, as
        the SDK does for a tool its listing does not name, and so does a schema that declares no
        ``x-mcp-header`` (the SDK's check would walk it and find nothing to compare). Arguments are
        still validated against the stored ``inputSchema`` by the call service.
        """
        offered = self.offered.peek()
        tool = offered.names(self.view).get(name) if offered is not None else None
        return offered.header_schema(tool) if offered is not None and tool is not None else None

    async def _anonymous(self) -> bool:
        """Whether a caller without a token may use this endpoint: it offers a ``noauth`` tool and the
        setting allows anonymous callers."""
        if not self.ctx.settings.anonymous_listing:
            return False
        return any(tool.need.noauth for tool in (await self.offered.get()).names(self.view).values())

    async def _requirement(self, name: str) -> Requirement | None:
        tool = (await self.offered.get()).names(self.view).get(name)
        return tool.need if tool is not None else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if params is not None and params.cursor:
            raise MCPError(INVALID_PARAMS, "invalid cursor: toolvet lists every tool on one page")
        offered = await self.offered.get()
        principal = self._principal(ctx)
        tools = offered.listing(
            modern=is_modern(ctx.protocol_version), anonymous=principal is None, view=self.view,
            hidden=await self._hidden(principal),
        )
        if (claims := await self.federation.claims()).shared:
            # An MCP Apps tool's ui:// resource that another server claims too: the URI it is served by.
            named = offered.names(self.view)
            tools = [_with_ui(tool, claims.outward(named[tool.name].server, uri))
                     if (uri := named[tool.name].resource_uri) is not None else tool for tool in tools]
        # The list depends on who asks (noauth tools only without a token, a scope's disabled map):
        # a private cache scope.
        return types.ListToolsResult(tools=tools, ttl_ms=int(POLL_SECONDS * 1000), cache_scope="private")

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        name = params.name
        offered = (await self.offered.get()).names(self.view).get(name)
        if offered is not None:
            server, tool = offered.server, offered.tool
        elif self.view.aggregate:
            # Not offered: still asked of the call service, which says why it refuses the call.
            server, _, tool = name.partition("_")
            if not server or not tool:
                raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        else:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}")
        principal = self._principal(ctx)
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
            if state.startswith(PARKED_STATE):
                # The retry that answers what the upstream asked mid-call: the call is still running.
                conversation = self._conversations.get(state[len(PARKED_STATE):])
                if conversation is None:
                    raise MCPError(INVALID_PARAMS, "unknown request state: call the tool again")
                conversation.answer((ctx.params or {}).get("inputResponses") or {})
                return await self._turn(ctx, name, conversation, modern)
            if not state.startswith(UPSTREAM_STATE):
                # The retry of a call this endpoint asked the user about (2026-07-28 multi-round trip).
                return await self._answered(principal, server, tool, params)
            # The retry of a call whose upstream asked for input: it goes through the policy again
            # and upstream with the client's answers and the upstream's own state.
            resume = {"inputResponses": (ctx.params or {}).get("inputResponses") or {}}
            if upstream_state := state[len(UPSTREAM_STATE):]:
                resume["requestState"] = upstream_state
        if not modern and (task := asked_task()) is not None:
            resume = {"task": task}  # run as a task upstream (gateway.tasks owns the answer)
        asks = modern and _can_elicit(ctx)
        elicit = None if modern else self._elicitation(ctx)
        level = self._level(ctx)
        submit = partial(self.service.submit, principal, data, wait=self.ctx.settings.approval_wait,
                         elicit=elicit, asks_in_answer=asks, meta=_request_meta(ctx, level),
                         resume=resume, caller=_caller_identity(ctx))
        if modern and _can_answer_questions(ctx):
            # A 2026-07-28 client cannot be asked mid-call: the call runs in a task of this endpoint's,
            # and a question its upstream asks becomes an InputRequiredResult (gateway.conversation).
            # Only for a client that declared it answers such questions: any other is refused them.
            conversation = Conversation()
            relay = Relay(ctx, level, conversation=conversation)
            self._conversations[conversation.id] = conversation
            assert self._tg is not None
            self._tg.start_soon(self._converse, conversation, submit, relay)
            return await self._turn(ctx, name, conversation, modern, asks=asks)
        try:
            call = await submit(hooks=Relay(ctx, level))
        except NotFound:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        except (Forbidden, InvalidInput) as exc:
            return types.CallToolResult.model_validate(error_result(exc.message))
        except ToolvetError as exc:
            return types.CallToolResult.model_validate(error_result(f"{name}: {exc.message}"))
        return await self._render(ctx, name, call, modern, asks)

    async def _converse(self, conversation: Conversation, submit: Any, relay: Relay) -> None:
        """Run a 2026-07-28 client's call in this endpoint's task group (see :meth:`_turn`)."""
        try:
            with anyio.CancelScope() as conversation.scope:
                conversation.finish(await submit(hooks=relay))
            if conversation.scope.cancelled_caught:
                conversation.finish(failure=ToolvetError("the call was cancelled"))
        except Exception as exc:
            conversation.finish(failure=exc)
        finally:
            self._conversations.pop(conversation.id, None)

    async def _turn(
        self, ctx: ServerRequestContext[Any], name: str, conversation: Conversation, modern: bool, *, asks: bool = False
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        """The call's answer, or the questions its upstream asks first (an InputRequiredResult whose
        state names the conversation, for the client's retry)."""
        asks = conversation.asks = asks or conversation.asks
        try:
            turn = await conversation.next_turn()
        except anyio.get_cancelled_exc_class():
            if conversation.scope is not None and not conversation.waiting:
                conversation.scope.cancel()  # the client gave up on a call that asked nothing: it stops too
            raise
        except NotFound:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {name}") from None
        except (Forbidden, InvalidInput) as exc:
            return types.CallToolResult.model_validate(error_result(exc.message))
        except ToolvetError as exc:
            return types.CallToolResult.model_validate(error_result(f"{name}: {exc.message}"))
        if turn.questions is not None:
            return types.InputRequiredResult.model_validate(
                {"resultType": "input_required", "inputRequests": turn.questions, "requestState": conversation.state})
        return await self._render(ctx, name, turn.outcome, modern, asks)

    async def _render(
        self, ctx: ServerRequestContext[Any], name: str, call: CallOut, modern: bool, asks: bool
    ) -> types.CallToolResult | types.InputRequiredResult | dict[str, Any]:
        if self.tasks.created(ctx, call):
            return types.CallToolResult(content=[])  # a stand-in: the client gets the task (gateway.tasks)
        if asks and call.status is CallStatus.PENDING and call.approval is not ApprovalFloor.OPERATOR:
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
            asked = _question(ctx, raw)
            if isinstance(asked, MCPError):
                return types.CallToolResult.model_validate(error_result(f"{name}: {asked.error.message}"))
            return asked
        return await self._linked(call.server_type, outcomes.result_of(call, modern=modern))

    async def _answered(
        self, principal: Principal, server: str, tool: str, params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        """Decide (and run) the pending call named by the retry's state, by its user's answer."""
        service = self.service
        call_id = str(params.request_state)
        try:
            call = await anyio.to_thread.run_sync(service.get, principal, call_id)
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
                call = await anyio.to_thread.run_sync(service.get, principal, call_id)
        return await self._linked(call.server_type, outcomes.result_of(call, modern=True))

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

    # ------------------------------------------------------------------ prompts, resources, completions

    async def _send(self, ctx: ServerRequestContext[Any], server: str, method: str,
                    params: dict[str, Any] | None) -> Any:
        """One request to a server on the caller's session; raises UpstreamError."""
        target = await self.service.server_target(server)
        if target is None or self.service.pool is None:
            raise UpstreamError(f"no server named {server}", INVALID_PARAMS, None, f"no server named {server}")
        forwarded = dict(params or {})
        if meta := _request_meta(ctx, self._level(ctx)):
            forwarded["_meta"] = {**(forwarded.get("_meta") or {}), **meta}
        relay = Relay(ctx, self._level(ctx))
        caller = self._caller(self._principal(ctx))
        if method in SUBSCRIPTIONS:
            # Per era upstream: resources/subscribe, or the session's subscriptions/listen filter.
            await self.service.pool.subscribe(server, target, str(forwarded.get("uri")), caller=caller, hooks=relay,
                                              handshake=relay.handshake_era, on=method == "resources/subscribe")
            return {}
        return await self.service.pool.call(
            server, target, method, forwarded or None, caller=caller, hooks=relay, handshake=relay.handshake_era,
        )

    async def _upstream(
        self, ctx: ServerRequestContext[Any], server: str, method: str, params: dict[str, Any] | None,
        *, missing: int = INTERNAL_ERROR,
    ) -> Any:
        """:meth:`_send`, with the server's own JSON-RPC error passed on to the client."""
        try:
            return await self._send(ctx, server, method, params)
        except UpstreamError as exc:
            raise _passed_on(exc, missing) from None

    def _params(self, params: Any) -> dict[str, Any] | None:
        if params is None:
            return None
        dumped: dict[str, Any] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        dumped.pop("_meta", None)  # toolvet stamps its own; the caller's progress token goes on separately
        dumped.pop("cursor", None)
        return dumped or None

    async def _merged(self, ctx: ServerRequestContext[Any], key: str) -> list[dict[str, Any]]:
        return await self.federation.list(await self._servers(self._principal(ctx)), key)

    async def _routed_prompt(self, ctx: ServerRequestContext[Any], name: str) -> tuple[str, str]:
        """(server, its own name) of an offered prompt; a disabled or held one is refused, saying why."""
        routed = await self.federation.prompt(name, await self._servers(self._principal(ctx)))
        if routed is None:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")
        if routed.refusal is not None:
            raise MCPError(INVALID_PARAMS, f"Prompt {name} is not offered: {routed.refusal}")
        return routed.server, routed.name

    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        items = await self._merged(ctx, "resources")
        return types.ListResourcesResult.model_validate({"resources": items})

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        items = await self._merged(ctx, "resourceTemplates")
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": items})

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        items = await self._merged(ctx, "prompts")
        return types.ListPromptsResult.model_validate({"prompts": items})

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        server, name = await self._routed_prompt(ctx, params.name)
        forwarded = {**(self._params(params) or {}), "name": name}  # a retry's answers and state with it
        raw = await self._upstream(ctx, server, "prompts/get", forwarded)
        if (asked := _asked(ctx, raw)) is not None:
            return asked
        messages = raw.get("messages") if isinstance(raw, dict) else None
        blocks = [m.get("content") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
        if holds_links(blocks):
            self.federation.linked(server, blocks, await self.federation.claims())
        return types.GetPromptResult.model_validate(raw)

    async def _linked(self, server: str, raw: dict[str, Any]) -> dict[str, Any]:
        """A tool result whose resource links and embedded resources name them as this endpoint serves
        them (``gateway.federation``); most results hold none and are returned as they are."""
        if not holds_links(content := raw.get("content")):
            return raw
        raw = {**raw, "content": copy.deepcopy(content)}  # the call's own record keeps the server's URIs
        self.federation.linked(server, raw["content"], await self.federation.claims())
        return raw

    async def _by_uri(self, ctx: ServerRequestContext[Any], uri: str, method: str,
                      params_for: Callable[[str], dict[str, Any]]) -> tuple[str, str, Any]:
        """A URI's request, sent to the server that claims it (``gateway.federation``); returns (server, the
        URI as it wrote it, its result). ``params_for`` gives the request's params for the server's URI."""
        servers = await self._servers(self._principal(ctx))

        async def send(server: str, m: str, p: dict[str, Any] | None) -> Any:
            return await self._send(ctx, server, m, p)

        try:
            return await self.federation.for_uri(send, servers, uri, method, params_for)
        except UpstreamError as exc:
            raise _passed_on(exc, RESOURCE_NOT_FOUND) from None

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult | types.InputRequiredResult:
        uri = str(params.uri)
        if uri.startswith("ui://"):
            own, raw = await self._read_ui(ctx, uri)
        else:
            forwarded = self._params(params) or {}
            _, own, raw = await self._by_uri(ctx, uri, "resources/read", lambda u: {**forwarded, "uri": u})
        if (asked := _asked(ctx, raw)) is not None:
            return asked
        if own != uri and isinstance(raw, dict) and isinstance(contents := raw.get("contents"), list):
            # The contents of a namespaced URI name it as the client asked for it.
            raw = {**raw, "contents": [{**c, "uri": uri} if isinstance(c, dict) and c.get("uri") == own else c
                                       for c in contents]}
        return types.ReadResourceResult.model_validate(raw)

    async def _read_ui(self, ctx: ServerRequestContext[Any], uri: str) -> tuple[str, Any]:
        """An MCP Apps UI, read only for an offered tool that names it, and only by a caller who may use
        that tool: the UI of a tool that is not offered is not shown either. Returns (the URI as the
        tool's server wrote it, the result)."""
        offered = await self.offered.get()
        server, own = split_namespaced(uri) or (None, uri)
        naming = [t for t in offered.names(self.view).values()
                  if t.resource_uri == own and t.server != HOST_SERVER and server in (None, t.server)]
        if not naming:
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        if len(owners := sorted({t.server for t in naming})) > 1:
            raise ambiguous(uri, owners)
        principal = self._principal(ctx)
        usable = next((t for t in naming if t.need.missing(principal) is None), None)
        if usable is None:
            raise MCPError(INVALID_PARAMS, f"{uri} belongs to {naming[0].name}, which this token may not use")
        raw = await self._upstream(ctx, usable.server, "resources/read", {"uri": own}, missing=RESOURCE_NOT_FOUND)
        return own, raw

    async def _complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        forwarded = self._params(params) or {}
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            server, name = await self._routed_prompt(ctx, ref.name)
            forwarded["ref"] = {**forwarded["ref"], "name": name}
            raw = await self._upstream(ctx, server, "completion/complete", forwarded)
        else:
            _, _, raw = await self._by_uri(ctx, ref.uri, "completion/complete",
                                           lambda u: {**forwarded, "ref": {**forwarded["ref"], "uri": u}})
        return types.CompleteResult.model_validate(raw)

    # ------------------------------------------------------------------ logging

    def _level(self, ctx: ServerRequestContext[Any]) -> str:
        """The level of log messages this client wants relayed (handshake era: what it set; default all)."""
        if is_modern(ctx.protocol_version):
            meta = (ctx.params or {}).get("_meta")
            level = meta.get(LOG_LEVEL_META_KEY) if isinstance(meta, dict) else None
            return level if isinstance(level, str) else "emergency"
        level = self.sessions.log_level(session_id_of(ctx)) if self.sessions is not None else None
        return level or "debug"

    async def _set_log_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """A handshake-era client's log level: asked of every upstream its requests reach (kept with
        its session, so every replica relays at that level)."""
        session_id = session_id_of(ctx)
        if self.sessions is not None and session_id is not None:
            await self.sessions.set_log_level(session_id, params.level)
        return types.EmptyResult()

    # ------------------------------------------------------------------ list changes

    async def _remember_session(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Let each handshake-era session served here hear its caller's upstream sessions (resource
        updates, list changes, roots) from its first request here until this process's copy of it ends."""
        result = await call_next(ctx)
        if is_modern(ctx.protocol_version):
            return result  # 2026-07-28 requests belong to no session
        session_id = session_id_of(ctx)
        if session_id is not None and self.sessions is not None and not self.subscriptions.hears(session_id):
            self.sessions.when_ended(session_id, self.subscriptions.hear(ctx, session_id))
        return result

    async def announce(self) -> None:
        """Tell every client connected here that the tool list changed (both eras): the 2026-07-28
        listen streams open here, and the handshake-era sessions this process serves (those whose GET
        stream is here receive it)."""
        await self.subscriptions.tools_changed()
        if self.sessions is None:
            return
        async with anyio.create_task_group() as tg:
            for connection in self.sessions.connections():
                tg.start_soon(_notify, connection)


async def _notify(connection: Connection) -> None:
    with anyio.move_on_after(5):
        await connection.send_tool_list_changed()  # best effort: it never raises


def _caller_identity(ctx: ServerRequestContext[Any]) -> str:
    """Who the client is, for a call's intent (``services.call_intents``): its handshake-era session,
    or the JSON-RPC id of a 2026-07-28 request (a client that retries with the same id)."""
    if (session_id := session_id_of(ctx)) is not None:
        return f"session:{session_id}"
    return f"request:{ctx.request_id}" if ctx.request_id is not None else ""


def _question(ctx: ServerRequestContext[Any], raw: dict[str, Any]) -> types.InputRequiredResult | MCPError:
    """A 2026-07-28 upstream's ``InputRequiredResult`` as its client gets it, or the error saying why it
    cannot: it asks for something the client did not declare, or is malformed."""
    if (missing := undeclared(ctx, raw.get("inputRequests"))) is not None:
        return MCPError(INVALID_PARAMS,
                        f"the upstream asked for {missing}, which the client behind toolvet did not declare")
    try:
        return types.InputRequiredResult.model_validate(raw)
    except ValidationError as exc:
        return MCPError(INTERNAL_ERROR,
                        f"the upstream asked for input in a malformed way: {exc.errors()[0]['msg']}")


def _asked(ctx: ServerRequestContext[Any], raw: Any) -> types.InputRequiredResult | None:
    """A 2026-07-28 upstream's ``InputRequiredResult`` for a prompt or a resource, as its client gets it
    (the client's retry carries its answers and the upstream's ``requestState`` back upstream as they
    are: toolvet asks nothing of its own there); None for any other result."""
    if not is_input_required(raw):
        return None
    asked = _question(ctx, raw)
    if isinstance(asked, MCPError):
        raise asked
    return asked


def _with_ui(tool: types.Tool, uri: str) -> types.Tool:
    """``tool`` with its ``ui://`` resource named ``uri`` wherever its ``_meta`` names one (``ui.resourceUri``,
    and the older ``ui/resourceUri``, which the MCP Apps helpers write beside it); ``tool`` itself when
    it names it so already."""
    meta = dict(tool.meta or {})
    ui = meta.get("ui")
    if isinstance(ui, Mapping) and isinstance(ui.get("resourceUri"), str):
        meta["ui"] = {**ui, "resourceUri": uri}
    if isinstance(meta.get("ui/resourceUri"), str):
        meta["ui/resourceUri"] = uri
    return tool if meta == (tool.meta or {}) else tool.model_copy(update={"meta": meta})


def _passed_on(exc: UpstreamError, missing: int) -> MCPError:
    """The MCP error a client gets for an upstream failure: the server's own JSON-RPC error when it
    answered one, else ``missing`` with toolvet's description."""
    if exc.code is not None:
        return MCPError(exc.code, exc.said or exc.message, exc.data)
    return MCPError(missing, exc.message)


__all__ = ["Endpoint", "security_for"]
