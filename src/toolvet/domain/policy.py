"""Who may run what: availability, review state and what is offered (SPEC §3), and the approval
decision for a user in a scope (SPEC §5)."""

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
    """A tool is on offer only when it and its server are both enabled (seed mcp-tool)."""
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


# --- Approval (SPEC §5) --------------------------------------------------------------------------
# ``decide`` runs once per tool per catalog or call, so it is plain dataclasses with slots, constant
# reason strings, and always-allow entries indexed once per scope (``AllowIndex``): no pydantic here.


class PermissionMode(StrEnum):
    """A user's permission mode (SPEC §5); ``auto`` is the default."""

    ASK = "ask"
    AUTO = "auto"
    ALLOW = "allow"


DEFAULT_MODE = PermissionMode.AUTO


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
R_RUNS = "runs without a dialog"
R_ASKS = "asks: no rule skips the dialog"
_NOT_REVIEWED = {state: R_NOT_REVIEWED.format(state=state.value) for state in ReviewState}


def reviewed_read_only(writable: bool, state: ReviewState) -> bool:
    """Rule 3 of ``auto``: an operator reviewed the tool as read-only. Also what makes a descriptor's
    ``requireApproval`` false (SPEC §5.1)."""
    return not writable and state is ReviewState.REVIEWED


def trusted_read_only(trust_annotations: bool, annotations: Mapping[str, Any] | None) -> bool:
    """Rule 4 of ``auto``: a trusted server's annotations say read-only and explicitly not destructive."""
    return (trust_annotations and annotations is not None and annotations.get("readOnlyHint") is True
            and annotations.get("destructiveHint") is False)


def _decision(auto_allow: bool, refused: bool, *reasons: str) -> Decision:
    return Decision(auto_allow, refused, reasons)


# Every reason is one of a few constants, so every possible Decision is built once here and ``decide``
# only picks one: no object is created per decision.
_REFUSED = {
    (na, held, dis): _decision(False, True, *[r for r, on in ((R_NOT_AVAILABLE, na), (R_HELD, held),
                                                               (R_DISABLED, dis)) if on])
    for na in (False, True) for held in (False, True) for dis in (False, True) if (na or held or dis)
}
_ALLOWED = _decision(True, False, R_ALLOW, R_RUNS)
_ENTRY_REASONS = (R_ENTRY_NONE, R_ENTRY_MATCH, R_ENTRY_STALE)  # indexed by the entry code below
_ASK = tuple(_decision(code == 1, False, R_ASK, reason, R_RUNS if code == 1 else R_ASKS)
             for code, reason in enumerate(_ENTRY_REASONS))
_REVIEW_REASONS = (R_READ_ONLY, R_WRITABLE, *(_NOT_REVIEWED[s] for s in ReviewState))
_ANNOTATION_REASONS = (R_TRUSTED, R_UNTRUSTED, R_UNANNOTATED, R_DESTRUCTIVE)
_AUTO = {
    (host, entry, review, annotation): _decision(
        allowed, False, R_AUTO, R_HOST if host else R_NOT_HOST, _ENTRY_REASONS[entry],
        _REVIEW_REASONS[review], _ANNOTATION_REASONS[annotation], R_RUNS if allowed else R_ASKS,
    )
    for host in (False, True) for entry in range(3) for review in range(len(_REVIEW_REASONS))
    for annotation in range(4)
    for allowed in [host or entry == 1 or review == 0 or annotation == 0]
}
_NOT_REVIEWED_CODE = {state: 2 + i for i, state in enumerate(ReviewState)}
_REVIEWED = ReviewState.REVIEWED
_CHANGED = ReviewState.CHANGED


def decide(
    mode: PermissionMode | str, tool: ToolFacts, *, disabled: bool,
    always_allow: AllowIndex | Iterable[AllowEntry],
) -> Decision:
    """SPEC §5: refused (not offered, or disabled in the scope), run without a dialog, or asked about.

    Pass an ``AllowIndex`` built once per scope when deciding for many tools; any other iterable of
    entries is indexed on each call. The Decision returned is shared: it is immutable."""
    index = always_allow if isinstance(always_allow, AllowIndex) else AllowIndex(always_allow)
    state = tool.review_state
    not_available = not tool.available
    held = not not_available and ((state is _CHANGED and tool.hold_changed_tools) or tool.held_flagged)
    if not_available or held or disabled:
        return _REFUSED[not_available, held, disabled]
    if mode == "allow":
        return _ALLOWED
    prints = index._index.get((tool.server_type, tool.name))
    entry = 0 if prints is None else 1 if tool.fingerprint in prints else 2
    if mode == "ask":
        return _ASK[entry]
    if mode != "auto":
        raise ValueError(f"{mode!r} is not one of ask, auto, allow")
    review = 1 if tool.writable else 0 if state is _REVIEWED else _NOT_REVIEWED_CODE[state]
    annotations = tool.annotations
    if not tool.trust_annotations:
        annotation = 1
    elif annotations is None or annotations.get("readOnlyHint") is not True:
        annotation = 2
    elif annotations.get("destructiveHint") is not False:
        annotation = 3
    else:
        annotation = 0
    return _AUTO[tool.require_approval is False, entry, review, annotation]
