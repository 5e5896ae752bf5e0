"""The application layer shared by the REST API, the console, the CLI and the gateway."""
