"""Discovery: read what upstream MCP servers claim (``tools/list``), raw and bounded."""

from toolvet.discovery.listing import Limits, Listing, fetch_listing
from toolvet.upstream.target import Target

__all__ = ["Limits", "Listing", "Target", "fetch_listing"]
