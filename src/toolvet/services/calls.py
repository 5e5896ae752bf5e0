"""Calls through toolvet, one service for both doors (``POST /api/v1/calls`` and MCP ``tools/call``),
as docs/gateway.md#calls describes.

A call is refused (unknown, not offered, disabled in the scope), or its arguments are checked against
the tool's ``inputSchema`` before anything goes upstream, then the approval decision runs: an
auto-allowed call is forwarded at once; any other becomes a pending call (stored, so it survives a
restart, and published as a ``tool-call-pending`` event) that an approver approves or denies, unless
the caller can ask its user directly (MCP elicitation). The hot path reads the registry through short
caches; a call's row and audit entry are committed before its answer is sent (calls that finish
together share one transaction).
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, Literal

import anyio
import anyio.to_thread
import httpx2
from anyio.abc import TaskStatus
from jsonschema import Draft202012Validator
from sqlalchemy import select

from toolvet.cache import READ_TTL, Loader
from toolvet.db.models import Server
from toolvet.db.types import utcnow
from toolvet.domain.names import HOST_SERVER as HOST_SERVER  # where the gateway has imported it from
from toolvet.domain.policy import Decision, ToolFacts
from toolvet.errors import Conflict, Forbidden, InvalidInput, NotFound, UpstreamError
from toolvet.schemas.calls import TERMINAL, CallCreate, CallOut, CallStatus
from toolvet.schemas.common import Page
from toolvet.services import access, call_intents, call_store, metrics, preferences
from toolvet.services.auth import Permission, Principal, Role
from toolvet.services.call_journal import CallJournal
from toolvet.services.context import Context
from toolvet.services.discovery import target_of, upstream_guard
from toolvet.services.events import CACHE, CALLS, EventBus
from toolvet.services.policy_facts import PolicyFactsCache, read_tool
from toolvet.upstream.errors import RpcError
from toolvet.upstream.http import http_client
from toolvet.upstream.params import ParamMap, param_headers, param_map
from toolvet.upstream.pool import UpstreamPool
from toolvet.upstream.protocol import NO_HOOKS, RELAYED_CAPABILITIES, Hooks, is_input_required, is_task_created
from toolvet.upstream.target import Target

log = logging.getLogger("toolvet.calls")

#: What a call's user is answered when they decline it (asked by elicitation, in either era).
USER_DECLINED = "the user declined this call"
#: How often the writer moves journalled call records into the database.
WRITE_SECONDS = 0.25
#: Seconds between reads of a waiting call's row when no decision event woke it (a fallback only).
WAIT_POLL = 5.0
#: How many times one call answers an upstream's request for input before giving up.
INPUT_ROUNDS = 8

Elicit = Callable[[CallOut], Awaitable[Literal["allow", "always", "deny"] | None]]
HostHandler = Callable[[Principal, dict[str, Any]], Awaitable[dict[str, Any]]]


#: How a recorded call's status is counted (``toolvet_calls_total``'s outcome).
_OUTCOMES = {CallStatus.DONE: metrics.RAN, CallStatus.FAILED: metrics.UPSTREAM_FAILURE,
             CallStatus.DENIED: metrics.DENIED, CallStatus.INVALID: metrics.INVALID,
             CallStatus.CANCELLED: metrics.CANCELLED}


@dataclass(frozen=True)
class HostTool:
    """One of toolvet's own operations offered beside upstream tools (serverType ``toolvet``)."""

    definition: dict[str, Any]  # the MCP tool object, as listed
    handler: HostHandler
    require_approval: bool
    fingerprint: str


@dataclass(frozen=True, slots=True)
class _Snapshot:
    facts: ToolFacts
    target: Target | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    need: access.Requirement
    #: Which arguments go upstream again as ``Mcp-Param-*`` headers (from the stored inputSchema).
    params: ParamMap


