"""The outcome of one discovery pass over one server, as data (docs/discovery.md#one-pass).

Kept apart from ``toolvet.discovery`` (the network side, which imports the MCP SDK) so that the
write side of discovery, which may run in a writer process of its own, imports none of that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Listing"]


@dataclass
class Listing:
    """The outcome of one pass: ``ok`` (complete), ``incomplete`` (stopped at a bound) or ``failed``.

    ``tools`` holds every tool object exactly as received (json-decoded, possibly not a dict); for an
    incomplete or failed pass it holds what arrived before the stop, which must retire nothing.

    ``digest`` (``ok`` listings only, else None) identifies the listing as received: SHA-256 over each
    page's reply exactly as it arrived (the JSON text of the answer, when the channel keeps it; else
    the compact JSON text of the page's ``tools`` array in the server's own order). The tools are a
    function of that text, so equal digests mean equal listings, and discovery can recognise a listing
    it has already reconciled without looking at each tool (see ``services.discovery``). A listing
    that differs only in spelling (key order, page boundaries, another ``_meta`` on the page) gets
    another digest: that only costs a full reconcile.

    ``entries`` holds, by kind (``prompt``, ``resource``, ``template``; see ``domain.entries``), every
    item of each list the server declared and toolvet read whole; a list that failed is absent (its
    stored entries are then left as they are) and ``entry_errors`` says why.
    """

    status: Literal["ok", "incomplete", "failed"]
    tools: list[Any]
    error: str | None
    protocol_version: str | None
    server_info: dict[str, Any] | None
    capabilities: dict[str, Any] | None
    instructions: str | None
    pages: int
    digest: str | None = None
    entries: dict[str, list[Any]] = field(default_factory=dict)
    entry_errors: list[str] = field(default_factory=list)
