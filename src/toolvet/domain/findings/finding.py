"""One finding as it is stored on a tool: a plain dict, so the claim column and the API carry it as is."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Final, Literal

Severity = Literal["info", "warning", "high"]

#: Severities from least to most serious; a tool is *flagged* by a ``warning`` or ``high`` finding.
SEVERITIES: Final[tuple[Severity, ...]] = ("info", "warning", "high")
_RANK: Final[dict[str, int]] = {name: rank for rank, name in enumerate(SEVERITIES)}

#: Codes whose findings keep the ``kind`` older readers know (``kind`` was the only name a finding had).
_LEGACY_KIND: Final = {
    "instruction-override": "instruction-text",
    "directive-markup": "instruction-text",
    "secrecy": "instruction-text",
    "hidden-characters": "invisible-characters",
}

EVIDENCE_CHARS: Final = 160


def finding(
    code: str, severity: Severity, message: str, path: str | None = None, *,
    span: tuple[int, int] | None = None, evidence: str | None = None, **extra: Any,
) -> dict[str, Any]:
    """A finding dict: ``code`` (stable), ``severity``, ``message``, the JSON ``path`` of the string it came
    from, the ``span`` ``[start, end)`` in that original string and its ``evidence`` (the original text of
    the span, cut to :data:`EVIDENCE_CHARS`). ``kind`` repeats the code, or the older name of its family."""
    out: dict[str, Any] = {"kind": _LEGACY_KIND.get(code, code), "code": code, "severity": severity,
                           "message": message}
    if path:
        out["path"] = path
    if span is not None:
        out["span"] = [span[0], span[1]]
    if evidence is not None:
        out["evidence"] = evidence[:EVIDENCE_CHARS]
    out.update(extra)
    return out


def severity_rank(severity: object) -> int:
    """0, 1, 2 for info, warning, high; -1 for anything else (a finding stored before severities)."""
    return _RANK.get(severity, -1) if isinstance(severity, str) else -1


def highest_severity(findings: list[dict[str, Any]]) -> Severity | None:
    """The most serious severity among ``findings``, or None when there are none with a severity."""
    best = max((severity_rank(f.get("severity")) for f in findings), default=-1)
    return SEVERITIES[best] if best >= 0 else None


def is_flagged(findings: list[dict[str, Any]]) -> bool:
    """True when a ``warning`` or ``high`` finding is among ``findings``."""
    return any(severity_rank(f.get("severity")) >= 1 for f in findings)


class CompiledOnUse:
    """A rule whose expression (``source``) is compiled when a text first needs it, not when its module
    loads: the screen spares clean definitions every rule, so a process that meets only clean ones (a
    discovery writer over a fleet of plain tools) compiles none of them, where compiling them all took a
    third of a second of its first finding. Mixed into the phrase and language rules' dataclasses."""

    source: str

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled expression."""
        return re.compile(self.source)
