"""How a server is authorized to: static headers (``auth = none``) or OAuth 2.1 (``auth = oauth2``)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class AuthMode(StrEnum):
    NONE = "none"
    OAUTH2 = "oauth2"


class OAuthGrant(StrEnum):
    #: Machine to machine: toolvet gets its tokens itself with a configured client id and secret.
    CLIENT_CREDENTIALS = "client_credentials"
    #: A person consents once (the console's **Connect**); toolvet refreshes from then on.
    AUTHORIZATION_CODE = "authorization_code"


class OAuthStatus(StrEnum):
    NOT_CONNECTED = "not connected"
    CONNECTED = "connected"
    NEEDS_RECONNECT = "needs reconnect"


class OAuthSettings(BaseModel):
    """The operator's OAuth settings of a server. Without a client id toolvet registers itself
    dynamically (RFC 7591) where the authorization server allows it."""

    model_config = ConfigDict(extra="forbid")

    grant: OAuthGrant = OAuthGrant.AUTHORIZATION_CODE
    client_id: str | None = Field(default=None, description="A client registered by hand at the authorization "
                                  "server; unset: toolvet registers one dynamically.")
    client_secret: str | None = Field(default=None, description="Write-only: the client's secret.")
    scope: str | None = Field(default=None, description="Scopes to ask for, space-separated; unset: what the "
                              "server's challenge or metadata names.")


class OAuthOut(BaseModel):
    """A server's OAuth settings and state as shown: never a secret or a token."""

    grant: OAuthGrant
    client_id: str | None
    scope: str | None
    status: OAuthStatus
    error: str | None
    expires_at: datetime | None
