"""The operator's approval floor under ``decide``: every mode, every floor, with and without a matching
always-allow entry and the other rules that would skip the dialog."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from toolvet.domain import policy
from toolvet.domain.policy import (
    AllowEntry,
    AllowIndex,
    ApprovalFloor,
    PermissionMode,
    ReviewState,
    ToolFacts,
    decide,
    stricter,
)

SERVER, TOOL, PRINT = "github", "create_issue", "sha256:current"
MATCHING = AllowIndex([AllowEntry(SERVER, TOOL, PRINT)])

# A tool every mode would run without a dialog under floor ``user``: reviewed read-only, trusted
# read-only annotations, and (with MATCHING) an always-allow entry for its current fingerprint.
RUNS_EVERYWHERE = ToolFacts(
    server_type=SERVER, name=TOOL, fingerprint=PRINT, available=True, review_state=ReviewState.REVIEWED,
    hold_changed_tools=True, writable=False, trust_annotations=True,
    annotations={"readOnlyHint": True, "destructiveHint": False},
)
ASKS_IN_AUTO = replace(RUNS_EVERYWHERE, writable=True, trust_annotations=False)


@pytest.mark.parametrize(("mode", "floor", "entries"), list(itertools.product(
    PermissionMode, ApprovalFloor, ("none", "matching"))))
def test_every_mode_under_every_floor(mode: PermissionMode, floor: ApprovalFloor, entries: str) -> None:
    index = MATCHING if entries == "matching" else AllowIndex()
    for base in (RUNS_EVERYWHERE, ASKS_IN_AUTO):
        decision = decide(mode, replace(base, approval=floor), disabled=False, always_allow=index)
        under_user = decide(mode, base, disabled=False, always_allow=index)
        assert decision.approval is floor
        assert not decision.refused
        if floor is ApprovalFloor.USER:
            # The default floor changes nothing the mode and the lists decided, reasons included.
            assert (decision.auto_allow, decision.reasons) == (under_user.auto_allow, under_user.reasons)
            assert not decision.operator_only
        else:
            assert decision.auto_allow is False
            named = policy.R_FLOOR_ALWAYS if floor is ApprovalFloor.ALWAYS else policy.R_FLOOR_OPERATOR
            assert decision.reasons == (named, policy.R_ASKS_FLOOR)
            assert decision.operator_only is (floor is ApprovalFloor.OPERATOR)


def test_the_floor_reasons_name_the_floor_and_who_approves() -> None:
    always = decide("allow", replace(RUNS_EVERYWHERE, approval=ApprovalFloor.ALWAYS), disabled=False,
                    always_allow=MATCHING)
    operator = decide("allow", replace(RUNS_EVERYWHERE, approval=ApprovalFloor.OPERATOR), disabled=False,
                      always_allow=MATCHING)
    assert "approval floor always" in always.reasons[0]
    assert "approval floor operator" in operator.reasons[0]
    assert "only an operator or an admin may approve it" in operator.reasons[0]


def test_a_refusal_wins_over_any_floor() -> None:
    for floor in ApprovalFloor:
        decision = decide("ask", replace(RUNS_EVERYWHERE, available=False, approval=floor), disabled=True,
                          always_allow=MATCHING)
        assert decision.refused
        assert decision.reasons == (policy.R_NOT_AVAILABLE, policy.R_DISABLED)


def test_an_unknown_mode_is_refused_under_a_floor_too() -> None:
    with pytest.raises(ValueError, match="ask, auto, allow"):
        decide("sometimes", replace(RUNS_EVERYWHERE, approval=ApprovalFloor.OPERATOR), disabled=False,
               always_allow=())


def test_the_stricter_floor_applies() -> None:
    order = [ApprovalFloor.USER, ApprovalFloor.ALWAYS, ApprovalFloor.OPERATOR]
    for server, tool in itertools.product(order, order):
        assert stricter(server, tool) is max(server, tool, key=order.index)
    assert stricter("user", "operator") is ApprovalFloor.OPERATOR
    assert stricter() is ApprovalFloor.USER
    with pytest.raises(ValueError):
        stricter("lenient")
