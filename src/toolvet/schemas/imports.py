"""What ``toolvet import`` plans and does, one row per server entry of the imported file."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from toolvet.schemas.servers import Transport


class ImportAction(StrEnum):
    CREATE = "create"  # will be (or was) registered
    EXISTS = "exists"  # a server of that name is registered already: left as it is
    SKIP = "skip"  # cannot be registered as written (the reason says why)


class ImportItem(BaseModel):
    """One entry of the file. Secrets (header and env values) appear only as their names."""

    source: str = Field(description="The entry's name in the file.")
    name: str = Field(description="The server name toolvet gives it (made valid when the file's was not).")
    renamed: bool
    transport: Transport | None
    url: str | None
    command: str | None
    args: list[str]
    header_names: list[str]
    env_names: list[str]
    action: ImportAction
    reason: str | None = Field(default=None, description="Why the entry is skipped or left alone.")
    notes: list[str] = Field(default_factory=list, description="What was read differently from the file.")


class ImportPlan(BaseModel):
    """A whole file: its kind and its entries, planned (``--dry-run``) or done."""

    file: str
    kind: str = Field(description="mcpServers (Claude Desktop, Claude Code, Cursor), vscode or registry.")
    applied: bool
    items: list[ImportItem]