def error_result(text: str) -> dict[str, Any]:
    """An MCP ``CallToolResult`` that tells the model what went wrong, so it can correct itself."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _field_path(error: Any) -> str:
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return "arguments" + path


@dataclass
class CallService:
    """The per-process engine behind both doors. Use as ``async with CallService(ctx) as calls``."""

    ctx: Context
    host_tools: dict[str, HostTool] = field(default_factory=dict)
    pool: UpstreamPool | None = None
    # What the registry said, for READ_TTL (changes made in this process drop the entries at once).
    _tools: Loader[tuple[str, str], _Snapshot | None] = field(init=False)
    _policy: PolicyFactsCache = field(init=False)
    _servers: Loader[str, tuple[Target | None, dict[str, Any] | None]] = field(init=False)
    _validators: dict[tuple[str, str], Draft202012Validator] = field(default_factory=dict)
    _waiters: dict[str, anyio.Event] = field(default_factory=dict)
    _audit: list[call_store.Record] = field(default_factory=list)
    _http: httpx2.AsyncClient | None = None
    _pool_run: Any = None
    _journal: CallJournal = field(init=False)
    _tg: Any = None

    def __post_init__(self) -> None:
        self._policy = PolicyFactsCache(self.ctx, READ_TTL)
        self._tools = Loader(self._load_snapshot)
        self._servers = Loader(self._load_server)
        self._bus_run: Any = None

    @property
    def events(self) -> EventBus:
        """The process's event bus (``Context.bus``): call events go out on it, decisions come in."""
        return self.ctx.bus

    async def __aenter__(self) -> CallService:
        s = self.ctx.settings
        self._bus_run = self.ctx.bus.running()  # entered first, left last: every part below publishes
        await self._bus_run.__aenter__()
        guard = upstream_guard(self.ctx)
        self._http = http_client(timeout=httpx2.Timeout(s.call_timeout, connect=s.connect_timeout), guard=guard)
        self.pool = UpstreamPool(self._http, connect_timeout=s.connect_timeout, call_timeout=s.call_timeout,
                                 per_server=s.upstream_concurrency, capabilities=dict(RELAYED_CAPABILITIES),
                                 max_event_bytes=s.max_event_bytes, max_depth=s.max_json_depth, guard=guard)
        self._journal = CallJournal(self.ctx)
        # What an earlier process journalled and did not move in (it was killed, or the database was away).
        await anyio.to_thread.run_sync(self._journal.recover)
        self._pool_run = self.pool.run()
        await self._pool_run.__aenter__()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._write_loop)
        await self._tg.start(self._follow_decisions)
        await self._tg.start(self._follow_changes)
        self.ctx.calls = self
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        await self._flush()
        self._journal.close()
        if self._pool_run is not None:
            await self._pool_run.__aexit__(None, None, None)
        if self._http is not None:
            await self._http.aclose()
        if self._bus_run is not None:
            await self._bus_run.__aexit__(None, None, None)
        self.ctx.calls = None

    # ---------------------------------------------------------------- the bus

    async def _follow_decisions(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """A decision made anywhere (this process or another on the database) wakes the call waiting
        for it here at once."""
        async with self.events.subscribe(CALLS) as inbox:
            task_status.started()
            async for event in inbox:
                if event.get("type") == "tool-call-decided" and isinstance(call_id := event.get("callId"), str):
                    self._wake(call_id)

    async def _follow_changes(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """An operator's edit or a token's revocation committed anywhere: what was cached goes now."""
        async with self.events.subscribe(CACHE) as inbox:
            task_status.started()
            async for event in inbox:
                if event.get("type") == "changed":
                    self.forget()
                    what = event.get("what") or ()
                    if "token" in what or "*" in what:
                        self.ctx.principals.clear()

    # ---------------------------------------------------------------- reading the registry, cached

    def forget(self) -> None:
        """Drop every cached read (called after this process changes tools or preferences)."""
        self._tools.clear()
        self._policy.forget()
        self._servers.clear()

    async def _snapshot(self, server: str, tool: str) -> _Snapshot | None:
        """What a call of the tool needs to know, cached; a miss reads the registry in a worker thread,
        never on the event loop that serves every MCP session."""
        return await self._tools.get((server, tool))

    async def _load_snapshot(self, key: tuple[str, str]) -> _Snapshot | None:
        return await anyio.to_thread.run_sync(self._read_snapshot, *key)

    def _read_snapshot(self, server_name: str, tool_name: str) -> _Snapshot | None:
        if server_name == HOST_SERVER and tool_name not in self.host_tools:
            return None  # this service runs no host tools (it was started without the gateway)
        with self.ctx.db.transaction() as session:
            record = read_tool(session, server_name, tool_name)
            if record is None:
                return None
            target = None if record.server is None else target_of(self.ctx, record.server)
            return _Snapshot(record.facts, target, record.input_schema, record.output_schema, record.need,
                             param_map(record.input_schema))

    async def disabled_in(self, scope: str) -> dict[str, set[str]]:
        """The scope's disabled map (server -> tool names), read like a call's (cached, off the loop)."""
        return {server: set(names) for server, names in (await self._policy.scope(scope)).disabled.items()}

    async def server_target(self, server: str) -> Target | None:
        """Where an enabled server is reached (cached like a call's read); None when there is none."""
        return (await self._server_row(server))[0]

    async def server_capabilities(self, server: str) -> dict[str, Any] | None:
        """What an enabled server declared when it was last discovered ({} if never); None if no such server."""
        target, capabilities = await self._server_row(server)
        return None if target is None else (capabilities or {})

    async def _server_row(self, server: str) -> tuple[Target | None, dict[str, Any] | None]:
        return await self._servers.get(server)

    async def _load_server(self, server: str) -> tuple[Target | None, dict[str, Any] | None]:
        return await anyio.to_thread.run_sync(self._read_server, server)

    def _read_server(self, name: str) -> tuple[Target | None, dict[str, Any] | None]:
        with self.ctx.db.transaction() as session:
            row = session.scalar(select(Server).where(Server.name == name, Server.enabled.is_(True)))
            if row is None:
                return None, None
            return target_of(self.ctx, row), row.capabilities

    async def decision(self, user: str, scope: str, snap: _Snapshot) -> Decision:
        """The policy's decision for this user and scope, from the same policy facts ``/decide`` reads
        (the user's and scope's parts cached, read off the event loop on a miss)."""
        return (await self._policy.facts(user, scope, snap.facts)).decide()

    def validator(self, fingerprint: str, kind: str, schema: dict[str, Any]) -> Draft202012Validator:
        key = (fingerprint, kind)
        validator = self._validators.get(key)
        if validator is None:
            if len(self._validators) > 10_000:
                self._validators.clear()
            validator = self._validators[key] = Draft202012Validator(schema)
        return validator

    # ---------------------------------------------------------------- the call path

    def _who(self, principal: Principal, data: CallCreate) -> tuple[str, str]:
        if principal.role is Role.CONSUMER:
            user, scope = principal.user or "", principal.scope or "default"
            if data.user not in (None, user) or data.scope not in (None, scope):
                raise Forbidden("a consumer token calls for its own user and scope only")
            return user, scope
        principal.require(Permission.APPROVE_CALLS)
        if not data.user:
            raise InvalidInput("an operator's call must name the user it is made for", "user")
        return data.user, data.scope or "default"

    async def submit(self, principal: Principal | None, data: CallCreate, *, wait: float = 0.0,
                     elicit: Elicit | None = None, asks_in_answer: bool = False, hooks: Hooks = NO_HOOKS,
                     meta: dict[str, Any] | None = None, resume: dict[str, Any] | None = None,
                     caller: str = "") -> CallOut:
        """Run a call through the policy: refused (raises Forbidden/NotFound), invalid, run, or pending.

        ``principal`` None is a caller without a token: it calls as the anonymous consumer, a ``noauth``
        tool only, where anonymous callers are let in (Unauthenticated otherwise). Every caller's token
        is checked against the tool's ``securitySchemes`` (``services.access``) before the policy runs.

        ``wait`` bounds how long to wait for an approver when the call is pending; ``elicit`` asks the
        caller's user directly (MCP elicitation) and replaces the pending route when it answers;
        ``asks_in_answer`` says the caller asks its user in its answer instead (so a pending call returns
        at once). Neither applies under the ``operator`` approval floor: its user may not approve it. When
        the call runs in this request, ``meta`` (the client's ``_meta``: its progress token) goes
        upstream with it and what the upstream sends meanwhile goes to ``hooks``; ``resume`` carries a
        retry's ``inputResponses``/``requestState`` for an upstream that asked for input. ``caller``
        names the client's own identity (its MCP session), part of the call's intent: a retry of a
        pending call with the same intent resumes it (``services.call_intents``).
        """
        started = time.perf_counter()
        label = f"{data.server_type}/{data.tool_name}"
        if principal is None:
            # Who has no token learns no more than that one is needed, whether or not the tool exists.
            found = await self._snapshot(data.server_type, data.tool_name)
            principal = access.admit(None, found.need if found is not None else access.NEEDS_TOKEN, label,
                                     anonymous=self.ctx.settings.anonymous_listing)
        user, scope = self._who(principal, data)
        call_store.check_arguments(self.ctx, data.arguments)  # both doors: REST and MCP
        snap = await self._snapshot(data.server_type, data.tool_name)
        if snap is None:
            raise NotFound(f"tool {label} not found")
        access.check(principal, snap.need, label)
        decision = await self.decision(user, scope, snap)
        if decision.refused:
            metrics.call_outcome(data.server_type, data.tool_name, metrics.REFUSED)
            raise Forbidden(f"call to {label} refused: " + "; ".join(decision.reasons))
        granted = access.granted(snap.need)
        now = utcnow()
        call = CallOut(id=uuid.uuid4().hex, user=user, scope=scope, server_type=data.server_type,
                       tool_name=data.tool_name, arguments=data.arguments, fingerprint=snap.facts.fingerprint,
                       status=CallStatus.APPROVED, auto_allow=decision.auto_allow,
                       reasons=[granted, *decision.reasons] if granted else list(decision.reasons),
                       created_at=now, expires_at=None, decided_by=None, decided_at=None, allow_always=False,
                       approval=decision.approval, result=None, error=None)
        validator = self.validator(snap.facts.fingerprint, "in", snap.input_schema)
        if not validator.is_valid(data.arguments):  # the errors are collected (and sorted) only when invalid
            problems = sorted(validator.iter_errors(data.arguments), key=lambda e: list(e.absolute_path))
            text = "; ".join(f"{_field_path(e)}: {e.message}" for e in problems[:5])
            call = call.model_copy(update={"status": CallStatus.INVALID, "error": text,
                                           "result": error_result(f"invalid arguments: {text}")})
            await self._record(principal, call, "call.invalid", store=True)
            return call
        if decision.auto_allow:
            return await self._run(principal, call, snap, action="call.run", hooks=hooks, meta=meta,
                                   resume=resume, started=started)
        if decision.operator_only:
            elicit, asks_in_answer = None, False  # only an operator or an admin approves it: never its user
        if asks_in_answer:
            wait = 0.0
        if elicit is not None:
            answer = await elicit(call)
            if answer is not None:
                if answer == "deny":
                    call = call.model_copy(update={"status": CallStatus.DENIED, "decided_by": f"user:{user}",
                                                   "decided_at": utcnow(),
                                                   "result": error_result(USER_DECLINED)})
                    await self._record(principal, call, "call.deny", store=True)
                    return call
                call = call.model_copy(update={"decided_by": f"user:{user}", "decided_at": utcnow(),
                                               "allow_always": answer == "always"})
                if answer == "always":
                    await anyio.to_thread.run_sync(self._allow_always, principal, call)
                return await self._run(principal, call, snap, action="call.approve", hooks=hooks, meta=meta,
                                       resume=resume)
        pending = call.model_copy(update={
            "status": CallStatus.PENDING,
            "expires_at": now + timedelta(seconds=self.ctx.settings.approval_ttl)})
        intent = call_intents.digest(principal, pending, caller) if caller else None
        stored = await anyio.to_thread.run_sync(partial(call_store.store_pending, self.ctx, principal, pending,
                                                        intent, waits=wait > 0))
        if stored.id != pending.id:
            # A retry of a call already made (its caller's replica died, or it asked again): no second
            # call; it waits on the first, or collects the outcome nobody was given.
            log.info("call %s repeats pending call %s: resumed", pending.id, stored.id)
            if stored.status in TERMINAL or wait <= 0:
                return stored
        else:
            metrics.call_outcome(pending.server_type, pending.tool_name, metrics.PENDING)
            self.events.publish({"type": "tool-call-pending", "callId": pending.id,
                                 "serverType": pending.server_type, "toolName": pending.tool_name,
                                 "arguments": pending.arguments, "autoAllow": False, "serverExecuted": True,
                                 "user": user, "scope": scope})
            if wait <= 0:
                return pending
        return await self._wait(stored.id, wait)

    async def _wait(self, call_id: str, wait: float) -> CallOut:
        """Wait (at most ``wait`` seconds) for a pending call's outcome, saying now and then that this
        process still waits (a call whose waiter stops saying so is orphaned)."""
        event = self._waiters.setdefault(call_id, anyio.Event())
        said = -math.inf  # said at once: a call resumed by a retry is no longer orphaned
        try:
            with anyio.move_on_after(wait):
                while True:
                    # Woken at once by the decision's event, from this process or another; the row is
                    # read again now and then too, in case that event was lost (a bus reconnecting).
                    with anyio.move_on_after(WAIT_POLL):
                        await event.wait()
                    current = await anyio.to_thread.run_sync(self._load, call_id)
                    if current.status in TERMINAL:
                        await anyio.to_thread.run_sync(call_store.delivered, self.ctx, call_id)
                        return current
                    if time.monotonic() - said > call_intents.HEARTBEAT_SECONDS:
                        said = time.monotonic()
                        await anyio.to_thread.run_sync(call_store.heartbeat, self.ctx, call_id)
                    event = self._waiters.setdefault(call_id, anyio.Event())
            return await anyio.to_thread.run_sync(self._load, call_id)
        finally:
            self._waiters.pop(call_id, None)

    async def _run(self, principal: Principal, call: CallOut, snap: _Snapshot, *, action: str,
                   stored: bool = False, hooks: Hooks = NO_HOOKS, meta: dict[str, Any] | None = None,
                   resume: dict[str, Any] | None = None, started: float | None = None) -> CallOut:
        started = time.perf_counter() if started is None else started
        spent = [0.0]  # seconds in the upstream's requests
        try:
            result = await self._execute(principal, call, snap, hooks, meta, resume, spent)
            status, error = CallStatus.DONE, None
        except anyio.get_cancelled_exc_class():
            # The caller gave up (an MCP client's cancellation, a closed connection): the upstream was
            # told to stop; the call is still recorded, with its audit entry.
            cancelled = call.model_copy(update={"status": CallStatus.CANCELLED, "error": "cancelled by the caller"})
            with anyio.CancelScope(shield=True):
                if stored:
                    await anyio.to_thread.run_sync(self._finish, cancelled)
                await self._record(principal, cancelled, "call.cancel", store=not stored)
            raise
        except UpstreamError as exc:
            result, status, error = error_result(f"upstream failure: {exc.message}"), CallStatus.FAILED, exc.message
        call = call.model_copy(update={"status": status, "result": result, "error": error})
        if stored:
            await anyio.to_thread.run_sync(self._finish, call)
            await self._record(principal, call, action, store=False)
        else:
            await self._record(principal, call, action, store=True)
        metrics.call_latency(call.server_type, time.perf_counter() - started - spent[0], spent[0])
        return call

    async def _execute(self, principal: Principal, call: CallOut, snap: _Snapshot, hooks: Hooks = NO_HOOKS,
                       meta: dict[str, Any] | None = None, resume: dict[str, Any] | None = None,
                       spent: list[float] | None = None) -> dict[str, Any]:
        spent = [0.0] if spent is None else spent
        if snap.target is None:
            host = self.host_tools[call.tool_name]
            result = await host.handler(principal, call.arguments)
        else:
            assert self.pool is not None
            params: dict[str, Any] = {"name": call.tool_name, "arguments": call.arguments}
            if meta:
                params["_meta"] = meta
            if resume:
                params.update(resume)
            # A handshake-era caller's request goes upstream in that era, so the server behaves as it
            # would to that client, except for a tool only the 2026-07-28 era can express (an output
            # schema that is not an object): its result comes in that era and is adapted for the
            # caller, as its listing was.
            handshake = hooks.handshake_era and (snap.output_schema is None
                                                 or snap.output_schema.get("type") == "object")
            headers = param_headers(snap.params, call.arguments)
            # One upstream session per user the call is made for: a stateful server's session state
            # (log level, subscriptions) never crosses from one user to another.
            result = await self._forward(spent, call.server_type, snap.target, params, call.user, hooks, handshake,
                                         headers)
            for _ in range(INPUT_ROUNDS):
                # The upstream needs input first (2026-07-28): answered through the hooks and sent
                # again, or (None) the result goes to the caller, whose client retries.
                if not is_input_required(result):
                    break
                try:
                    responses = await hooks.input_required(result)
                except RpcError as exc:  # the caller could not give the input: the call cannot go on
                    raise UpstreamError(f"{call.server_type}: {exc}") from None
                if responses is None:
                    break
                params["inputResponses"] = responses
                if isinstance(state := result.get("requestState"), str):
                    params["requestState"] = state
                else:
                    params.pop("requestState", None)
                result = await self._forward(spent, call.server_type, snap.target, params, call.user, hooks,
                                             handshake, headers)
        if not isinstance(result, dict):
            raise UpstreamError(f"{call.server_type}: tools/call result is not an object")
        if is_input_required(result) or is_task_created(result):
            return result  # not a tool's result (yet): no output schema applies
        if snap.output_schema is not None and not result.get("isError"):
            if "structuredContent" not in result:
                raise UpstreamError(f"{call.server_type}/{call.tool_name} declares an outputSchema but returned "
                                    "no structuredContent")
            validator = self.validator(snap.facts.fingerprint, "out", snap.output_schema)
            if not validator.is_valid(result["structuredContent"]):
                errors = list(validator.iter_errors(result["structuredContent"]))
                raise UpstreamError(f"{call.server_type}/{call.tool_name} returned structuredContent that breaks "
                                    f"its outputSchema: {errors[0].message}")
        return result

    async def _forward(self, spent: list[float], server: str, target: Target, params: dict[str, Any], caller: str,
                       hooks: Hooks, handshake: bool, headers: dict[str, str]) -> Any:
        """One ``tools/call`` through the pool, its time added to ``spent[0]`` (the upstream's share);
        ``headers`` are its ``Mcp-Param-*`` (sent only in the 2026-07-28 era)."""
        assert self.pool is not None
        start = time.perf_counter()
        try:
            return await self.pool.call(server, target, "tools/call", params, caller=caller, hooks=hooks,
                                        handshake=handshake, headers=headers)
        finally:
            spent[0] += time.perf_counter() - start

    # ---------------------------------------------------------------- approvals

    async def approve(self, principal: Principal, call_id: str, *, allow_always: bool = False) -> CallOut:
        """Approve a pending call and run it; unknown, expired or decided calls are errors, and so is a
        call of a host tool in a process that runs none (``toolvet call approve``): it stays pending."""
        if not self.host_tools and (await anyio.to_thread.run_sync(self._load, call_id)).server_type == HOST_SERVER:
            raise Conflict(f"call {call_id} is of one of toolvet's own tools: approve it on the running toolvet "
                           "server (POST /api/v1/calls/{id}/approve or the console's Pending calls page)")
        started = time.perf_counter()
        call = await anyio.to_thread.run_sync(self._decide_pending, principal, call_id, CallStatus.APPROVED,
                                              allow_always)
        if allow_always:
            await anyio.to_thread.run_sync(self._allow_always, principal, call)
        self._wake(call_id)
        snap = await self._snapshot(call.server_type, call.tool_name)
        if snap is None or snap.facts.fingerprint != call.fingerprint:
            # The tool changed (or went) between the request and the approval: what was approved is gone.
            call = call.model_copy(update={"status": CallStatus.FAILED, "error": "the tool's definition changed "
                                           "after the call was made; call it again",
                                           "result": error_result("the tool changed after this call was made")})
            await anyio.to_thread.run_sync(self._finish, call)
        elif not access.still_holds(snap.need, call.user, call.reasons):
            # The scopes that count are those of the token that made the call, checked when it was made;
            # the tool's securitySchemes (outside its fingerprint) changed since, so that check is void.
            call = call.model_copy(update={"status": CallStatus.FAILED, "error": "the tool's securitySchemes "
                                           "changed after the call was made; call it again",
                                           "result": error_result("the tool's access rule changed after this "
                                                                  "call was made")})
            await anyio.to_thread.run_sync(self._finish, call)
        else:
            call = await self._run(principal, call.model_copy(update={"status": CallStatus.RUNNING}), snap,
                                   action="call.run", stored=True, started=started)
        self._wake(call_id)
        self.events.publish({"type": "tool-call-decided", "callId": call_id, "status": call.status.value})
        return call

    async def deny(self, principal: Principal, call_id: str) -> CallOut:
        """Deny a pending call; unknown, expired or decided calls are errors."""
        call = await anyio.to_thread.run_sync(self._decide_pending, principal, call_id, CallStatus.DENIED, False)
        metrics.call_outcome(call.server_type, call.tool_name, metrics.DENIED)
        self._wake(call_id)
        self.events.publish({"type": "tool-call-decided", "callId": call_id, "status": call.status.value})
        return call

    def _wake(self, call_id: str) -> None:
        event = self._waiters.pop(call_id, None)
        if event is not None:
            event.set()

    # ---------------------------------------------------------------- records (services.call_store)

    def _load(self, call_id: str) -> CallOut:
        return call_store.load(self.ctx, call_id)

    def _decide_pending(self, principal: Principal, call_id: str, status: CallStatus, allow_always: bool) -> CallOut:
        return call_store.decide_pending(self.ctx, principal, call_id, status, allow_always)

    def _finish(self, call: CallOut) -> None:
        call_store.finish(self.ctx, call)

    def _allow_always(self, principal: Principal, call: CallOut) -> None:
        preferences.add_always_allow(self.ctx, principal, call.scope, call.server_type, call.tool_name,
                                     call.fingerprint)
        self._policy.forget(call.scope)

    async def _record(self, principal: Principal, call: CallOut, action: str, *, store: bool) -> None:
        """Keep the call's audit entry (and its row, with ``store``) before the caller answers: written
        to the call journal at once (``services.call_journal``), moved into the database by the writer
        a fraction of a second later. Where the journal cannot be written, the records are committed to
        the database before the answer instead."""
        record = call_store.stored_record(self.ctx, principal, call, action, store=store)
        if (outcome := _OUTCOMES.get(call.status)) is not None:
            metrics.call_outcome(call.server_type, call.tool_name, outcome)
        try:
            self._journal.append([record])
        except OSError as exc:
            log.warning("call journal not written (%s): committing the call's records first", exc)
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(call_store.write_records, self.ctx, [record])
            return
        self._audit.append(record)

    async def _write_loop(self) -> None:
        moved_in = time.monotonic()
        while True:
            await anyio.sleep(WRITE_SECONDS)
            if self.pool is not None:
                metrics.pool_sessions(self.pool.session_counts())
            with anyio.CancelScope(shield=True):
                await self._flush()
                if time.monotonic() - moved_in > 5.0:
                    # Segments whose commit failed (the database was busy or away): again. Looked for
                    # every 5 s, not at every pass of the loop once 5 s have gone (a directory listing).
                    moved_in = time.monotonic()
                    for segment in self._journal.leftovers():
                        await anyio.to_thread.run_sync(self._journal.move_in, segment)

    async def _flush(self) -> None:
        """Move the journalled records into the database: the journal sealed on the loop (so records
        of calls answered meanwhile start a fresh one), the batch committed in a worker thread, the
        segment deleted once the batch is in."""
        batch, self._audit = self._audit, []
        if not batch:
            return
        segment = self._journal.seal()
        try:
            await anyio.to_thread.run_sync(call_store.write_records, self.ctx, batch)
        except Exception as exc:
            log.warning("call records wait in the journal (%s)", str(exc).splitlines()[0])
            return
        if segment is not None:
            segment.unlink(missing_ok=True)

    # ---------------------------------------------------------------- reading calls

    def get(self, principal: Principal, call_id: str) -> CallOut:
        return call_store.get(self.ctx, principal, call_id)

    def list(self, principal: Principal, *, status: str | None = "pending", server: str | None = None,
             tool: str | None = None, limit: int = 100, offset: int = 0, q: str = "",
             descending: bool = True) -> Page[CallOut]:
        """Calls newest first (``call_store.list_calls``); expired pending calls are marked expired."""
        return call_store.list_calls(self.ctx, principal, status=status, server=server, tool=tool, limit=limit,
                                     offset=offset, q=q, descending=descending)


# Module-level doors for the console and the REST API: the process's running CallService.

def service(ctx: Context) -> CallService:
    if ctx.calls is None:
        raise Conflict("calls are served only by a running toolvet server (toolvet serve)")
    return ctx.calls


def list_calls(ctx: Context, principal: Principal, *, status: str | None = "pending", server: str | None = None,
               tool: str | None = None, limit: int = 100, offset: int = 0, q: str = "",
               descending: bool = True) -> Page[CallOut]:
    return service(ctx).list(principal, status=status, server=server, tool=tool, limit=limit, offset=offset, q=q,
                             descending=descending)


async def approve_call(ctx: Context, principal: Principal, call_id: str, *, allow_always: bool = False) -> CallOut:
    return await service(ctx).approve(principal, call_id, allow_always=allow_always)


async def deny_call(ctx: Context, principal: Principal, call_id: str) -> CallOut:
    return await service(ctx).deny(principal, call_id)


