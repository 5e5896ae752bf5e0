"""The gateway: forwarding calls to upstream servers over pooled sessions, and the ``/mcp`` endpoint."""
