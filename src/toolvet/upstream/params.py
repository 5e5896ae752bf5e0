"""The ``Mcp-Param-*`` headers a 2026-07-28 ``tools/call`` mirrors from its arguments.

A tool's ``inputSchema`` may mark properties with ``x-mcp-header``; a client calling it over
streamable HTTP sends each such argument again as an ``Mcp-Param-<token>`` header (so an
intermediary can route on it without reading the body), and a server checks that the two agree. The
SDK's server refuses a call whose declared headers are missing. toolvet builds the headers from the
schema it stored verbatim from the upstream's listing, with the SDK's own codec, so what it sends
is what the SDK's client would send.

The stamping (:meth:`~toolvet.upstream.protocol.Session.stamp`) adds them in the 2026-07-28 era
only; the handshake era has none, and stdio and SSE carry no per-request headers at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from mcp.shared.inbound import find_invalid_x_mcp_header, mcp_param_headers, x_mcp_header_map

__all__ = ["NO_PARAMS", "ParamMap", "param_headers", "param_map"]

#: Property path (a chain of ``properties`` keys) -> the ``x-mcp-header`` token it is sent as.
ParamMap = Mapping[tuple[str, ...], str]
#: The map of a tool that declares no (valid) ``x-mcp-header``.
NO_PARAMS: Final[ParamMap] = MappingProxyType({})


def param_map(input_schema: Any) -> ParamMap:
    """Which arguments of a tool with this ``inputSchema`` are mirrored into which headers.

    A schema with an invalid annotation anywhere (a bad token, a non-scalar property, a duplicate)
    mirrors nothing: the SDK's client drops such a tool and sends its calls no ``Mcp-Param-*``
    header, and the SDK's server checks none for it, so the call goes upstream as it is.
    """
    if not isinstance(input_schema, dict) or find_invalid_x_mcp_header(input_schema) is not None:
        return NO_PARAMS
    return x_mcp_header_map(input_schema) or NO_PARAMS


def param_headers(mapping: ParamMap, arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers for a call with ``arguments`` (a value that is not printable ASCII
    is base64-wrapped, a bool is ``true``/``false``, an absent or null argument sends none)."""
    return mcp_param_headers(mapping, arguments) if mapping else {}
