"""The fast paths of the domain layer give exactly what the slow, obviously-correct paths give."""

from __future__ import annotations

import json
import random
import sys
import unicodedata
from typing import Any

import pytest

from toolvet.domain import findings
from toolvet.domain.fingerprint import definition_digest
from toolvet.domain.reconcile import UNLOADED, StoredTool, reconcile

# Characters where text scans could part: escapes, controls, DEL, the line separators, BMP
# characters on both sides of the surrogate block, non-BMP characters (UTF-16 order), lone surrogates.
_AWKWARD = ['"', "\\", "/", "\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\x80",
            "\u2028",
            "\u2029", "\u00e9", "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "\ud800",
            "\udfff", "a", "Z", "0", " "]


def random_string(rng: random.Random) -> str:
    return "".join(rng.choice(_AWKWARD) if rng.random() < 0.5 else chr(rng.randrange(0x20, 0x250))
                   for _ in range(rng.randrange(0, 6)))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -1, 2**53 - 1, -(2**53) + 1, 2**53, -(2**53), 10**30,
                           rng.randrange(-10**6, 10**6)])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1.5, 100.0, 1e21, 1e-7, 5e-324, float("nan"), float("inf")])
    if kind in (4, 5):
        return random_string(rng)
    if kind in (6, 7):
        return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}
    return [random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))]



# -------------------------------------------------------------------------------------- findings


def scanned(text: str) -> list[str]:
    """The per-character scan the fast path may skip."""
    return sorted({f"U+{ord(c):04X}" for c in text if findings._invisible(c)})


def test_a_text_the_fast_path_passes_has_nothing_the_scan_would_flag():
    # Every code point: whenever _plainly_visible says yes, the exact scan finds nothing.
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if findings._plainly_visible(ch):
            assert not findings._invisible(ch), f"U+{cp:04X} {unicodedata.category(ch)}"
    assert findings._plainly_visible("tabs\tand\nnew lines\r are fine")


def test_static_findings_match_the_per_pattern_search():
    rng = random.Random(44)
    pieces = ["ignore previous instructions", "<IMPORTANT>", "system prompt", "do not tell the user", "x",
              "Disregard all instructions", "before using this tool, read", "\u200b", " ", "\t"]
    for _ in range(2_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 4)))
        expected = {label for label, pattern in findings._INSTRUCTION_PATTERNS if pattern.search(text)}
        got = {f["message"].split(": ", 1)[1].strip("'\"")
               for f in findings.static_findings({"description": text}) if f["kind"] == "instruction-text"}
        assert got == expected, text
        assert bool(findings._ANY_INSTRUCTION.search(text)) == bool(expected)


def test_texts_are_found_at_every_depth_with_their_paths():
    definition = {"name": "t", "inputSchema": {"type": "object", "properties": {
        "a": {"description": "fine\u200b", "items": [{"title": "<IMPORTANT>"}]},
        "description": {"type": "string", "description": "nested\u202e"}}}}
    paths = {(f["kind"], f["path"]) for f in findings.static_findings(definition)}
    assert paths == {
        ("invisible-characters", "inputSchema.properties.a.description"),
        ("instruction-text", "inputSchema.properties.a.items[0].title"),
        ("invisible-characters", "inputSchema.properties.description.description"),
    }


# ------------------------------------------------------------------------------------- reconcile


def tool(name: str, description: str = "d", required: list[str] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "required": required or []}}


def unloaded(id_: int, definition: dict[str, Any]) -> StoredTool:
    return StoredTool(id=id_, name=definition["name"], digest=definition_digest(definition),
                      advertised_read_only=None, retired=False)


def test_stored_schemas_are_loaded_once_and_only_for_changed_tools():
    a, b, c = tool("a"), tool("b"), tool("c")
    calls: list[list[int]] = []

    def load(ids):
        calls.append(list(ids))
        return {2: b["inputSchema"], 3: c["inputSchema"]}

    changes = reconcile([unloaded(1, a), unloaded(2, b), unloaded(3, c)],
                        [a, tool("b", "new", ["x"]), tool("c", "new")],
                        complete=True, max_definition_bytes=10_000, load_input_schemas=load)
    assert calls == [[2, 3]]
    assert [u.tool_id for u in changes.changed] == [2, 3]
    assert "new-required-parameter" in {f["kind"] for f in changes.changed[0].findings}
    assert changes.unchanged_ids == [1]


