"""What changed between two definitions of one tool, in words a reviewer reads at a glance (docs/review.md).

``diff_definitions(before, after)`` compares two advertised tool objects (the MCP wire form, as kept in
a tool's history) and returns every change as data (``kind``, ``path``, ``message``, ``before``,
``after``, and for prose a unified and a word-level text diff) plus a short summary in sentences.

Absent members are ``None`` in a change's ``before``/``after``. Annotations are read with the defaults
MCP gives them (``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false,
``openWorldHint`` true), so "true → absent" says what absent means.

Pure: stdlib only.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ChangeKind(StrEnum):
    TITLE_CHANGED = "title-changed"
    DESCRIPTION_CHANGED = "description-changed"
    PARAMETER_ADDED = "parameter-added"
    PARAMETER_REMOVED = "parameter-removed"
    PARAMETER_NEWLY_REQUIRED = "parameter-newly-required"
    PARAMETER_NO_LONGER_REQUIRED = "parameter-no-longer-required"
    PARAMETER_TYPE_CHANGED = "parameter-type-changed"
    PARAMETER_DESCRIPTION_CHANGED = "parameter-description-changed"
    INPUT_SCHEMA_CHANGED = "input-schema-changed"
    OUTPUT_SCHEMA_ADDED = "output-schema-added"
    OUTPUT_SCHEMA_REMOVED = "output-schema-removed"
    OUTPUT_SCHEMA_CHANGED = "output-schema-changed"
    ANNOTATION_CHANGED = "annotation-changed"
    READ_ONLY_CLAIM_CHANGED = "read-only-claim-changed"
    META_CHANGED = "meta-changed"
    ICONS_CHANGED = "icons-changed"
    OTHER_FIELD_CHANGED = "other-field-changed"


#: What MCP says an absent hint means.
ANNOTATION_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

# Members with a kind of their own; any other top-level member is "other".
_KNOWN = ("title", "description", "inputSchema", "outputSchema", "annotations", "_meta", "icons")
# Beyond this many words a side, the word-level diff is skipped (the unified one is always there).
_MAX_WORD_DIFF_TOKENS = 4000
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class WordSpan:
    """One run of a word-level diff: ``op`` is ``=`` (kept), ``-`` (removed) or ``+`` (added)."""

    op: str
    text: str


@dataclass(frozen=True)
class Change:
    """One change, located by a dotted ``path`` into the wire form (``inputSchema.properties.bcc``)."""

    kind: ChangeKind
    path: str
    message: str
    before: Any = None
    after: Any = None
    text_diff: str | None = None
    word_diff: list[WordSpan] | None = None


@dataclass(frozen=True)
class DefinitionDiff:
    """Every change, and the summary sentences a reviewer reads first. ``note`` explains an empty diff
    that is not "nothing changed" (there was nothing to compare with)."""

    changes: list[Change] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    note: str | None = None


NOTHING_TO_COMPARE = "nothing to compare with: no earlier definition (the tool was never reviewed)"


def diff_definitions(before: dict[str, Any] | None, after: dict[str, Any]) -> DefinitionDiff:
    """The changes from ``before`` to ``after``.

    ``before=None`` means there is nothing to compare with (a tool never reviewed and with a single
    definition): the result has no changes and says so in ``note`` and ``summary``, rather than
    listing every member as added, which would bury the one thing a reviewer needs to know (that this
    is a first look at the whole definition). Which earlier definition to compare with (the reviewed
    one, else the previous one in history) is the caller's choice.
    """
    if before is None:
        return DefinitionDiff(summary=[NOTHING_TO_COMPARE], note=NOTHING_TO_COMPARE)
    changes = [
        *_text_member(before, after, "title", ChangeKind.TITLE_CHANGED),
        *_text_member(before, after, "description", ChangeKind.DESCRIPTION_CHANGED),
        *_input_schema(before.get("inputSchema"), after.get("inputSchema")),
        *_output_schema(before.get("outputSchema"), after.get("outputSchema")),
        *_annotations(before.get("annotations"), after.get("annotations")),
        *_whole_member(before, after, "_meta", ChangeKind.META_CHANGED),
        *_whole_member(before, after, "icons", ChangeKind.ICONS_CHANGED),
        *_other_members(before, after),
    ]
    return DefinitionDiff(changes=changes, summary=summarize(changes) or ["no changes"])


# Text.


def text_diff(before: str | None, after: str | None) -> str:
    """A unified line diff of two texts, labelled ``before`` and ``after``."""
    lines = difflib.unified_diff(
        (before or "").splitlines(), (after or "").splitlines(), "before", "after", lineterm=""
    )
    return "\n".join(lines)


def word_diff(before: str | None, after: str | None) -> list[WordSpan] | None:
    """A word-level diff (whitespace and punctuation are tokens of their own), or None when too long."""
    a, b = _TOKEN.findall(before or ""), _TOKEN.findall(after or "")
    if max(len(a), len(b)) > _MAX_WORD_DIFF_TOKENS:
        return None
    spans: list[WordSpan] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            spans.append(WordSpan("=", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            spans.append(WordSpan("-", "".join(a[i1:i2])))
        if j2 > j1:
            spans.append(WordSpan("+", "".join(b[j1:j2])))
    return spans


def _text_change(kind: ChangeKind, path: str, message: str, old: Any, new: Any) -> Change:
    if (old is None or isinstance(old, str)) and (new is None or isinstance(new, str)):
        return Change(kind, path, message, old, new, text_diff(old, new), word_diff(old, new))
    return Change(kind, path, message, old, new)


def _text_member(before: dict[str, Any], after: dict[str, Any], key: str, kind: ChangeKind) -> list[Change]:
    old, new = before.get(key), after.get(key)
    if old == new:
        return []
    message = f"title: {show(old)} → {show(new)}" if kind is ChangeKind.TITLE_CHANGED else f"{key} {_verb(old, new)}"
    return [_text_change(kind, key, message, old, new)]


# Input parameters.


def type_name(schema: Any) -> str:
    """A parameter's type in a word: ``string``, ``string|null``, ``enum``, ``anyOf``… or ``any``."""
    if not isinstance(schema, dict):
        return "any"
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    for word in ("enum", "const", "anyOf", "oneOf", "allOf", "$ref"):
        if word in schema:
            return word
    return "any"


