"""The findings corpus: labelled tool definitions written for toolvet.

``tuning.jsonl`` is what the rules were written against; ``heldout.jsonl`` was written first and left
alone while the rules were written, so its figures say how the rules do on tools they were not tuned on.
The gate (``tests/domain/test_findings_corpus.py``) reads those two parts. ``fresh.jsonl`` holds held-out
batches written after the gate's figures were set (from the thirty-first on), never tuned on and reported
on their own: what the rules are worth on text written since, kept out of the gated figures so that the
gate does not hold or fail by how many of them there are (docs/findings.md).
Each entry: ``id``, ``label`` (``malicious`` | ``benign``), ``category``, ``reason``, ``hard`` (a benign
entry that resembles an attack), the ``tool`` definition and, for cross-server entries, the ``server`` it
belongs to and ``others`` (other servers' tools: ``server``, ``name``, ``description``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from toolvet.domain.findings import (
    OtherTool,
    annotations_title,
    cross_server_findings,
    is_flagged,
    mentioned_names,
    name_key,
    static_findings,
)
from toolvet.domain.findings.near_names import NearNames

HERE: Final = Path(__file__).parent
PARTS: Final = ("tuning", "heldout")
#: Every part: the gated two and the fresh batches.
ALL_PARTS: Final = (*PARTS, "fresh")


@dataclass(frozen=True)
class Entry:
    id: str
    part: str
    label: str
    category: str
    reason: str
    hard: bool
    tool: dict[str, Any]
    server: str
    others: tuple[OtherTool, ...]

    @property
    def malicious(self) -> bool:
        return self.label == "malicious"


def load(part: str | None = None) -> list[Entry]:
    """The entries of one part, or of the two gated parts (:data:`PARTS`)."""
    out: list[Entry] = []
    for name in PARTS if part is None else (part,):
        for line in (HERE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            raw = json.loads(line)
            others = tuple(OtherTool(o["server"], o["name"], o.get("description"), o.get("title"))
                           for o in raw.get("others", ()))
            out.append(Entry(raw["id"], name, raw["label"], raw["category"], raw["reason"], bool(raw.get("hard")),
                             raw["tool"], raw.get("server", "corpus"), others))
    return out


def compared(entry: Entry) -> list[OtherTool]:
    """The other servers' tools a discovery pass would compare the entry's tool with, had it brought it:
    those whose name has the key of the tool's own name, of a word its text mentions as a tool's name, or
    of a key within one edit of its own (``services.shadowing`` chooses so; with a few tools per entry,
    no cap on a key's tools applies)."""
    name = entry.tool.get("name")
    own = name_key(name) if isinstance(name, str) else ""
    near = NearNames()
    for other in entry.others:
        near.add(name_key(other.name))
    wanted = {own, *near.near(own),
              *(name_key(n) for n in mentioned_names(entry.tool.get("title"), entry.tool.get("description"),
                                                     annotations_title(entry.tool.get("annotations"))))}
    return [other for other in entry.others if name_key(other.name) in wanted]


def findings_of(entry: Entry) -> list[dict[str, Any]]:
    """What the engine finds on an entry: its own findings and those against the other servers a pass
    would compare it with (:func:`compared`)."""
    return static_findings(entry.tool) + cross_server_findings(entry.server, entry.tool, compared(entry))


def flagged(entry: Entry) -> bool:
    return is_flagged(findings_of(entry))


@dataclass(frozen=True)
class Score:
    tp: int
    fn: int
    fp: int
    tn: int

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0


def score(entries: list[Entry]) -> Score:
    tp = fn = fp = tn = 0
    for e in entries:
        hit = flagged(e)
        if e.malicious:
            tp, fn = tp + hit, fn + (not hit)
        else:
            fp, tn = fp + hit, tn + (not hit)
    return Score(tp, fn, fp, tn)
