"""Every corpus entry's findings are pinned: a change that only makes the checks faster must leave them as
they are, finding for finding (code, severity, path, span, evidence). A deliberate change to a rule
rewrites the pin with ``python tests/domain/test_findings_pinned.py`` and shows the difference in review."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

if __name__ == "__main__":  # run as a script from the repository's root: tests.corpus is importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.corpus import ALL_PARTS, HERE, findings_of, load

PINNED: Final = HERE / "pinned.json"
_KEYS: Final = ("code", "severity", "path", "span", "evidence", "other_server", "other_tool", "decoded")


def summary() -> dict[str, list[dict[str, Any]]]:
    """Per entry id, its findings cut to the fields that say what was found and where."""
    return {e.id: [{k: f[k] for k in _KEYS if k in f} for f in findings_of(e)] for part in ALL_PARTS
            for e in load(part)}


def test_every_corpus_entry_keeps_its_pinned_findings():
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    now = summary()
    assert now.keys() == pinned.keys()
    changed = [entry_id for entry_id in pinned if now[entry_id] != pinned[entry_id]]
    assert not changed, {entry_id: (pinned[entry_id], now[entry_id]) for entry_id in changed[:3]}


def test_the_pin_holds_findings_of_every_kind():
    codes = {f["code"] for findings in json.loads(PINNED.read_text(encoding="utf-8")).values() for f in findings}
    assert {"instruction-override", "directive-markup", "secrecy", "credential-harvest", "exfiltration",
            "data-collection", "encoded-payload", "shell-command", "embedded-secret", "hidden-characters",
            "confusable-characters", "tool-shadowing", "tool-duplicate", "sensitive-header",
            "header-declaration"} <= codes


if __name__ == "__main__":
    PINNED.write_text(json.dumps(summary(), ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
