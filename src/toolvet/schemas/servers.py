"""Servers as the REST API and the CLI show and accept them."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolvet.domain.names import server_name_problem, software_name_problem
from toolvet.domain.policy import ApprovalFloor
from toolvet.schemas.common import read_only_map, refuse_read_only
from toolvet.schemas.oauth import AuthMode, OAuthOut, OAuthSettings


class Transport(StrEnum):
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"
    STDIO = "stdio"


class DiscoveryMode(StrEnum):
    AUTO = "auto"
    MANUAL = "manual"


SERVER_DISCOVERY_FIELDS = (
    "last_discovery_at", "last_discovery_status", "last_error", "protocol_version",
    "server_info", "capabilities", "instructions",
)
SERVER_READ_ONLY = {
    **read_only_map("discovery", SERVER_DISCOVERY_FIELDS),
    **read_only_map("the registry", ("created_at", "updated_at", "tool_count", "header_names", "env_names")),
}


#: RFC 9110 field names are tokens; values hold no CR, LF, NUL or other control character but tab.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: Headers that frame the HTTP message or belong to one connection: toolvet's HTTP client sets them,
#: and one smuggled in from the registry could split or redirect a request.
FRAMING_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer",
    "proxy-connection",
})


def _check_url(url: str | None) -> str | None:
    if url is None:
        return url
    if _BAD_VALUE.search(url) or " " in url or "\t" in url:
        raise ValueError("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parses the port, raising on a bad one
    except ValueError as exc:
        raise ValueError(f"is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError("must be an http:// or https:// URL")
    if not parts.hostname:
        raise ValueError("must name a host (http://HOST/...)")
    return url


def _check_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    for name, value in (headers or {}).items():
        if not _TOKEN.fullmatch(name):
            raise ValueError(f"{name!r} is not a valid header name (letters, digits and !#$%&'*+-.^_`|~)")
        if name.lower() in FRAMING_HEADERS:
            raise ValueError(f"{name!r} may not be set: toolvet's HTTP client sets it")
        if _BAD_VALUE.search(value):
            raise ValueError(f"the value of {name!r} holds a control character (CR, LF, NUL...)")
    return headers


def _check_no_nul(value: Any) -> Any:
    """Launch fields of stdio servers: a NUL cannot be passed to a process."""
    if isinstance(value, dict):
        texts = [*value.keys(), *value.values()]
    else:
        texts = value if isinstance(value, list) else [value]
    if any(isinstance(text, str) and "\x00" in text for text in texts):
        raise ValueError("must not contain a NUL character")
    return value


def _check_name(name: str) -> str:
    problem = server_name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


def _check_software(software: str | None) -> str | None:
    problem = software_name_problem(software) if software is not None else None
    if problem:
        raise ValueError(problem)
    return software


SOFTWARE_HELP = ("The software this server runs, as the operator names it: servers that run the same software are "
                 "not compared with each other by the cross-server findings (tool-duplicate, tool-shadowing). "
                 "null: none named.")


class _ServerFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = None
    url: str | None = Field(default=None, description="Endpoint of an http transport.")
    command: str | None = Field(default=None, description="Program a stdio server is launched with.")
    args: list[str] | None = None
    env: dict[str, str] | None = Field(default=None, description="Write-only: stdio environment additions.")
    cwd: str | None = None
    headers: dict[str, str] | None = Field(default=None, description="Write-only: headers sent upstream.")
    auth: AuthMode | None = Field(default=None, description="none (default): the static headers only; oauth2: "
                                  "toolvet authorizes with OAuth 2.1 (streamable-http servers).")
    oauth: OAuthSettings | None = Field(default=None, description="OAuth settings when auth is oauth2.")
    enabled: bool | None = None
    discovery: DiscoveryMode | None = None
    trust_annotations: bool | None = None
    new_tools_enabled: bool | None = None
    hold_changed_tools: bool | None = None
    hold_flagged_tools: bool | None = Field(
        default=None, description="Hold tools with a high finding until reviewed, as changed contracts are held.")
    remove_stale: bool | None = None
    approval: ApprovalFloor | None = Field(
        default=None, description="Approval floor for every tool of the server. user (default): the user's mode "
        "and lists decide; always: every call asks; operator: every call asks and only an operator or admin "
        "may approve it. A tool's own floor may be stricter, never lower.")
    software: str | None = Field(default=None, description=SOFTWARE_HELP)

    _check_url = field_validator("url")(classmethod(lambda cls, v: _check_url(v)))
    _check_headers = field_validator("headers")(classmethod(lambda cls, v: _check_headers(v)))
    _check_no_nul = field_validator("command", "args", "env", "cwd")(classmethod(lambda cls, v: _check_no_nul(v)))
    _check_software = field_validator("software")(classmethod(lambda cls, v: _check_software(v)))

    @model_validator(mode="before")
    @classmethod
    def _read_only(cls, data: Any) -> Any:
        return refuse_read_only(data, SERVER_READ_ONLY)


class ServerCreate(_ServerFields):
    """A new server. ``transport`` defaults to stdio when ``command`` is given, else streamable-http."""

    name: str
    transport: Transport | None = None

    _check_name = field_validator("name")(classmethod(lambda cls, v: _check_name(v)))

    @model_validator(mode="after")
    def _transport_needs(self) -> Self:
        if self.transport is None:
            self.transport = Transport.STDIO if self.command and not self.url else Transport.STREAMABLE_HTTP
        check_transport_fields(self.transport, self.url, self.command)
        check_auth_fields(self.transport, self.auth, self.oauth)
        return self


def check_auth_fields(transport: Transport, auth: AuthMode | None, oauth: OAuthSettings | None) -> None:
    """OAuth is for streamable-http servers, and its settings only for ``auth = oauth2``."""
    if auth is AuthMode.OAUTH2 and transport is not Transport.STREAMABLE_HTTP:
        raise ValueError(f"auth: oauth2 is for streamable-http servers, not {transport.value}")
    if oauth is not None and auth is not AuthMode.OAUTH2:
        raise ValueError("oauth: OAuth settings need auth = oauth2")


def check_transport_fields(transport: Transport, url: str | None, command: str | None) -> None:
    """An http server needs a URL, a stdio server a command; each refuses the other's field."""
    if transport is Transport.STDIO:
        if not command:
            raise ValueError("command: a stdio server needs a command")
        if url:
            raise ValueError("url: a stdio server takes a command, not a url")
    else:
        if not url:
            raise ValueError(f"url: a {transport.value} server needs a url")
        if command:
            raise ValueError(f"command: a {transport.value} server takes a url, not a command")


