"""What an upstream sends while one forwarded call runs, relayed to the client that made the call.

A :class:`Relay` is the upstream request's :class:`~toolvet.upstream.protocol.Hooks`, built from the
SDK's context of the client's request:

- ``notifications/progress`` goes to the client as progress of its own request (the client's
  ``progressToken`` went upstream with the call, so the upstream reports against it);
- ``notifications/message`` (logging) goes to the client on the same request's stream;
- ``elicitation/create``, ``sampling/createMessage`` and ``roots/list`` are asked of the client when
  it declared the capability (a 2026-07-28 client by an ``InputRequiredResult``, a handshake-era one
  on its session), and refused with a message that says why otherwise;
- ``ping`` is answered here; everything else is refused.

The answer the client gives is validated by the SDK's models before it goes back upstream.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import INVALID_PARAMS, METHOD_NOT_FOUND
from pydantic import ValidationError

from toolvet.gateway.conversation import Conversation
from toolvet.gateway.offered import is_modern
from toolvet.upstream.errors import RpcError
from toolvet.upstream.protocol import Hooks

__all__ = ["Relay", "declared", "undeclared"]

log = logging.getLogger("toolvet.gateway")

_ASKED: Final[dict[str, tuple[str, type[Any], type[Any]]]] = {
    "elicitation/create": ("elicitation", types.ElicitRequest, types.ElicitResult),
    "sampling/createMessage": ("sampling", types.CreateMessageRequest, types.CreateMessageResult),
    "roots/list": ("roots", types.ListRootsRequest, types.ListRootsResult),
}


CLIENT_CAPABILITIES_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
_LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _at_least(level: Any, wanted: str) -> bool:
    """Whether a message at ``level`` passes a client's ``wanted`` level (unknown levels pass)."""
    if level not in _LEVELS or wanted not in _LEVELS:
        return True
    return _LEVELS.index(level) >= _LEVELS.index(wanted)


def _form_default(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A declared ``elicitation: {}`` means form elicitation (the spec's reading of an empty object)."""
    elicitation = capabilities.get("elicitation")
    if isinstance(elicitation, dict) and not elicitation:
        return {**capabilities, "elicitation": {"form": {}}}
    return capabilities


def declared(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    """What the calling client declared it answers: its session's capabilities (handshake era) or
    its request's ``_meta`` (2026-07-28)."""
    if is_modern(ctx.protocol_version):
        meta = (ctx.params or {}).get("_meta")
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
        return _form_default(capabilities) if isinstance(capabilities, dict) else {}
    session_capabilities = ctx.session.client_capabilities
    if session_capabilities is None:
        return {}
    return _form_default(session_capabilities.model_dump(by_alias=True, mode="json", exclude_none=True))


def undeclared(ctx: ServerRequestContext[Any], input_requests: Any) -> str | None:
    """The capability an upstream's ``inputRequests`` need that the calling client did not declare
    (toolvet declared it upstream on every caller's behalf), or None."""
    capabilities = declared(ctx)
    for asked in (input_requests or {}).values() if isinstance(input_requests, dict) else ():
        method = asked.get("method") if isinstance(asked, dict) else None
        asked_for = _ASKED.get(method) if isinstance(method, str) else None
        if asked_for is not None and not isinstance(capabilities.get(asked_for[0]), dict):
            return asked_for[0]
    return None


class Relay(Hooks):
    """Relays one forwarded call's upstream messages to the calling client (see the module docstring)."""

    def __init__(
        self, ctx: ServerRequestContext[Any], log_level: str = "debug", conversation: Conversation | None = None
    ) -> None:
        self.ctx = ctx
        #: A 2026-07-28 client's call: its upstream's questions go to the client through this.
        self.conversation = conversation
        #: Log messages below this level are not relayed (what the client asked for).
        self.log_level = log_level
        self.handshake_era = not is_modern(ctx.protocol_version)

    async def notification(self, method: str, params: dict[str, Any] | None) -> None:
        try:
            if method == "notifications/progress" and params is not None:
                progress = params.get("progress")
                if isinstance(progress, int | float) and not isinstance(progress, bool):
                    total = params.get("total")
                    message = params.get("message")
                    await self.ctx.session.report_progress(
                        float(progress),
                        float(total) if isinstance(total, int | float) and not isinstance(total, bool) else None,
                        message if isinstance(message, str) else None,
                    )
            elif method == "notifications/message" and params is not None:
                if not _at_least(params.get("level"), self.log_level):
                    return
                note = types.LoggingMessageNotification(
                    params=types.LoggingMessageNotificationParams.model_validate(params))
                await self.ctx.session.send_notification(note, related_request_id=self.ctx.request_id)
        except (ValidationError, MCPError) as exc:
            log.debug("not relayed: %s from upstream (%s)", method, exc)
        except Exception:  # the client's stream is gone: the call goes on, its answer decides
            log.debug("could not relay %s to the client", method, exc_info=True)

    def _declared(self) -> dict[str, Any]:
        return declared(self.ctx)

    async def input_required(self, result: dict[str, Any]) -> dict[str, Any] | None:
        """Answer the upstream's input requests by asking this client, when it takes server requests
        (a handshake-era session); a 2026-07-28 client gets the result itself and retries."""
        if is_modern(self.ctx.protocol_version):
            return None
        requests = result.get("inputRequests")
        if not isinstance(requests, dict):
            raise RpcError(INVALID_PARAMS, "the upstream asked for input without naming any", synthetic=True)
        responses: dict[str, Any] = {}
        for key, asked in requests.items():
            if not isinstance(asked, dict) or not isinstance(asked.get("method"), str):
                raise RpcError(INVALID_PARAMS, f"the upstream's input request {str(key)[:40]!r} is malformed",
                               synthetic=True)
            params = asked.get("params")
            responses[key] = await self.request(asked["method"], params if isinstance(params, dict) else None)
        return responses

    async def request(self, method: str, params: dict[str, Any] | None) -> Any:
        if method == "ping":
            return {}
        asked = _ASKED.get(method)
        if asked is None:
            raise RpcError(METHOD_NOT_FOUND, f"{method[:100]} is not relayed by toolvet", synthetic=True)
        capability, request_type, result_type = asked
        session = self.ctx.session
        declared = self._declared()
        if not isinstance(declared.get(capability), dict):
            raise RpcError(INVALID_PARAMS, f"the client behind toolvet did not declare {capability}", synthetic=True)
        if method == "elicitation/create" and (params or {}).get("mode") == "url" and not isinstance(
                declared["elicitation"].get("url"), dict):
            raise RpcError(INVALID_PARAMS, "the client behind toolvet did not declare URL elicitation", synthetic=True)
        if self.conversation is not None:
            # A 2026-07-28 client: asked with an InputRequiredResult, answered by its retry.
            return await self.conversation.ask(method, params)
        if not session.can_send_request:
            raise RpcError(INVALID_PARAMS, f"the client behind toolvet cannot answer {method} on this connection",
                           synthetic=True)
        try:
            request = request_type.model_validate({"method": method, "params": params or {}})
        except ValidationError as exc:
            raise RpcError(INVALID_PARAMS, f"invalid {method} request: {exc.errors()[0]['msg']}",
                           synthetic=True) from None
        try:
            result = await session.send_request(
                request, result_type, metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id))
        except MCPError as exc:
            raise RpcError(exc.error.code, exc.error.message, exc.error.data) from None
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped
