"""Tool sets as the REST API and the CLI show and accept them: a name, a title, a description and an
allow-list of members, each one server's tool or every offered tool of one server."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from toolvet.domain.names import SERVER_NAME_PATTERN, tool_set_name_problem
from toolvet.schemas.common import read_only_map, refuse_read_only

#: Members one set may hold: far past a hand-written allow-list, and a bound on what a request stores.
MAX_MEMBERS: Final = 1000
#: The longest tool name a member may give (past MCP's 128, for servers that name tools loosely).
MAX_TOOL_NAME: Final = 1024
TOOL_SET_READ_ONLY: Final = read_only_map("the registry", ("name", "created_at", "updated_at"))

_SERVER_NAME = re.compile(SERVER_NAME_PATTERN)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_tool_set_name(name: str) -> str:
    """``name`` when it can name a tool set; else ValueError saying why."""
    problem = tool_set_name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


class ToolSetMember(BaseModel):
    """One entry of a set's allow-list: ``tool`` of ``server``, or (``tool`` null) every offered tool
    of ``server``. ``server`` may be ``toolvet`` (toolvet's own host tools) or a server not registered
    yet: the set lists what is offered of it, whenever that is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server: str = Field(description="A server's name (or toolvet, for toolvet's own tools).")
    tool: str | None = Field(
        default=None, min_length=1, max_length=MAX_TOOL_NAME,
        description="One tool of the server, by its own name; null for every offered tool of the server.",
    )

    @field_validator("server")
    @classmethod
    def _server_name(cls, value: str) -> str:
        if not _SERVER_NAME.fullmatch(value):
            raise ValueError(f"{value!r} is not a server name ({SERVER_NAME_PATTERN})")
        return value

    @field_validator("tool")
    @classmethod
    def _tool_name(cls, value: str | None) -> str | None:
        if value is not None and _CONTROL.search(value):
            raise ValueError("must not contain control characters")
        return value


class ToolSetPut(BaseModel):
    """A set's whole definition, as ``PUT /api/v1/tool-sets/{name}`` takes it (the name is the path's)."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=4000)
    members: list[ToolSetMember] = Field(max_length=MAX_MEMBERS, description="The allow-list, in order.")

    @model_validator(mode="before")
    @classmethod
    def _read_only(cls, data: Any) -> Any:
        return refuse_read_only(data, TOOL_SET_READ_ONLY)

    @model_validator(mode="after")
    def _no_overlap(self) -> Self:
        """Each member once, and no tool of a server the set already takes whole: an overlap is a
        mistake in the list (which entry did the operator mean?), so it is refused, not merged."""
        whole = {m.server for m in self.members if m.tool is None}
        seen: set[tuple[str, str | None]] = set()
        for index, member in enumerate(self.members):
            key = (member.server, member.tool)
            if key in seen:
                raise ValueError(f"members.{index}: {_label(member)} is listed twice")
            if member.tool is not None and member.server in whole:
                raise ValueError(
                    f"members.{index}: {_label(member)} is already in the set: it takes every tool of "
                    f"{member.server}"
                )
            seen.add(key)
        return self


def _label(member: ToolSetMember) -> str:
    return f"{member.server}/{member.tool}" if member.tool is not None else f"{member.server} (every tool)"


class ToolSetOut(BaseModel):
    """A tool set as shown."""

    name: str
    title: str | None
    description: str | None
    members: list[ToolSetMember]
    endpoint: str = Field(description="The path of the set's MCP endpoint.")
    created_at: datetime
    updated_at: datetime
