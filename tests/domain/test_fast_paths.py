"""The fast paths of the domain layer give exactly what the slow, obviously-correct paths give."""

from __future__ import annotations

import random
from typing import Any

import pytest

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
