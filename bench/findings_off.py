"""The findings switched off, for the benchmarks' baselines of what the findings cost.

Off means what a registry without them would do: ``static_findings`` (every rule on a definition's
own text) finds nothing, and the cross-server check (``shadowing.CrossServer.add_findings``) neither
reads candidates nor compares. What stays is what discovery needs anyway: the change findings of a
changed contract (a new required parameter, a read-only claim withdrawn) ride on the diff.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolvet.domain import findings
from toolvet.services import shadowing


def _no_static_findings(definition: Any, text: Any = None) -> list[dict[str, Any]]:
    return []


def _no_cross_server_findings(self: Any, *args: Any) -> None:
    return None


def switch_off() -> None:
    """Switch the findings off in this process for good (a writer process started for a baseline)."""
    findings.static_findings = _no_static_findings
    shadowing.CrossServer.add_findings = _no_cross_server_findings  # type: ignore[method-assign,assignment]


@contextmanager
def findings_off() -> Iterator[None]:
    """The findings off in this process while the block runs."""
    saved = findings.static_findings, shadowing.CrossServer.add_findings
    switch_off()
    try:
        yield
    finally:
        findings.static_findings, shadowing.CrossServer.add_findings = saved  # type: ignore[method-assign]