def _properties(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def _required(schema: Any) -> list[str]:
    req = schema.get("required") if isinstance(schema, dict) else None
    return [r for r in req if isinstance(r, str)] if isinstance(req, list) else []


def _input_schema(before: Any, after: Any) -> list[Change]:
    old_props, new_props = _properties(before), _properties(after)
    old_req, new_req = _required(before), _required(after)
    added = [n for n in new_props if n not in old_props]
    removed = [n for n in old_props if n not in new_props]
    param = "inputSchema.properties."
    changes = [
        Change(ChangeKind.PARAMETER_ADDED, param + n, f"new {'required' if n in new_req else 'optional'} "
               f"parameter {n!r} ({type_name(new_props[n])})", None, new_props[n])
        for n in added
    ]
    changes += [
        Change(ChangeKind.PARAMETER_REMOVED, param + n, f"parameter {n!r} ({type_name(old_props[n])}) removed"
               + (", was required" if n in old_req else ""), old_props[n], None)
        for n in removed
    ]
    # A new parameter's required-ness is told by parameter-added, a removed one's by parameter-removed;
    # these are for parameters on both sides (and names listed in "required" without a property).
    changes += [
        Change(ChangeKind.PARAMETER_NEWLY_REQUIRED, f"inputSchema.required.{n}",
               f"parameter {n!r} is now required", False, True)
        for n in new_req if n not in old_req and n not in added
    ]
    changes += [
        Change(ChangeKind.PARAMETER_NO_LONGER_REQUIRED, f"inputSchema.required.{n}",
               f"parameter {n!r} is no longer required", True, False)
        for n in old_req if n not in new_req and n not in removed
    ]
    for name in (n for n in new_props if n in old_props):
        changes += _parameter(name, old_props[name], new_props[name])
    changes.sort(key=lambda c: _KIND_ORDER[c.kind])  # stable: each kind keeps the schema's order
    changes += _keywise(ChangeKind.INPUT_SCHEMA_CHANGED, "inputSchema", "input schema", before, after,
                        skip={"properties", "required"})
    return changes


def _parameter(name: str, old: Any, new: Any) -> list[Change]:
    path = f"inputSchema.properties.{name}"
    if old == new:
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)):
        message = f"schema of parameter {name!r} changed"
        return [Change(ChangeKind.INPUT_SCHEMA_CHANGED, path, message, old, new)]
    changes: list[Change] = []
    if old.get("type") != new.get("type"):
        changes.append(Change(ChangeKind.PARAMETER_TYPE_CHANGED, f"{path}.type",
                              f"parameter {name!r} type: {type_name(old)} → {type_name(new)}",
                              old.get("type"), new.get("type")))
    old_text, new_text = old.get("description"), new.get("description")
    if old_text != new_text:
        changes.append(_text_change(ChangeKind.PARAMETER_DESCRIPTION_CHANGED, f"{path}.description",
                                    f"description of parameter {name!r} {_verb(old_text, new_text)}",
                                    old_text, new_text))
    return changes + _keywise(ChangeKind.INPUT_SCHEMA_CHANGED, path, f"parameter {name!r}", old, new,
                              skip={"type", "description"})


