"""Findings for reviewers (SPEC §4.4). Discovery records them; it never acts on them by itself."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from toolvet.domain.names import TOOL_NAME_PATTERN, is_conventional_tool_name

# Phrases that address the model rather than describe the tool. Lower-cased substring/regex matches.
_INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(rx, re.IGNORECASE))
    for label, rx in (
        ("<IMPORTANT>", r"<\s*/?\s*important\s*>"),
        ("ignore previous instructions", r"ignore\s+(all\s+)?(previous|prior|above)\s+instructions"),
        ("do not tell the user", r"(do\s+not|don'?t|never)\s+(tell|inform|mention\s+to|notify)\s+the\s+user"),
        ("disregard instructions", r"disregard\s+(all\s+|any\s+)?(previous|prior|other)?\s*instructions"),
        ("system prompt", r"\bsystem\s+prompt\b"),
        ("before using this tool, read", r"before\s+using\s+this\s+tool.{0,40}\b(read|open|send)\b"),
    )
)


# One pass over a text answers "does any pattern match?"; an alternation matches somewhere exactly when
# one of its branches does, so the per-pattern searches (which name the finding) run only on a hit.
_ANY_INSTRUCTION: re.Pattern[str] = re.compile(
    "|".join(f"(?:{pattern.pattern})" for _, pattern in _INSTRUCTION_PATTERNS), re.IGNORECASE
)

# Deleting the whitespace that _invisible allows leaves text whose isprintable() decides the scan.
_ALLOWED_WHITESPACE = str.maketrans("", "", "\n\r\t")


def _plainly_visible(text: str) -> bool:
    """True when no character of ``text`` can be ``_invisible``, without a per-character Python scan.

    ``str.isprintable()`` is False for every character of categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs
    (but the ASCII space), from the same Unicode database ``unicodedata`` uses. The tag block
    U+E0000-U+E007F is Cf or unassigned (Cn). So a printable text holds nothing ``_invisible`` flags,
    and a non-printable one just takes the exact per-character scan.
    """
    return text.isprintable() or text.translate(_ALLOWED_WHITESPACE).isprintable()


# What each instruction pattern (same order) needs in a lower-cased ASCII text: every group must have
# one of its words in it, for every match of the pattern contains them. On ASCII text IGNORECASE is
# ASCII case folding, so a text meeting no pattern's groups cannot match any pattern.
_INSTRUCTION_WORDS: tuple[tuple[tuple[str, ...], ...], ...] = (
    (("important",),),                                              # <\s*/?\s*important\s*>
    (("ignore",), ("instructions",)),                               # ignore ... instructions
    (("not", "don", "never"), ("tell", "inform", "mention", "notify"), ("the",), ("user",)),
    (("disregard",), ("instructions",)),                            # disregard ... instructions
    (("system",), ("prompt",)),                                     # \bsystem\s+prompt\b
    (("before",), ("using",), ("this",), ("tool",), ("read", "open", "send")),
)


def _may_instruct(lowered: str) -> bool:
    # One word from each pattern's groups first (most texts hold none of them), then the full test.
    if not ("important" in lowered or "instructions" in lowered or "user" in lowered or "system" in lowered
            or "before" in lowered):
        return False
    return any(all(any(word in lowered for word in group) for group in groups) for groups in _INSTRUCTION_WORDS)


_CONTAINERS = (dict, list)
_TEXT_KEYS = frozenset({"description", "title"})


def _schema_strings(node: Any, out: list[str]) -> None:
    # The walk of _texts, without paths: the same strings in the same order. A list's items are
    # looked at here rather than in a call per list (schemas hold many short lists of strings).
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str):
                if k in _TEXT_KEYS:
                    out.append(v)
            elif isinstance(v, dict):
                _schema_strings(v, out)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, _CONTAINERS):
                        _schema_strings(item, out)
    elif isinstance(node, list):
        for v in node:
            if isinstance(v, _CONTAINERS):
                _schema_strings(v, out)


def _strings(definition: dict[str, Any]) -> list[str]:
    """The texts :func:`_texts` yields, without their paths (the cheap screen needs no path)."""
    out = [v for v in (definition.get("name"), definition.get("title"), definition.get("description"))
           if isinstance(v, str)]
    _schema_strings(definition.get("inputSchema"), out)
    _schema_strings(definition.get("outputSchema"), out)
    annotations = definition.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
        out.append(annotations["title"])
    return out


def _plainly_clean(texts: list[str]) -> bool:
    """True when, provably, no text earns an invisible-characters or instruction-text finding.

    The texts are joined by a space, a character neither test flags: every character must be printable
    or allowed whitespace (see :func:`_plainly_visible`; the joined text passes exactly when each text
    does). Any instruction pattern matching one text matches the joined text too (the patterns have
    no anchors, and a space next to a text is a word boundary as the text's own ends are), so no match
    in the joined text means none in any text. An all-ASCII text lacking the words each
    pattern needs (:data:`_INSTRUCTION_WORDS`) skips even that search.
    False sends the definition to the exact per-text tests.
    """
    joined = " ".join(texts)
    if not _plainly_visible(joined):
        return False
    if joined.isascii() and not _may_instruct(joined.lower()):
        return True
    return _ANY_INSTRUCTION.search(joined) is None


def _plainly_clean_text(text: str) -> bool:
    """:func:`_plainly_clean` for every string of a definition at once, from its JSON text.

    Without a backslash the JSON text holds no escape, so each string of the definition appears in it
    literally (``json.dumps`` escapes every control character below U+0020). Then a printable text
    holds no invisible character, and an instruction pattern that matches one string matches the text
    (the punctuation around a string is a word boundary as its own ends are). The text holds more
    strings than the findings look at; a hit on one of those only sends the definition to the exact
    per-text tests.
    """
    if "\\" in text or not text.isprintable():
        return False
    if text.isascii() and not _may_instruct(text.lower()):
        return True
    return _ANY_INSTRUCTION.search(text) is None


def _invisible(ch: str) -> bool:
    # Cf covers zero-width and bidirectional controls (U+200B-U+200F, U+202A-U+202E, U+2066-U+2069,
    # U+FEFF); tag characters U+E0000-U+E007F can smuggle text; C0/C1 controls other than whitespace.
    if ch in "\n\r\t":
        return False
    cat = unicodedata.category(ch)
    return cat in ("Cf", "Cc", "Co") or 0xE0000 <= ord(ch) <= 0xE007F


def _texts(definition: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """Every human/model-facing string in a definition, with its JSON path."""
    for key in ("name", "title", "description"):
        value = definition.get(key)
        if isinstance(value, str):
            yield key, value

    def walk(node: Any, path: str) -> Iterator[tuple[str, str]]:
        # Only containers are descended into (a scalar holds no text to yield), so a child's path is
        # built only when it can lead somewhere: schemas are mostly scalars, and this runs per tool.
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, str):
                    if k in ("description", "title"):
                        yield f"{path}.{k}", v
                elif isinstance(v, dict | list):
                    yield from walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, dict | list):
                    yield from walk(v, f"{path}[{i}]")

    for schema_key in ("inputSchema", "outputSchema"):
        yield from walk(definition.get(schema_key), schema_key)
    annotations = definition.get("annotations")
    if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
        yield "annotations.title", annotations["title"]


def _finding(kind: str, message: str, path: str | None = None) -> dict[str, Any]:
    return {"kind": kind, "message": message, **({"path": path} if path else {})}


def static_findings(definition: dict[str, Any], text: str | None = None) -> list[dict[str, Any]]:
    """Findings that a definition earns on its own. ``text``, the definition as JSON (compact, not
    ASCII-escaped) when the caller has it, lets a clean definition skip the walk of its schemas."""
    found: list[dict[str, Any]] = []
    name = definition.get("name")
    if isinstance(name, str) and not is_conventional_tool_name(name):
        found.append(_finding("name-pattern", f"name {name!r} does not match {TOOL_NAME_PATTERN}", "name"))
    if (text is not None and _plainly_clean_text(text)) or _plainly_clean(_strings(definition)):
        return found
    for path, text in _texts(definition):
        if not _plainly_visible(text):
            hidden = sorted({f"U+{ord(c):04X}" for c in text if _invisible(c)})
            if hidden:
                message = f"invisible or control characters {', '.join(hidden)}"
                found.append(_finding("invisible-characters", message, path))
        if _ANY_INSTRUCTION.search(text):
            for label, pattern in _INSTRUCTION_PATTERNS:
                if pattern.search(text):
                    found.append(_finding("instruction-text", f"text aimed at the model: {label!r}", path))
    return found


def _required(schema: Any) -> set[str]:
    if isinstance(schema, dict) and isinstance(schema.get("required"), list):
        return {r for r in schema["required"] if isinstance(r, str)}
    return set()


def change_findings(
    before_input_schema: Any, before_read_only: bool | None, after: dict[str, Any], after_read_only: bool | None
) -> list[dict[str, Any]]:
    """Findings that a definition earns by how it differs from the one seen before it."""
    found: list[dict[str, Any]] = []
    for param in sorted(_required(after.get("inputSchema")) - _required(before_input_schema)):
        found.append(_finding("new-required-parameter", f"input parameter {param!r} is newly required",
                              f"inputSchema.required.{param}"))
    if before_read_only != after_read_only:
        found.append(
            _finding("read-only-claim-changed",
                     f"readOnlyHint changed from {before_read_only!r} to {after_read_only!r}",
                     "annotations.readOnlyHint")
        )
    return found
