"""Discovery: read what upstream MCP servers claim (``tools/list``), raw and bounded."""

from toolvet.discovery.listing import Limits, Listing, Target, fetch_listing

__all__ = ["Limits", "Listing", "Target", "fetch_listing"]