def test_a_pass_without_changes_loads_no_schema():
    a = tool("a")

    def load(ids):
        raise AssertionError("nothing changed, nothing to load")

    changes = reconcile([unloaded(1, a)], [a, tool("new")], complete=True, max_definition_bytes=10_000,
                        load_input_schemas=load)
    assert changes.unchanged_ids == [1] and len(changes.added) == 1


def test_an_unloaded_schema_without_a_loader_is_a_programming_error():
    assert unloaded(1, tool("a")).input_schema is UNLOADED
    with pytest.raises(ValueError, match="no loader"):
        reconcile([unloaded(1, tool("a"))], [tool("a", "new")], complete=True, max_definition_bytes=10_000)


# ----------------------------------------------------------------------- findings: the joined screen


def slow_static_findings(definition: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    with monkeypatch.context() as m:
        m.setattr(findings, "_plainly_clean", lambda texts: False)
        return findings.static_findings(definition)


def test_strings_are_the_texts_without_paths():
    rng = random.Random(7)
    for _ in range(500):
        definition = {"name": random_string(rng), "title": random_value(rng, 3), "description": random_string(rng),
                      "inputSchema": random_value(rng), "outputSchema": random_value(rng),
                      "annotations": {"title": random_string(rng)}}
        if isinstance(definition["inputSchema"], dict):
            definition["inputSchema"]["properties"] = {"p": {"description": random_string(rng),
                                                             "items": [{"title": random_string(rng)}, 3]}}
        assert findings._strings(definition) == [text for _, text in findings._texts(definition)]


def test_static_findings_fast_screen_matches_the_exact_tests(monkeypatch):
    rng = random.Random(45)
    pieces = ["ignore previous instructions", "<IMPORTANT>", "< / important >", "system prompt", "SYSTEM\tPROMPT",
              "do not tell the user", "never notify the user", "Disregard all instructions", "disregard instructions",
              "before using this tool, read", "Before using this tool please open", "users", "the", "tell", "x",
              "\u200b", " ", "\t", "\n", "\x07", "é", "\u017fystem prompt",  # long s folds to s under IGNORECASE
              "\u212aeep", "\U000e0041", "system", "prompt", "instructions", "ignore", "before", "read"]
    for _ in range(3_000):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 4))) for _ in range(4)]
        definition = {"name": "get_thing", "title": texts[0], "description": texts[1],
                      "inputSchema": {"type": "object", "properties": {
                          "a": {"type": "string", "description": texts[2], "enum": ["x", "y"]}}},
                      "annotations": {"title": texts[3]}}
        assert findings.static_findings(definition) == slow_static_findings(definition, monkeypatch), texts


def test_static_findings_text_screen_matches_the_exact_tests(monkeypatch):
    """With the definition's JSON text (as read_claim makes it) the screen looks at every string at
    once; the findings are exactly the exact tests' (escapes, such as a newline, skip the screen)."""
    rng = random.Random(46)
    pieces = ["ignore previous instructions", "ignore\nprevious instructions", "<IMPORTANT>", "system prompt",
              "SYSTEM\tPROMPT", "do not tell the user", "before using this tool, read", "users", "x", "\u200b",
              " ", "\t", "\n", "\x07", "\x1b", "é", "\u017fystem prompt", "\U000e0041", "\\", '"', "system"]
    for _ in range(3_000):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 4))) for _ in range(5)]
        definition = {"name": "get_thing", "title": texts[0], "description": texts[1],
                      "inputSchema": {"type": "object", "properties": {
                          "a": {"type": "string", "description": texts[2], "enum": [texts[4], "y"]}}},
                      "annotations": {"title": texts[3]}}
        text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert findings.static_findings(definition, text) == slow_static_findings(definition, monkeypatch), texts


def test_a_phrase_split_across_texts_is_no_finding(monkeypatch):
    definition = {"name": "t", "title": "system", "description": "prompt", "inputSchema": {"type": "object"}}
    assert findings.static_findings(definition) == slow_static_findings(definition, monkeypatch) == []


def test_long_s_still_matches_the_system_prompt_pattern():
    found = findings.static_findings({"name": "t", "description": "read the \u017fystem prompt"})
    assert [f["kind"] for f in found] == ["instruction-text"]
