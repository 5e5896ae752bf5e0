"""``decide`` over every combination of its inputs, against a straightforward reading of the
rules written out here (not by calling ``decide``)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from toolvet.domain.policy import (
    AllowEntry,
    AllowIndex,
    Decision,
    PermissionMode,
    ReviewState,
    ToolFacts,
    decide,
)

SERVER, TOOL, PRINT = "github", "create_issue", "sha256:current"

ALWAYS_ALLOW: dict[str, list[AllowEntry]] = {
    "none": [],
    "matching": [AllowEntry(SERVER, TOOL, PRINT)],
    "stale fingerprint": [AllowEntry(SERVER, TOOL, "sha256:older")],
    "same name other server": [AllowEntry("gitlab", TOOL, PRINT)],
}
ANNOTATIONS: dict[str, dict[str, Any] | None] = {
    "absent": None,
    "read-only, not destructive": {"readOnlyHint": True, "destructiveHint": False},
    "read-only, destructive absent": {"readOnlyHint": True},
    "read-only, destructive": {"readOnlyHint": True, "destructiveHint": True},
    "not read-only": {"readOnlyHint": False},
}
REQUIRE_APPROVAL = (False, None)


def expected(
    mode: PermissionMode,
    *,
    available: bool,
    hold: bool,
    disabled: bool,
    require_approval: bool | None,
    allow: str,
    writable: bool,
    state: ReviewState,
    trust: bool,
    annotations: str,
) -> tuple[bool, bool]:
    """(refused, auto_allow), reading docs/policy.md line by line."""
    held = state == "changed" and hold
    is_offered = available and not held
    if not is_offered or disabled:
        return True, False
    if mode == "allow":
        return False, True
    entry_matches = allow == "matching"
    if mode == "ask":
        return False, entry_matches
    rule1 = require_approval is False
    rule2 = entry_matches
    rule3 = writable is False and state == "reviewed"
    rule4 = trust and annotations == "read-only, not destructive"
    return False, rule1 or rule2 or rule3 or rule4


def combinations(mode: PermissionMode) -> list[dict[str, Any]]:
    keys = (
        "available",
        "hold",
        "disabled",
        "require_approval",
        "allow",
        "writable",
        "state",
        "trust",
        "annotations",
    )
    values = (
        (True, False),
        (True, False),
        (False, True),
        REQUIRE_APPROVAL,
        tuple(ALWAYS_ALLOW),
        (True, False),
        tuple(ReviewState),
        (False, True),
        tuple(ANNOTATIONS),
    )
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def facts(case: dict[str, Any]) -> ToolFacts:
    return ToolFacts(
        server_type=SERVER,
        name=TOOL,
        fingerprint=PRINT,
        available=case["available"],
        review_state=case["state"],
        hold_changed_tools=case["hold"],
        writable=case["writable"],
        trust_annotations=case["trust"],
        annotations=ANNOTATIONS[case["annotations"]],
        require_approval=case["require_approval"],
    )


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_every_combination_decides_as_the_rules_say(mode: PermissionMode) -> None:
    cases = combinations(mode)
    assert len(cases) == 2 * 2 * 2 * 2 * 4 * 2 * 3 * 2 * 5
    for case in cases:
        decision = decide(
            mode, facts(case), disabled=case["disabled"], always_allow=AllowIndex(ALWAYS_ALLOW[case["allow"]])
        )
        refused, auto_allow = expected(mode, **case)
        assert (decision.refused, decision.auto_allow) == (refused, auto_allow), (mode, case, decision)
        assert decision.reasons and all(isinstance(r, str) and r for r in decision.reasons), (mode, case)


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_a_plain_list_of_entries_decides_like_an_index(mode: PermissionMode) -> None:
    for case in combinations(mode)[::7]:
        entries = ALWAYS_ALLOW[case["allow"]]
        tool = facts(case)
        assert decide(mode, tool, disabled=case["disabled"], always_allow=entries) == decide(
            mode, tool, disabled=case["disabled"], always_allow=AllowIndex(entries)
        )


def _auto(**changes: Any) -> Decision:
    case = {
        "available": True,
        "hold": True,
        "disabled": False,
        "require_approval": None,
        "allow": "none",
        "writable": True,
        "state": ReviewState.UNREVIEWED,
        "trust": False,
        "annotations": "absent",
    } | changes
    return decide(
        PermissionMode.AUTO, facts(case), disabled=case["disabled"], always_allow=ALWAYS_ALLOW[case["allow"]]
    )


def test_an_auto_decision_gives_a_reason_for_every_rule() -> None:
    decision = _auto()
    assert decision.auto_allow is False
    assert any("requireApproval" in r for r in decision.reasons)
    assert any("no always-allow entry" in r for r in decision.reasons)
    assert any("writable is true" in r for r in decision.reasons)
    assert any("trust_annotations" in r for r in decision.reasons)
    assert decision.reasons[-1].startswith("asks")


def test_a_rule_that_allows_is_named_among_the_reasons() -> None:
    assert (
        "an operator reviewed it as read-only (writable=false, review state reviewed)"
        in _auto(writable=False, state=ReviewState.REVIEWED).reasons
    )
    assert any("older definition" in r for r in _auto(allow="stale fingerprint").reasons)
    assert any(
        "absent means destructive" in r
        for r in _auto(trust=True, annotations="read-only, destructive absent").reasons
    )


def test_a_refusal_names_every_cause() -> None:
    decision = _auto(available=False, disabled=True)
    assert decision.refused and not decision.auto_allow
    assert len(decision.reasons) == 2
    assert any("held" in r or "changed after review" in r for r in _auto(state=ReviewState.CHANGED).reasons)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="ask, auto, allow"):
        decide(
            "sometimes",
            facts(
                {
                    "available": True,
                    "hold": True,
                    "require_approval": None,
                    "writable": True,
                    "state": ReviewState.UNREVIEWED,
                    "trust": False,
                    "annotations": "absent",
                }
            ),
            disabled=False,
            always_allow=(),
        )


def test_an_index_iterates_its_entries_back() -> None:
    entries = [
        AllowEntry("a", "t", "sha256:1"),
        AllowEntry("a", "t", "sha256:2"),
        AllowEntry("b", "t", "sha256:1"),
    ]
    index = AllowIndex(entries)
    assert sorted(index, key=lambda e: (e.server_type, e.fingerprint)) == entries
    assert len(index) == 3
    assert index.fingerprints("c", "t") is None


def test_an_auto_decision_reads_its_rules_in_order() -> None:
    from toolvet.domain import policy

    entry_reason = {"none": policy.R_ENTRY_NONE, "matching": policy.R_ENTRY_MATCH,
                    "stale fingerprint": policy.R_ENTRY_STALE, "same name other server": policy.R_ENTRY_NONE}
    annotation_reason = {"absent": policy.R_UNANNOTATED, "not read-only": policy.R_UNANNOTATED,
                         "read-only, not destructive": policy.R_TRUSTED,
                         "read-only, destructive absent": policy.R_DESTRUCTIVE,
                         "read-only, destructive": policy.R_DESTRUCTIVE}
    checked = 0
    for case in combinations(PermissionMode.AUTO):
        decision = decide(PermissionMode.AUTO, facts(case), disabled=case["disabled"],
                          always_allow=AllowIndex(ALWAYS_ALLOW[case["allow"]]))
        if decision.refused:
            continue
        if case["writable"]:
            review = policy.R_WRITABLE
        elif case["state"] is ReviewState.REVIEWED:
            review = policy.R_READ_ONLY
        else:
            review = policy.R_NOT_REVIEWED.format(state=case["state"].value)
        assert decision.reasons == (
            policy.R_AUTO,
            policy.R_HOST if case["require_approval"] is False else policy.R_NOT_HOST,
            entry_reason[case["allow"]],
            review,
            annotation_reason[case["annotations"]] if case["trust"] else policy.R_UNTRUSTED,
            policy.R_RUNS if decision.auto_allow else policy.R_ASKS,
        ), case
        checked += 1
    assert checked == 800  # every combination that is not refused


def test_a_refusal_lists_its_causes_in_rule_order() -> None:
    from toolvet.domain import policy

    tool = facts({"available": True, "hold": True, "state": ReviewState.CHANGED, "writable": True, "trust": False,
                  "annotations": "absent", "require_approval": None})
    assert decide("auto", tool, disabled=True, always_allow=()).reasons == (policy.R_HELD, policy.R_DISABLED)
    unavailable = facts({"available": False, "hold": True, "state": ReviewState.CHANGED, "writable": True,
                         "trust": False, "annotations": "absent", "require_approval": None})
    # Not available comes first, and such a tool is not also called held.
    assert decide("ask", unavailable, disabled=True, always_allow=()).reasons == (
        policy.R_NOT_AVAILABLE, policy.R_DISABLED)
