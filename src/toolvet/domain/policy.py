"""Who may run what: availability, review state and what is offered, and the approval
decision for a user in a scope (docs/policy.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ReviewState(StrEnum):
    UNREVIEWED = "unreviewed"
    REVIEWED = "reviewed"
    CHANGED = "changed"


def is_available(tool_enabled: bool, server_enabled: bool) -> bool:
    """A tool is on offer only when it and its server are both enabled."""
    return tool_enabled and server_enabled


def review_state(reviewed_fingerprint: str | None, current_fingerprint: str) -> ReviewState:
    """``changed`` once the contract moved away from the fingerprint a person reviewed."""
    if reviewed_fingerprint is None:
        return ReviewState.UNREVIEWED
    if reviewed_fingerprint == current_fingerprint:
        return ReviewState.REVIEWED
    return ReviewState.CHANGED


def held_for_findings(hold_flagged_tools: bool, state: ReviewState, findings: Iterable[Mapping[str, Any]]) -> bool:
    """A server holding flagged tools holds one with a ``high`` finding until its current contract is reviewed."""
    return hold_flagged_tools and state is not ReviewState.REVIEWED and any(
        f.get("severity") == "high" for f in findings)


def offered(available: bool, state: ReviewState, hold_changed_tools: bool, held_flagged: bool = False) -> bool:
    """Available, and neither a changed contract held for review nor a flagged tool held until reviewed
    (``held_flagged``, from :func:`held_for_findings`)."""
    return available and not ((state is ReviewState.CHANGED and hold_changed_tools) or held_flagged)


# --- Approval -----------------------------------------------------------------------------------
# ``decide`` runs once per tool per catalog or call, so it is plain dataclasses with slots, constant
# reason strings, and always-allow entries indexed once per scope (``AllowIndex``): no pydantic here.


class PermissionMode(StrEnum):
    """A user's permission mode; ``auto`` is the default."""

    ASK = "ask"
    AUTO = "auto"
    ALLOW = "allow"


DEFAULT_MODE = PermissionMode.AUTO


class ApprovalFloor(StrEnum):
    """An operator's floor under the users' choices, set on a server and on a tool.

    ``user``: the user's permission mode and the scope's lists decide. ``always``: every call asks,
    whatever the mode or the always-allow list. ``operator``: every call asks, and only an operator or
    an admin may approve it (never the call's own consumer token, so never its user by elicitation).
    """

    USER = "user"
    ALWAYS = "always"
    OPERATOR = "operator"


_FLOOR_RANK = {ApprovalFloor.USER: 0, ApprovalFloor.ALWAYS: 1, ApprovalFloor.OPERATOR: 2}


def stricter(*floors: ApprovalFloor | str) -> ApprovalFloor:
    """The strictest of the floors given (a server's and its tool's): the one that applies."""
    return max((ApprovalFloor(floor) for floor in floors), key=_FLOOR_RANK.__getitem__,
               default=ApprovalFloor.USER)


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """What ``decide`` needs to know about one tool, read from the registry."""

    server_type: str
    name: str
    fingerprint: str
    available: bool
    review_state: ReviewState
    hold_changed_tools: bool
    writable: bool
    trust_annotations: bool
    annotations: Mapping[str, Any] | None
    require_approval: bool | None = None  # set (False) by host tools only; MCP tools leave it unset
    held_flagged: bool = False  # held_for_findings(...): a high finding on a server that holds flagged tools
    approval: ApprovalFloor = ApprovalFloor.USER  # stricter(server's, tool's): the operator's floor


