"""Tool shadowing across servers: one server's tool steering how another server's tool is used, or copying
another server's tool so the model calls the copy.

Both need the registry's other tools, given as plain :class:`OtherTool` data. A mention counts when the
other tool's name appears as a name (it has ``_``, ``-``, ``.``, a digit or an inner capital, or it is
quoted) with an instruction in the same sentence ("when you call", "instead of", "never use"). A copy is
a name within a small edit of the other's (``rapidfuzz``; confusables folded first) whose description is
nearly the same: the same name with a different job (``search`` on GitHub and on Jira) is not flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from rapidfuzz import fuzz

from toolvet.domain.findings.context import sentence_end, sentence_start
from toolvet.domain.findings.finding import finding
from toolvet.domain.findings.strings import texts
from toolvet.domain.findings.text import normalise

NAME_SIMILARITY: Final = 85.0
DESCRIPTION_SIMILARITY: Final = 85.0

_STEER: Final = re.compile(
    r"\b(?:when|whenever|before|after|instead of|rather than|do not|don'?t|never|always|stop|avoid|prefer|replace"
    r"|deprecated|in place of|every time|each time|asks? for)\b"
)
_NAME_LIKE: Final = re.compile(r"[_\-.0-9]|[a-z][A-Z]")


@dataclass(frozen=True, slots=True)
class OtherTool:
    """A tool of another server, as the cross-server checks need it."""

    server: str
    name: str
    description: str | None = None
    title: str | None = None


def _skeleton(name: str) -> str:
    return normalise(name, key=True).folded.replace(" ", "_")


def _description(definition: dict[str, Any]) -> str:
    return " ".join(v for v in (definition.get("title"), definition.get("description")) if isinstance(v, str))


def _mentions(definition: dict[str, Any], other: OtherTool) -> dict[str, Any] | None:
    name = other.name
    quoted_forms = (f"`{name}`", f"'{name}'", f'"{name}"')
    for text in texts(definition):
        if text.key or text.path == "name" or name not in text.value:
            continue
        value = text.value
        for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", value):
            quoted = any(value.startswith(q, m.start() - 1) for q in quoted_forms)
            if not (_NAME_LIKE.search(name) or quoted or value[m.end():m.end() + 5].lower() == " tool"):
                continue
            folded = value.lower()
            lo, hi = sentence_start(folded, m.start()), sentence_end(folded, m.end())
            if _STEER.search(folded, lo, hi):
                return finding("tool-shadowing", "high",
                               f"instructs the model about {other.name!r} of server {other.server!r}", text.path,
                               span=(m.start(), m.end()), evidence=value[lo:hi][:160], other_server=other.server,
                               other_tool=other.name)
    return None


def _copies(definition: dict[str, Any], other: OtherTool) -> dict[str, Any] | None:
    name = definition.get("name")
    if not isinstance(name, str):
        return None
    if fuzz.ratio(_skeleton(name), _skeleton(other.name)) < NAME_SIMILARITY:
        return None
    mine = normalise(_description(definition)).folded
    theirs = normalise(" ".join(v for v in (other.title, other.description) if v)).folded
    if not mine or not theirs or fuzz.token_sort_ratio(mine, theirs) < DESCRIPTION_SIMILARITY:
        return None
    return finding("tool-duplicate", "high",
                   f"nearly the same name and description as {other.name!r} of server {other.server!r}", "name",
                   span=(0, len(name)), evidence=name, other_server=other.server, other_tool=other.name)


def cross_server_findings(server: str, definition: dict[str, Any], others: Iterable[OtherTool]) -> list[dict[str, Any]]:
    """Findings ``definition`` (a tool of ``server``) earns against other servers' tools. Tools of the same
    server are skipped (a tool may refer to its siblings)."""
    found: list[dict[str, Any]] = []
    for other in others:
        if other.server == server:
            continue
        for check in (_mentions, _copies):
            hit = check(definition, other)
            if hit is not None:
                found.append(hit)
    return found
