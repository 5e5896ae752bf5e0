"""The one settings object. Every field reads from the environment with the prefix ``TOOLVET_``."""

from __future__ import annotations

import ipaddress
import json
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

#: The alert kinds (``schemas.webhooks.AlertKind``'s values; a test keeps the two the same).
AlertKindName = Literal["tool.held", "tool.new", "finding.high", "call.pending", "discovery.failing"]


class WebhookSetting(BaseModel):
    """One alert webhook given in the settings (``TOOLVET_WEBHOOKS``)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
    url: str = Field(pattern=r"^https?://\S+$")
    secret: str = Field(min_length=16)
    kinds: list[AlertKindName] = Field(default_factory=list)


class Settings(BaseSettings):
    """toolvet's configuration; ``docs/settings.md`` lists every field (a test keeps it complete)."""

    model_config = SettingsConfigDict(env_prefix="TOOLVET_", extra="ignore")

    home: Path = Field(
        default_factory=lambda: Path.home() / ".toolvet",
        description="Directory for the default SQLite database and the generated secret key file.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the database; unset means the SQLite file `HOME/toolvet.sqlite3`. "
        "PostgreSQL: `postgresql+psycopg://user:pass@host/db` (a bare `postgresql://` URL is accepted).",
    )
    secret_key: str | None = Field(
        default=None,
        description="Fernet key that encrypts upstream secrets at rest (and signs console sessions). Unset: "
        "read from `secret_key_file`, else from (or generated into) `HOME/secret.key` on first start.",
    )
    secret_key_file: Path | None = Field(
        default=None,
        description="File holding the Fernet key (its first line), such as a mounted secret; read when "
        "`secret_key` is unset. On PostgreSQL `toolvet serve` refuses to start without one of the two: "
        "every replica must open what the others sealed.",
    )
    host: str = Field(default="127.0.0.1", description="Address `toolvet serve` binds.")
    port: int = Field(default=8730, description="Port `toolvet serve` binds.")
    discovery_interval: float = Field(
        default=900.0, description="Seconds between scheduled re-discoveries of each enabled `auto` server."
    )
    discovery_debounce: float = Field(
        default=2.0, description="Seconds to wait after a list-changed signal before re-discovering."
    )
    discovery_concurrency: int = Field(
        default=16, ge=1, description="How many servers one discovery command or scheduler tick lists at once."
    )
    discovery_writer_min_servers: int = Field(
        default=64, ge=0, description="A discovery sweep of at least this many servers reconciles and writes in a "
        "separate writer process, on another core, while this one fetches listings; 0 never starts one."
    )
    connect_timeout: float = Field(default=10.0, gt=0, description="Seconds to connect to an upstream.")
    read_timeout: float = Field(default=30.0, gt=0, description="Seconds to wait for one upstream response.")
    pass_timeout: float = Field(default=120.0, gt=0, description="Seconds one discovery pass may take in all.")
    max_pages: int = Field(default=100, ge=1, description="Most `tools/list` pages read in one pass.")
    max_tools: int = Field(default=10_000, ge=1, description="Most tools accepted from one server in one pass.")
    max_definition_bytes: int = Field(
        default=256 * 1024, ge=1, description="Largest tool definition (compact JSON, bytes) accepted."
    )
    lease_seconds: float = Field(
        default=10.0, gt=0, description="How long a discovery, list-changed watcher or webhook delivery lease lasts "
        "unless its holder renews it (it does, every third of this, while it lives): a dead process's servers "
        "and unfinished deliveries move to a live one within about this long."
    )
    approval_ttl: float = Field(default=900.0, gt=0, description="Seconds a pending call waits for an approver.")
    approval_wait: float = Field(
        default=60.0, ge=0, description="Seconds an MCP `tools/call` that needs approval (and whose client cannot "
        "be asked by elicitation) waits for an approver before answering that the call is pending.",
    )
    shutdown_grace: float = Field(
        default=20.0, ge=0, description="Seconds `toolvet serve` lets requests in flight finish after SIGTERM or "
        "Ctrl-C before it cancels them and stops (keep it under the orchestrator's own grace period, 30 s "
        "on Kubernetes by default).",
    )
    mcp_session_ttl: float = Field(
        default=86_400.0, gt=0, description="Seconds a handshake-era (2025-11-25) MCP session may go unused "
        "before it is deleted; any replica serves a session until then.",
    )
    rate_limit_per_minute: int = Field(
        default=0, ge=0, description="Most requests one token makes per minute to the REST API and the MCP "
        "endpoints, counted across every replica sharing the database (fixed one-minute windows); past it, "
        "`429` with `Retry-After`. 0 means no limit.",
    )
    call_timeout: float = Field(default=60.0, gt=0, description="Seconds a forwarded call may take upstream.")
    gateway_tracing: bool = Field(
        default=False, description="Wrap each `/mcp` request in the MCP SDK's OpenTelemetry span (it costs about "
        "0.15 ms per call even when no tracer is installed, so it is off unless asked for).",
    )
    upstream_concurrency: int = Field(
        default=16, ge=1, description="Most calls in flight to one upstream server at once.")
    upstream_deny: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Address ranges (CIDRs) toolvet never connects to for an upstream, on top "
        "of link-local and cloud metadata addresses, which are always refused (for example "
        "`[\"127.0.0.0/8\", \"10.0.0.0/8\"]`, or comma-separated). Checked on the resolved address at "
        "connect time.")
    anonymous_listing: bool = Field(
        default=True, description="Let a client without a token use an MCP endpoint whose view offers `noauth` "
        "tools (it sees those only). Off, or where no such tool is offered, a request without a token is "
        "answered 401 with the RFC 9728 challenge.")
    authorization_server: str | None = Field(
        default=None, description="URL of an external OAuth authorization server that issues the tokens clients "
        "present, named in the protected-resource metadata. Unset: toolvet names itself, and serves RFC 8414 "
        "metadata that says its tokens are issued by an operator (`toolvet token create`).")
    public_url: str | None = Field(
        default=None, description="The address people's browsers reach toolvet at (scheme, host, port, any "
        "prefix), for the OAuth callback an authorization server sends an operator back to after **Connect** "
        "(`PUBLIC_URL/console/oauth/callback`) and the URL `toolvet server connect` prints. Unset: "
        "`http://HOST:PORT` of `toolvet serve`.")
    oauth_connect_seconds: float = Field(
        default=600.0, gt=0, description="Seconds an operator has to consent at the authorization server after "
        "clicking **Connect**; the callback's state expires then and is good for one use only.")
    oauth_refresh_skew: float = Field(
        default=60.0, ge=0, description="Seconds before an upstream's OAuth access token expires that toolvet "
        "refreshes it (a token without a lifetime is refreshed when the server refuses it).")
    # Bounds on what clients send and what toolvet keeps (docs/api.md, "Limits").
    max_body_bytes: int = Field(
        default=1024 * 1024, ge=1, description="Largest request body (bytes) accepted by the REST API, the "
        "console and `/mcp`; a bigger one is refused with 413 before it is read further.",
    )
    max_event_bytes: int = Field(
        default=16 * 1024 * 1024, ge=1024, description="Largest single server-sent event (bytes) accepted from an "
        "upstream; a longer one fails its request before more of it is buffered.")
    max_json_depth: int = Field(
        default=64, ge=1, description="Deepest nesting of arrays and objects accepted in a JSON request body.",
    )
    max_argument_bytes: int = Field(
        default=1024 * 1024, ge=1, description="Largest `arguments` of a call (compact JSON, bytes); a bigger "
        "call is refused, and stored arguments never exceed it.",
    )
    max_stored_result_bytes: int = Field(
        default=256 * 1024, ge=1, description="Largest call result (compact JSON, bytes) stored with the call; "
        "a bigger one is stored truncated, with a marker, while the caller still receives it whole.",
    )
    call_retention_days: float = Field(
        default=30.0, ge=0, description="Days a finished call's row is kept before the scheduler prunes it; "
        "0 keeps calls forever.",
    )
    call_audit_retention_days: float = Field(
        default=30.0, ge=0, description="Days the audit entries that record calls (`call.pending`, `call.run`, "
        "`call.invalid`) are kept; operators' actions are kept forever. 0 keeps them forever.",
    )

    # Operating it (docs/operate.md).
    metrics_open: bool = Field(
        default=False, description="Serve `GET /metrics` to anyone who can reach it; off, it needs an operator's "
        "or an admin's token.")
    log_format: Literal["text", "json"] = Field(
        default="text", description="`json`: `toolvet serve` logs one JSON object a line (with the request id "
        "of the REST or MCP request it happened in); `text`: plain lines.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING", description="Lowest level `toolvet serve` logs; `INFO` adds one line per HTTP request "
        "(method, path, status, milliseconds, request id).")

    webhooks: list[WebhookSetting] = Field(
        default_factory=list, description="Alert webhooks beside those managed over REST, as a JSON list of "
        "`{\"name\", \"url\", \"secret\", \"kinds\"}` (`kinds` empty or absent: every kind).")
    webhook_attempts: int = Field(
        default=6, ge=1, le=20, description="Most times one alert is sent to one webhook before it is recorded "
        "as failed.")
    webhook_backoff: float = Field(
        default=2.0, gt=0, description="Seconds before the first retry of a failed webhook delivery; each next "
        "retry waits twice as long (at most 10 minutes).")
    webhook_timeout: float = Field(default=10.0, gt=0, description="Seconds one webhook request may take.")
    alert_discovery_failures: int = Field(
        default=3, ge=1, description="Alert (`discovery.failing`) when a server's discovery has failed this many "
        "passes in a row.")
    alert_poll_seconds: float = Field(
        default=5.0, gt=0, description="How often `toolvet serve` looks for new discovery runs to alert on.")

    @field_validator("upstream_deny", mode="before")
    @classmethod
    def _cidrs(cls, value: Any) -> Any:
        """A JSON list or a comma-separated string of CIDRs, each checked."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else [part.strip() for part in text.split(",")]
        if isinstance(value, list):
            value = [item for item in value if not (isinstance(item, str) and not item.strip())]
            for item in value:
                try:
                    ipaddress.ip_network(str(item).strip(), strict=False)
                except ValueError:
                    raise ValueError(f"{item!r} is not an address range (CIDR)") from None
        return value

    def resolved_public_url(self) -> str:
        """Where browsers reach toolvet: ``public_url``, else ``toolvet serve``'s own address."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    def resolved_database_url(self) -> str:
        """The database URL to use, with the embedded SQLite default and psycopg 3 as PostgreSQL driver."""
        url = self.database_url or f"sqlite:///{self.home / 'toolvet.sqlite3'}"
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once from the environment."""
    return Settings()