@dataclass(frozen=True, slots=True)
class AllowEntry:
    """One always-allow entry: pinned to a server (serverType), a tool name and a fingerprint."""

    server_type: str
    tool_name: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome for one tool: refused, run without a dialog (``auto_allow``), or asked about.
    ``reasons`` holds every rule that was weighed, each as a short sentence."""

    auto_allow: bool
    refused: bool
    reasons: tuple[str, ...]
    approval: ApprovalFloor = ApprovalFloor.USER  # the floor the decision was made under

    @property
    def operator_only(self) -> bool:
        """Only an operator or an admin may approve the call (not its own consumer, not by elicitation)."""
        return self.approval is ApprovalFloor.OPERATOR


class AllowIndex:
    """A scope's always-allow entries indexed by (serverType, toolName) -> fingerprints, built once so
    each decision is one dict lookup. Iterating yields the entries again."""

    __slots__ = ("_index",)

    def __init__(self, entries: Iterable[AllowEntry] = ()) -> None:
        index: dict[tuple[str, str], set[str]] = {}
        for entry in entries:
            index.setdefault((entry.server_type, entry.tool_name), set()).add(entry.fingerprint)
        self._index: dict[tuple[str, str], frozenset[str]] = {k: frozenset(v) for k, v in index.items()}

    def fingerprints(self, server_type: str, tool_name: str) -> frozenset[str] | None:
        """The fingerprints allowed for this tool of this server, or None when it has no entry."""
        return self._index.get((server_type, tool_name))

    def __iter__(self) -> Iterator[AllowEntry]:
        for (server_type, tool_name), prints in self._index.items():
            for fingerprint in sorted(prints):
                yield AllowEntry(server_type, tool_name, fingerprint)

    def __len__(self) -> int:
        return sum(len(prints) for prints in self._index.values())


# Every sentence a decision can carry, built once.
R_NOT_AVAILABLE = "refused: the tool or its server is disabled by an operator"
R_HELD = "refused: its definition changed after review and its server holds changed tools"
R_HELD_FLAGGED = "refused: it has a high finding and its server holds flagged tools until they are reviewed"
R_DISABLED = "refused: the scope's disabled map lists it"
R_ALLOW = "permission mode allow: every tool runs without a dialog"
R_ASK = "permission mode ask: only a matching always-allow entry skips the dialog"
R_AUTO = "permission mode auto: the dialog is skipped when any rule holds"
R_ENTRY_MATCH = "an always-allow entry matches this server, tool and fingerprint"
R_ENTRY_STALE = "an always-allow entry exists for an older definition (its fingerprint differs): asks again"
R_ENTRY_NONE = "no always-allow entry for this tool of this server"
R_HOST = "requireApproval is false (a host tool)"
R_NOT_HOST = "requireApproval is not false (MCP tools leave it unset)"
R_READ_ONLY = "an operator reviewed it as read-only (writable=false, review state reviewed)"
R_WRITABLE = "not reviewed as read-only: writable is true"
R_NOT_REVIEWED = "not reviewed as read-only: writable is false but the review state is {state}"
R_TRUSTED = "its server trusts annotations, which say readOnlyHint: true and destructiveHint: false"
R_UNTRUSTED = "annotations decide nothing: its server is not marked trust_annotations"
R_UNANNOTATED = "annotations do not say readOnlyHint: true (an unannotated tool asks)"
R_DESTRUCTIVE = "annotations do not say destructiveHint: false (absent means destructive)"
R_FLOOR_ALWAYS = ("approval floor always (set by an operator on the tool or its server): every call asks, "
                  "whatever the permission mode or the always-allow list")
R_FLOOR_OPERATOR = ("approval floor operator (set by an operator on the tool or its server): every call asks, "
                    "and only an operator or an admin may approve it")
R_RUNS = "runs without a dialog"
R_ASKS = "asks: no rule skips the dialog"
R_ASKS_FLOOR = "asks: the approval floor skips no dialog"
_MODES = frozenset(PermissionMode)
_NOT_REVIEWED = {state: R_NOT_REVIEWED.format(state=state.value) for state in ReviewState}


def reviewed_read_only(writable: bool, state: ReviewState) -> bool:
    """Rule 3 of ``auto``: an operator reviewed the tool as read-only. Also what makes a descriptor's
    ``requireApproval`` false (docs/policy.md#descriptors)."""
    return not writable and state is ReviewState.REVIEWED


def trusted_read_only(trust_annotations: bool, annotations: Mapping[str, Any] | None) -> bool:
    """Rule 4 of ``auto``: a trusted server's annotations say read-only and explicitly not destructive."""
    return (trust_annotations and annotations is not None and annotations.get("readOnlyHint") is True
            and annotations.get("destructiveHint") is False)


def decide(
    mode: PermissionMode | str, tool: ToolFacts, *, disabled: bool,
    always_allow: AllowIndex | Iterable[AllowEntry],
) -> Decision:
    """The approval decision: refused (not offered, or disabled in the scope), run without a dialog, or asked about.

    The rules, in order, each adding its reason:

    1. A tool that is not available (it or its server disabled), or held (its contract changed after
       review, on a server that holds changed tools; or it has a ``high`` finding, on a server that
       holds flagged tools, until reviewed), or listed in the scope's disabled map is refused.
    2. An approval floor of ``always`` or ``operator`` (the stricter of the tool's and its server's,
       ``ToolFacts.approval``): it asks, whatever the mode or the always-allow list; the floor is the
       reason. Under ``operator`` only an operator or an admin may approve it.
    3. Mode ``allow``: it runs.
    4. Mode ``ask``: it runs only when an always-allow entry matches its current fingerprint.
    5. Mode ``auto``: it runs when any of these holds, all of them weighed and given: it is a host tool
       with ``requireApproval`` false; an always-allow entry matches; an operator reviewed it as
       read-only; its server trusts annotations that say read-only and not destructive.

    Under floor ``user`` (the default) rules 3 to 5 decide and the floor adds no reason.

    Pass an ``AllowIndex`` built once per scope when deciding for many tools; any other iterable of
    entries is indexed on each call.
    """
    refusals = _refusals(tool, disabled)
    if refusals:
        return Decision(False, True, refusals, tool.approval)
    if mode not in _MODES:
        raise ValueError(f"{mode!r} is not one of ask, auto, allow")
    if tool.approval is ApprovalFloor.ALWAYS:
        return Decision(False, False, (R_FLOOR_ALWAYS, R_ASKS_FLOOR), tool.approval)
    if tool.approval is ApprovalFloor.OPERATOR:
        return Decision(False, False, (R_FLOOR_OPERATOR, R_ASKS_FLOOR), tool.approval)
    if mode == PermissionMode.ALLOW:
        return Decision(True, False, (R_ALLOW, R_RUNS))
    index = always_allow if isinstance(always_allow, AllowIndex) else AllowIndex(always_allow)
    entry_matches, entry_reason = _entry_rule(tool, index)
    if mode == PermissionMode.ASK:
        return Decision(entry_matches, False, (R_ASK, entry_reason, R_RUNS if entry_matches else R_ASKS))
    host = tool.require_approval is False
    review_holds, review_reason = _review_rule(tool)
    annotations_hold, annotation_reason = _annotation_rule(tool)
    runs = host or entry_matches or review_holds or annotations_hold
    return Decision(runs, False, (R_AUTO, R_HOST if host else R_NOT_HOST, entry_reason, review_reason,
                                  annotation_reason, R_RUNS if runs else R_ASKS))


def _refusals(tool: ToolFacts, disabled: bool) -> tuple[str, ...]:
    """Rule 1: why the tool may not run at all (empty when nothing refuses it). A tool that is not
    available is not also called held."""
    if not tool.available:
        return (R_NOT_AVAILABLE, R_DISABLED) if disabled else (R_NOT_AVAILABLE,)
    if tool.review_state is ReviewState.CHANGED and tool.hold_changed_tools:
        return (R_HELD, R_DISABLED) if disabled else (R_HELD,)
    if tool.held_flagged:
        return (R_HELD_FLAGGED, R_DISABLED) if disabled else (R_HELD_FLAGGED,)
    return (R_DISABLED,) if disabled else ()


def _entry_rule(tool: ToolFacts, index: AllowIndex) -> tuple[bool, str]:
    """Whether an always-allow entry matches the tool's server, name and current fingerprint."""
    prints = index.fingerprints(tool.server_type, tool.name)
    if prints is None:
        return False, R_ENTRY_NONE
    if tool.fingerprint in prints:
        return True, R_ENTRY_MATCH
    return False, R_ENTRY_STALE


def _review_rule(tool: ToolFacts) -> tuple[bool, str]:
    """Whether an operator reviewed the tool as read-only (:func:`reviewed_read_only`)."""
    if tool.writable:
        return False, R_WRITABLE
    if tool.review_state is ReviewState.REVIEWED:
        return True, R_READ_ONLY
    return False, _NOT_REVIEWED[tool.review_state]


def _annotation_rule(tool: ToolFacts) -> tuple[bool, str]:
    """Whether a trusted server's annotations say read-only and not destructive (:func:`trusted_read_only`)."""
    if not tool.trust_annotations:
        return False, R_UNTRUSTED
    annotations = tool.annotations
    if annotations is None or annotations.get("readOnlyHint") is not True:
        return False, R_UNANNOTATED
    if annotations.get("destructiveHint") is not False:
        return False, R_DESTRUCTIVE
    return True, R_TRUSTED
