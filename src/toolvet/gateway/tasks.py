"""Tasks (2025-11-25): a task-augmented ``tools/call`` forwarded, ``tasks/*`` routed to the server that made it.

A handshake-era client may ask for a ``tools/call`` to run as a task (its ``task`` param). The call
goes through the call service like any other (policy, approvals, the call record: ``done``, its
result the upstream's ``CreateTaskResult`` with the task id), with ``task`` sent upstream; the client
gets the upstream's ``CreateTaskResult``. The SDK's server validates a ``tools/call`` result
as a ``CallToolResult`` (it has no tasks), so a middleware owns the answer of such a call.

Each task id is remembered for the caller whose call made it, with the server that made it
(:class:`TaskRoutes`, bounded): ``tasks/get``, ``tasks/result`` and ``tasks/cancel`` go to that
server on the caller's own session, and ``tasks/list`` lists the caller's tasks from the servers
that hold them. A task id another caller made is unknown to this one. What the server sends while
``tasks/result`` waits (an elicitation the task needs) is relayed like a call's. The 2026-07-28 era
has no tasks in its core protocol: its clients are not offered tools that can only run as one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Final

import mcp.types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from toolvet.gateway.offered import is_modern
from toolvet.gateway.outcomes import SERVER_INFO_KEY
from toolvet.schemas.calls import CallOut, CallStatus
from toolvet.upstream.protocol import is_task_created

__all__ = ["CAPABILITY", "MAX_CALLERS", "MAX_TASKS", "TaskRoutes", "Tasks", "asked_task"]

#: Task ids remembered per caller, and callers remembered (the oldest go first).
MAX_TASKS: Final = 1000
MAX_CALLERS: Final = 10_000
#: What an endpoint that relays tasks declares to handshake-era clients.
CAPABILITY: Final = types.ServerTasksCapability(
    list=types.TasksListCapability(), cancel=types.TasksCancelCapability(),
    requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability())),
)

#: Sends one request to a server on the caller's session, passing the server's own errors on.
Send = Callable[[ServerRequestContext[Any], str, str, dict[str, Any] | None], Awaitable[Any]]


@dataclass
class _Asked:
    """A task-augmented call in flight: the client's ``task`` param, and the task it made."""

    task: dict[str, Any]
    created: dict[str, Any] | None = None


_ASKED: ContextVar[_Asked | None] = ContextVar("toolvet_task_call", default=None)


def asked_task() -> dict[str, Any] | None:
    """The ``task`` param of the ``tools/call`` being served, when its client asked for a task."""
    asked = _ASKED.get()
    return asked.task if asked is not None else None


@dataclass
class TaskRoutes:
    """Which server made each of a caller's tasks (bounded per caller and in callers)."""

    _by_caller: OrderedDict[str, OrderedDict[str, str]] = field(default_factory=OrderedDict)

    def remember(self, caller: str, task_id: str, server: str) -> None:
        tasks = self._by_caller.setdefault(caller, OrderedDict())
        self._by_caller.move_to_end(caller)
        while len(self._by_caller) > MAX_CALLERS:
            self._by_caller.popitem(last=False)
        tasks[task_id] = server
        while len(tasks) > MAX_TASKS:
            tasks.popitem(last=False)

    def owner(self, caller: str, task_id: str) -> str | None:
        tasks = self._by_caller.get(caller)
        return tasks.get(task_id) if tasks is not None else None

    def of(self, caller: str) -> dict[str, str]:
        """The caller's task ids, each with its server."""
        return dict(self._by_caller.get(caller, {}))


def _outward(raw: Any) -> Any:
    """An upstream's answer as toolvet gives it: without the upstream's identity stamp."""
    if isinstance(raw, dict) and isinstance(meta := raw.get("_meta"), dict) and SERVER_INFO_KEY in meta:
        return {**raw, "_meta": {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}}
    return raw


@dataclass
class Tasks:
    """One endpoint's tasks (see the module docstring)."""

    routes: TaskRoutes
    caller: Callable[[ServerRequestContext[Any]], str]
    send: Send

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Own the answer of a task-augmented ``tools/call`` (the SDK would validate it as a CallToolResult)."""
        task = (ctx.params or {}).get("task")
        if ctx.method != "tools/call" or is_modern(ctx.protocol_version) or not isinstance(task, dict):
            return await call_next(ctx)
        asked = _Asked(dict(task))
        token = _ASKED.set(asked)
        try:
            result = await call_next(ctx)
        finally:
            _ASKED.reset(token)
        return asked.created if asked.created is not None else result

    def created(self, ctx: ServerRequestContext[Any], call: CallOut) -> bool:
        """Whether ``call`` made a task upstream: then its route is remembered and the upstream's
        ``CreateTaskResult`` is what the client gets (:meth:`middleware`)."""
        asked = _ASKED.get()
        if asked is None or call.status is not CallStatus.DONE or not is_task_created(call.result):
            return False
        assert call.result is not None
        self.routes.remember(self.caller(ctx), str(call.result["task"]["taskId"]), call.server_type)
        asked.created = _outward(call.result)
        return True

    async def _routed(self, ctx: ServerRequestContext[Any], method: str, params: Any) -> dict[str, Any]:
        task_id = str(params.task_id)
        server = self.routes.owner(self.caller(ctx), task_id)
        if server is None:
            raise MCPError(INVALID_PARAMS, f"Unknown task: {task_id[:100]}")
        raw = await self.send(ctx, server, method, {"taskId": task_id})
        if not isinstance(raw, dict):
            raise MCPError(INVALID_PARAMS, f"{server} answered {method} with no object")
        result: dict[str, Any] = _outward(raw)
        return result

    async def get(self, ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        return await self._routed(ctx, "tasks/get", params)

    async def result(
        self, ctx: ServerRequestContext[Any], params: types.GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        return await self._routed(ctx, "tasks/result", params)

    async def cancel(self, ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams) -> dict[str, Any]:
        return await self._routed(ctx, "tasks/cancel", params)

    async def list(self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams) -> dict[str, Any]:
        """The caller's tasks, from each server that made one (only those this caller made)."""
        mine = self.routes.of(self.caller(ctx))
        listed: list[Any] = []
        for server in sorted(set(mine.values())):
            raw = await self.send(ctx, server, "tasks/list", None)
            tasks = raw.get("tasks") if isinstance(raw, dict) else None
            listed.extend(task for task in tasks or ()
                          if isinstance(task, dict) and mine.get(str(task.get("taskId"))) == server)
        return {"tasks": listed}

    def register(self, server: Any) -> None:
        """Serve ``tasks/*`` on an SDK low-level server."""
        server.add_request_handler("tasks/get", types.GetTaskRequestParams, self.get)
        server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self.result)
        server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self.cancel)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self.list)
        server.middleware.append(self.middleware)
