"""What an apply does, as steps: the lines a plan shows and the service call that makes them true.

Every step's ``run`` calls the same service function a person's edit calls (``services.servers``,
``tools``, ``tool_sets``, ``preferences``), so it is checked, written and audited the same way; each
is its own transaction. ``services.config_apply`` and ``services.config_policy`` build them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolvet.schemas.config_file import ChangeOut


@dataclass
class Step:
    """Some lines of the plan and what makes them true (None: a line only, such as a tool not
    discovered yet)."""

    changes: list[ChangeOut]
    run: Callable[[], Any] | None = None


@dataclass
class Plan:
    steps: list[Step] = field(default_factory=list)

    def add(self, changes: list[ChangeOut], run: Callable[[], Any] | None = None) -> None:
        if changes:
            self.steps.append(Step(changes, run))

    def changes(self) -> list[ChangeOut]:
        return [change for step in self.steps for change in step.changes]


def changed(obj: str, key: str, before: Any, after: Any) -> ChangeOut:
    return ChangeOut(op="~", object=obj, field=key, before=before, after=after)