class ServerPatch(_ServerFields):
    """Changes to a server; absent fields are left alone. The name cannot change (it is the
    ``serverType`` consumers key their preferences on)."""

    transport: Transport | None = None
    READ_ONLY_EXTRA: ClassVar[dict[str, str]] = {"name": "the registry (a server cannot be renamed)"}

    @model_validator(mode="before")
    @classmethod
    def _name_read_only(cls, data: Any) -> Any:
        return refuse_read_only(data, cls.READ_ONLY_EXTRA)


class ServerOut(BaseModel):
    """A server as shown; secrets appear only as the names of the headers and env vars set."""

    name: str
    title: str | None
    transport: Transport
    url: str | None
    command: str | None
    args: list[str]
    cwd: str | None
    header_names: list[str]
    env_names: list[str]
    auth: AuthMode = AuthMode.NONE
    oauth: OAuthOut | None = None
    enabled: bool
    discovery: DiscoveryMode
    trust_annotations: bool
    new_tools_enabled: bool
    hold_changed_tools: bool
    hold_flagged_tools: bool
    remove_stale: bool
    approval: ApprovalFloor
    software: str | None = None
    last_discovery_at: datetime | None
    last_discovery_status: str | None
    last_error: str | None
    protocol_version: str | None
    server_info: dict[str, Any] | None
    capabilities: dict[str, Any] | None
    instructions: str | None
    tool_count: int
    created_at: datetime
    updated_at: datetime