def _keywise(kind: ChangeKind, path: str, label: str, old: Any, new: Any, skip: set[str]) -> list[Change]:
    """One change per key of two objects whose value differs (or that only one side has)."""
    a = old if isinstance(old, dict) else {}
    b = new if isinstance(new, dict) else {}
    return [
        Change(kind, f"{path}.{key}", f"{label} {key}: {show(a.get(key))} → {show(b.get(key))}",
               a.get(key), b.get(key))
        for key in [*a, *(k for k in b if k not in a)]
        if key not in skip and (a.get(key) != b.get(key) or (key in a) != (key in b))
    ]


# Output schema, annotations and the rest.


def _output_schema(before: Any, after: Any) -> list[Change]:
    if before == after:
        return []
    if before is None or after is None:
        kind = ChangeKind.OUTPUT_SCHEMA_ADDED if before is None else ChangeKind.OUTPUT_SCHEMA_REMOVED
        return [Change(kind, "outputSchema", f"output schema {_verb(before, after)}", before, after)]
    where = ", ".join(differing_paths(before, after, "outputSchema")[:5])
    return [Change(ChangeKind.OUTPUT_SCHEMA_CHANGED, "outputSchema", f"output schema changed at {where}",
                   before, after)]


def read_only_claim(annotations: Any) -> bool | None:
    """The server's read-only claim: ``readOnlyHint`` when it is a boolean, else None."""
    value = annotations.get("readOnlyHint") if isinstance(annotations, dict) else None
    return value if isinstance(value, bool) else None


def show_hint(key: str, value: Any, present: bool) -> str:
    """An annotation value in words; an absent hint says what MCP takes it to mean."""
    if present:
        return show(value)
    return f"absent (means {show(ANNOTATION_DEFAULTS[key])})" if key in ANNOTATION_DEFAULTS else "absent"


def _claim_word(claim: bool | None) -> str:
    return "not stated (means no)" if claim is None else ("yes" if claim else "no")


