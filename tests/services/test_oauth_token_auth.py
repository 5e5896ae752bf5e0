"""How a hand-registered client with a secret authenticates at the token endpoint, by what the
authorization server's metadata says it takes (the conformance suite's ``auth/pre-registration``
scenario checks the same against a real authorization server)."""

from __future__ import annotations

import pytest
from mcp.shared.auth import OAuthMetadata

from toolvet.upstream.oauth import token_auth_method


def _metadata(methods: list[str] | None) -> OAuthMetadata:
    return OAuthMetadata.model_validate({
        "issuer": "https://auth.example", "authorization_endpoint": "https://auth.example/authorize",
        "token_endpoint": "https://auth.example/token", "token_endpoint_auth_methods_supported": methods})


@pytest.mark.parametrize(("methods", "chosen"), [
    (None, "client_secret_basic"),  # RFC 8414: omitted means client_secret_basic
    (["client_secret_basic"], "client_secret_basic"),
    (["client_secret_post"], "client_secret_post"),
    (["client_secret_post", "client_secret_basic"], "client_secret_basic"),
    (["private_key_jwt", "client_secret_post"], "client_secret_post"),
    (["private_key_jwt"], "client_secret_basic"),  # nothing usable named: the method every server must take
])
def test_basic_unless_the_server_takes_only_the_form(methods: list[str] | None, chosen: str) -> None:
    assert token_auth_method(_metadata(methods)) == chosen


def test_unknown_metadata_means_basic() -> None:
    assert token_auth_method(None) == "client_secret_basic"
