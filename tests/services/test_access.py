"""The access rule itself (``services.access``): reading ``securitySchemes``, who lacks what, and
whether a pending call's admission still covers its tool's requirement."""

from __future__ import annotations

import pytest

from toolvet.errors import Forbidden, Unauthenticated
from toolvet.services import access
from toolvet.services.auth import Principal, Role

FILES = {"_meta": {"securitySchemes": [{"type": "oauth2", "scopes": ["files.read"]}]}}
OPEN = {"securitySchemes": [{"type": "oauth2", "scopes": ["x"]}, {"type": "noauth"}]}
CAROL = Principal(actor="token:carol", role=Role.CONSUMER, user="carol", scope="default",
                  oauth_scopes=frozenset({"files.read"}))
ALICE = Principal(actor="token:alice", role=Role.CONSUMER, user="alice", scope="default")
OPS = Principal(actor="token:ops", role=Role.OPERATOR)


def test_securityschemes_are_read_at_the_top_level_or_under_meta_and_noauth_wins() -> None:
    assert access.requirement(FILES) == access.Requirement(noauth=False, scopes=frozenset({"files.read"}))
    assert access.requirement(OPEN).noauth
    assert access.requirement({}) == access.NEEDS_TOKEN
    assert access.requirement({"securitySchemes": [{"type": "apiKey"}, "junk"]}) == access.NEEDS_TOKEN


def test_a_role_grants_no_oauth_scope_and_the_anonymous_consumer_holds_no_token() -> None:
    need = access.requirement(FILES)
    assert need.missing(CAROL) is None
    assert need.missing(ALICE) == need.missing(OPS) == frozenset({"files.read"})
    assert access.NEEDS_TOKEN.missing(access.ANONYMOUS) == frozenset()
    assert access.NEEDS_TOKEN.missing(ALICE) is None


def test_check_tells_a_missing_token_from_a_missing_scope() -> None:
    need = access.requirement(FILES)
    with pytest.raises(Unauthenticated, match="needs a bearer token"):
        access.check(None, need, "lab/files")
    with pytest.raises(Forbidden, match=r"files\.read"):
        access.check(OPS, need, "lab/files")
    access.check(CAROL, need, "lab/files")


def test_admit_lets_a_caller_without_a_token_in_only_at_a_noauth_tool_when_allowed() -> None:
    assert access.admit(None, access.requirement(OPEN), "lab/open", anonymous=True) == access.ANONYMOUS
    with pytest.raises(Unauthenticated):
        access.admit(None, access.requirement(OPEN), "lab/open", anonymous=False)
    with pytest.raises(Unauthenticated):
        access.admit(None, access.NEEDS_TOKEN, "lab/widget", anonymous=True)
    assert access.admit(ALICE, access.NEEDS_TOKEN, "lab/widget", anonymous=False) is ALICE


def test_a_pending_call_holds_only_under_the_requirement_it_was_admitted_under() -> None:
    files = access.requirement(FILES)
    admitted = [access.granted(files) or ""]
    assert access.still_holds(files, "carol", admitted)
    assert not access.still_holds(files, "alice", [])  # made when the tool needed only a token
    wider = access.Requirement(noauth=False, scopes=frozenset({"files.read", "files.write"}))
    assert not access.still_holds(wider, "carol", admitted)
    assert access.still_holds(access.NEEDS_TOKEN, "carol", admitted)
    assert not access.still_holds(access.NEEDS_TOKEN, access.ANONYMOUS.user or "", [])
    assert access.still_holds(access.requirement(OPEN), "anonymous", [])
