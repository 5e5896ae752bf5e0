"""The findings a definition earns on its own: every string normalised once and read by every rule family."""

from __future__ import annotations

from typing import Any

from toolvet.domain.findings import (
    harvesting,
    languages,
    languages_calls,
    languages_harvesting,
    payloads,
    phrases,
    secrets,
)
from toolvet.domain.findings.finding import Severity, finding
from toolvet.domain.findings.headers import ANNOTATION, header_findings
from toolvet.domain.findings.hidden import Hidden
from toolvet.domain.findings.screen import FAMILIES, needed
from toolvet.domain.findings.spelling import corrections
from toolvet.domain.findings.strings import Text, texts
from toolvet.domain.findings.text import LONG_WORDS, Normalised, normalise, read_again, read_spelled, reads_twice
from toolvet.domain.names import TOOL_NAME_PATTERN, is_conventional_tool_name
from toolvet.jsontext import compact


def _hidden_finding(text: Text, norm: Normalised, hidden: Hidden) -> dict[str, Any]:
    codes = ", ".join(f"U+{cp:04X}" for cp in sorted(hidden.codepoints))
    spelled = hidden.tag_text
    severity: Severity = "high" if len(spelled) >= 2 or hidden.bidi else "warning"
    message = f"invisible or control characters {codes}"
    if spelled:
        message += f"; tag characters spell {spelled!r}"
    return finding("hidden-characters", severity, message, text.path,
                   span=(hidden.first, hidden.last + 1), evidence=norm.original[hidden.first:hidden.last + 1],
                   **({"decoded": spelled} if spelled else {}))


def _text_rules(text: Text, norm: Normalised, families: frozenset[str], depth: int = 0) -> list[dict[str, Any]]:
    def recheck(decoded: str, path: str) -> list[dict[str, Any]]:
        inner = Text(path, decoded, parameter=text.parameter)
        return _text_rules(inner, normalise(decoded), FAMILIES, depth + 1)

    found: list[dict[str, Any]] = []
    if "phrases" in families:
        found += phrases.check(text, norm)
    if "languages" in families:
        found = _merged(found, languages.check(text, norm, _flagged(found)))
        found = _merged(found, languages_calls.check(text, norm, _flagged(found)))
    if "harvesting" in families:
        found += harvesting.check(text, norm)
    if "payloads" in families:
        found += payloads.check(text, norm, recheck, depth)
    if "secrets" in families:
        found += secrets.check(text, norm)
    if "languages" in families:
        passed = [f for f in languages_harvesting.check(text, norm, _flagged(found)) if f["severity"] != "info"]
        found = _merged(found, passed)
    return found


def _flagged(found: list[dict[str, Any]]) -> set[str]:
    return {f["code"] for f in found if f["severity"] != "info"}


def _merged(found: list[dict[str, Any]], more: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``found`` and the findings ``more`` of the rules in other languages, one finding per code and string:
    a flagged finding of ``more`` takes the place of ``found``'s of its code (one only quoted), and a path
    passed on that of the ``sensitive-path`` note too; an ``info`` one joins only where ``found`` has none."""
    raised = _flagged(more)
    gone = raised | {"sensitive-path"} if "credential-harvest" in raised else raised
    codes = {f["code"] for f in found}
    return [f for f in found if f["code"] not in gone] + [
        f for f in more if f["code"] in raised or f["code"] not in codes]


def check_text(text: Text) -> list[dict[str, Any]]:
    """Every finding one string earns."""
    # The screen per string: the parameter the string describes is part of what some rules read.
    families = needed(text.value if text.parameter is None else f"{text.value} {text.parameter}")
    if not families and text.value.isascii():
        return []
    norm = normalise(text.value, key=text.key)
    found: list[dict[str, Any]] = []
    if norm.hidden is not None:
        found.append(_hidden_finding(text, norm, norm.hidden))
    if norm.mixed:
        at = norm.mixed[0]
        found.append(finding("confusable-characters", "warning",
                             "a word mixes Latin letters with look-alike letters of another script", text.path,
                             span=(at, at + 1), evidence=norm.original[max(0, at - 12):at + 12]))
    found += _text_rules(text, norm, families)
    # More readings, each adding the codes no reading before it raised. A second reading with the model
    # named as "you", the addressee every rule is written for ("the assistant was told …" as "you were
    # told …"), negations spelled out ("isn't to be" as "is not to be") and "kindly" left out; a third
    # with slips in rule words put right ("previuos instrutcions", :mod:`.spelling`).
    readings: list[Normalised] = []
    if reads_twice(norm.folded):
        readings.append(read_again(norm, key=text.key))
    if slips := corrections(LONG_WORDS.findall(norm.folded)):
        spelled = read_spelled(norm, slips, key=text.key)
        readings.append(read_again(spelled, key=text.key) if reads_twice(spelled.folded) else spelled)
    for again in readings:
        raised = _flagged(found)
        found += [f for f in _text_rules(text, again, families | needed(again.folded))
                  if f["severity"] != "info" and f["code"] not in raised]
    return found


def static_findings(definition: dict[str, Any], text: str | None = None) -> list[dict[str, Any]]:
    """Findings that a definition earns on its own. ``text``, the definition as JSON (compact, not
    ASCII-escaped) when the caller has it, lets a clean definition skip the per-string checks."""
    found: list[dict[str, Any]] = []
    name = definition.get("name")
    if isinstance(name, str) and not is_conventional_tool_name(name):
        found.append(finding("name-pattern", "warning", f"name {name!r} does not match {TOOL_NAME_PATTERN}", "name",
                             span=(0, len(name)), evidence=name))
    if ANNOTATION in (text if text is not None else compact(definition.get("inputSchema"))):
        found += header_findings(definition)
    if text is not None and not needed(text):
        return found
    strings = texts(definition)
    if text is None and not needed(" ".join(t.value for t in strings)):
        return found
    for item in strings:
        found += check_text(item)
    return found
