"""The bundled demo MCP server that ``toolvet demo`` discovers and serves."""
