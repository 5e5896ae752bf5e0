"""toolvet's error tree. Every interface maps these to its own medium in one place
(``api/errors.py`` for HTTP, the CLI's runner for exit codes); nothing here knows about HTTP.

ToolvetError
├── NotFound            an object named by the caller does not exist
├── Conflict            the object exists already (duplicate name) or the change clashes with state
├── InvalidInput        bad input; ``field`` names what was wrong
│   └── ReadOnlyField   an attempt to set a field that a person may not set
├── Unauthenticated     no or unknown credentials
├── Forbidden           the credentials may not do this
├── RateLimited         the credentials made too many requests this minute; ``retry_after`` seconds
├── UpstreamError       an MCP server failed, timed out or answered nonsense
└── SetupError          the settings name something toolvet cannot use (a database, a home)
"""

from __future__ import annotations


class ToolvetError(Exception):
    """Root of every error toolvet raises on purpose; its message is fit to show a user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ToolvetError):
    """An object named by the caller does not exist."""


class Conflict(ToolvetError):
    """The object exists already, or the change clashes with the current state."""


class InvalidInput(ToolvetError):
    """Bad input. ``field`` names the offending field (dotted path), when there is one."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message


class ReadOnlyField(InvalidInput):
    """An attempt to set a field that discovery or the registry owns."""

    def __init__(self, field: str, owner: str = "discovery") -> None:
        super().__init__(f"is read-only (owned by {owner})", field)


class Unauthenticated(ToolvetError):
    """No credentials, or credentials toolvet does not know."""


class Forbidden(ToolvetError):
    """The credentials are valid but may not do this."""


class RateLimited(ToolvetError):
    """The credentials made more requests this minute than the rate limit allows."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UpstreamError(ToolvetError):
    """An upstream MCP server failed, timed out or answered something malformed.

    ``code`` and ``data`` are the JSON-RPC error the server itself answered, when it did, so a
    gateway can pass the server's own error on.
    """

    def __init__(self, message: str, code: int | None = None, data: object = None, said: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data
        self.said = said  # the server's own error message, as it said it


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text (its type's name when it has none), for a log line."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


class SetupError(ToolvetError):
    """The settings name something toolvet cannot use: a PostgreSQL server it cannot reach, a home or
    database file it cannot write. The message names the setting or the server."""
