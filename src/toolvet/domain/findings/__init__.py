"""Findings for reviewers (docs/findings.md): what a tool definition shows that a reviewer should look at.

Discovery records them on the tool's claim; by default they decide nothing (a server's
``hold_flagged_tools`` holds a tool with a ``high`` finding). Each finding is a dict: ``code``,
``severity`` (``info`` | ``warning`` | ``high``), ``message``, ``path``, and for text findings the
``span`` in the original string and its ``evidence``; ``kind`` is kept for older readers.

- :func:`static_findings`: what a definition earns on its own (every string read, normalised once);
- :func:`change_findings`: what it earns by how it differs from the definition seen before;
- :func:`cross_server_findings`: what it earns against other servers' tools (shadowing, copies), and
  :func:`copied_findings` what the tool it copies earns back.
"""

import importlib
from typing import TYPE_CHECKING, Any

from toolvet.domain.findings.changes import change_findings
from toolvet.domain.findings.finding import SEVERITIES, Severity, finding, highest_severity, is_flagged, severity_rank

if TYPE_CHECKING:
    from toolvet.domain.findings.shadowing import (
        OtherTool,
        annotations_title,
        copied_findings,
        cross_server_findings,
        mentioned_names,
        name_key,
    )
    from toolvet.domain.findings.static import static_findings

#: The checks whose rules compile their patterns and tables at import, imported on first use: a
#: process that only reads stored findings (``toolvet tool list``) never needs them.
_ON_FIRST_USE = {"static_findings": "static", "cross_server_findings": "shadowing", "copied_findings": "shadowing",
                 "OtherTool": "shadowing", "name_key": "shadowing",
                 "mentioned_names": "shadowing", "annotations_title": "shadowing"}


def __getattr__(name: str) -> Any:
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_ON_FIRST_USE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "SEVERITIES", "OtherTool", "Severity", "annotations_title", "change_findings", "copied_findings",
    "cross_server_findings", "finding", "highest_severity", "is_flagged", "mentioned_names", "name_key",
    "severity_rank", "static_findings",
]
