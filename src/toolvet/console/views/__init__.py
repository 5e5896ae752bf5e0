"""The console's views, one module per page group; each parses input, calls a service, renders."""