def _annotations(before: Any, after: Any) -> list[Change]:
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    changes = [
        Change(ChangeKind.ANNOTATION_CHANGED, f"annotations.{key}",
               f"{key}: {show_hint(key, old.get(key), key in old)} → "
               f"{show_hint(key, new.get(key), key in new)}", old.get(key), new.get(key))
        for key in [*old, *(k for k in new if k not in old)]
        if old.get(key) != new.get(key) or (key in old) != (key in new)
    ]
    old_claim, new_claim = read_only_claim(before), read_only_claim(after)
    if old_claim != new_claim:
        changes.append(Change(ChangeKind.READ_ONLY_CLAIM_CHANGED, "annotations.readOnlyHint",
                              f"claims read-only: {_claim_word(old_claim)} → {_claim_word(new_claim)}",
                              old_claim, new_claim))
    return changes


def _whole_member(before: dict[str, Any], after: dict[str, Any], key: str, kind: ChangeKind) -> list[Change]:
    old, new = before.get(key), after.get(key)
    if old == new:
        return []
    both = old is not None and new is not None
    where = f" at {', '.join(differing_paths(old, new, key)[:5])}" if both else ""
    return [Change(kind, key, f"{key} {_verb(old, new)}{where}", old, new)]


def _other_members(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    return [
        Change(ChangeKind.OTHER_FIELD_CHANGED, key, f"{key} {_verb(before.get(key), after.get(key))}",
               before.get(key), after.get(key))
        for key in [*before, *(k for k in after if k not in before)]
        if key not in _KNOWN and (before.get(key) != after.get(key) or (key in before) != (key in after))
    ]


def show(value: Any, limit: int = 60) -> str:
    """A value in a sentence: compact JSON, cut at ``limit`` characters; absent reads ``absent``."""
    if value is None:
        return "absent"
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def differing_paths(before: Any, after: Any, path: str) -> list[str]:
    """The dotted paths below ``path`` where two JSON values differ (objects are walked, arrays not)."""
    if before == after:
        return []
    if not (isinstance(before, dict) and isinstance(after, dict)):
        return [path]
    found: list[str] = []
    for key in [*before, *(k for k in after if k not in before)]:
        if key in before and key in after:
            found += differing_paths(before[key], after[key], f"{path}.{key}")
        else:
            found.append(f"{path}.{key}")
    return found


def _verb(old: Any, new: Any) -> str:
    return "added" if old is None else "removed" if new is None else "changed"


_KIND_ORDER = {kind: i for i, kind in enumerate(ChangeKind)}
_WHOLE = (ChangeKind.OUTPUT_SCHEMA_CHANGED, ChangeKind.META_CHANGED, ChangeKind.ICONS_CHANGED)


# The summary.


def summarize(changes: list[Change]) -> list[str]:
    """Short sentences, one a change, except that input-schema details share one sentence and the
    ``readOnlyHint`` annotation is told once, as the read-only claim, when the claim itself changed."""
    claim_changed = any(c.kind is ChangeKind.READ_ONLY_CLAIM_CHANGED for c in changes)
    sentences: list[str] = []
    schema_paths: list[str] = []
    for change in changes:
        if change.kind is ChangeKind.INPUT_SCHEMA_CHANGED:
            if not schema_paths:
                sentences.append("")  # the place of the one input-schema sentence, filled below
            schema_paths.append(change.path.removeprefix("inputSchema."))
        elif change.kind is ChangeKind.ANNOTATION_CHANGED:
            if not (claim_changed and change.path == "annotations.readOnlyHint"):
                sentences.append(f"annotation {change.message}")
        elif change.kind in _WHOLE:
            sentences.append(change.message.partition(" at ")[0])  # where it changed is in the change
        elif change.kind is ChangeKind.OTHER_FIELD_CHANGED:
            sentences.append(f"field {change.path!r} {_verb(change.before, change.after)}")
        else:
            sentences.append(change.message)
    if schema_paths:
        more = f" and {len(schema_paths) - 4} more" if len(schema_paths) > 4 else ""
        sentences[sentences.index("")] = f"input schema changed: {', '.join(schema_paths[:4])}{more}"
    return sentences
