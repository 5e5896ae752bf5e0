"""A call whose upstream asks its 2026-07-28 client something mid-call, carried over the client's retries.

A handshake-era server asks its client mid-call (``elicitation/create``, ``sampling/createMessage``) and
waits for the answer on the same session. A 2026-07-28 client cannot take such a request: it is asked
with an ``InputRequiredResult`` and answers by calling again. A :class:`Conversation` joins the two:
the call runs in a task of the endpoint's, each question the upstream asks is handed to the client as
an ``InputRequiredResult`` (``requestState`` names the conversation), and the client's retry carries
the answers back to the upstream, which never noticed. A question the client leaves unanswered for
:data:`ANSWER_WAIT` seconds is answered with an error, and the call goes on from there.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from mcp.types import INVALID_REQUEST

from toolvet.upstream.errors import RpcError

__all__ = ["ANSWER_WAIT", "PARKED_STATE", "Conversation", "Turn"]

#: Marks a requestState that names a conversation of this process.
PARKED_STATE: Final = "toolvet.parked:"
#: How long the upstream's question waits for the client's retry.
ANSWER_WAIT: Final = 600.0


@dataclass
class _Question:
    method: str
    params: dict[str, Any] | None
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: Any = None


@dataclass(frozen=True)
class Turn:
    """What the client gets next: the call's outcome, or the questions it must answer first."""

    outcome: Any = None
    questions: dict[str, dict[str, Any]] | None = None


class Conversation:
    """One parked call (see the module docstring)."""

    def __init__(self) -> None:
        self.id = secrets.token_urlsafe(16)
        #: The scope the call runs in (set by the task that runs it), and whether the client's first
        #: turn asked it about an approval by elicitation.
        self.scope: anyio.CancelScope | None = None
        self.asks = False
        self._questions: dict[str, _Question] = {}
        self._asked = anyio.Event()
        self._done = anyio.Event()
        self._outcome: Any = None
        self._failure: BaseException | None = None

    @property
    def state(self) -> str:
        return PARKED_STATE + self.id

    @property
    def waiting(self) -> bool:
        """Whether a question waits for the client's retry."""
        return any(not question.answered.is_set() for question in self._questions.values())

    async def ask(self, method: str, params: dict[str, Any] | None) -> Any:
        """The upstream's question, answered by the client's next retry (raises RpcError if it never comes)."""
        key = f"toolvet.q{len(self._questions) + 1}"
        question = self._questions[key] = _Question(method, params)
        self._asked.set()
        with anyio.move_on_after(ANSWER_WAIT):
            await question.answered.wait()
        self._questions.pop(key, None)
        if not question.answered.is_set():
            raise RpcError(INVALID_REQUEST, "the client did not answer within the time allowed", synthetic=True)
        return question.answer

    def finish(self, outcome: Any = None, failure: BaseException | None = None) -> None:
        self._outcome, self._failure = outcome, failure
        self._done.set()

    def answer(self, responses: dict[str, Any]) -> None:
        """Hand the client's answers to the questions they name."""
        for key, response in responses.items():
            question = self._questions.get(key)
            if question is not None and not question.answered.is_set():
                question.answer = response
                question.answered.set()

    async def next_turn(self) -> Turn:
        """Wait until the call ends or asks something that is not answered yet."""
        while True:
            unanswered = {key: {"method": q.method, **({"params": q.params} if q.params is not None else {})}
                          for key, q in self._questions.items() if not q.answered.is_set()}
            if unanswered:
                return Turn(questions=unanswered)
            if self._done.is_set():
                if self._failure is not None:
                    raise self._failure
                return Turn(outcome=self._outcome)
            self._asked = anyio.Event()
            async with anyio.create_task_group() as tg:
                async def until(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(until, self._asked)
                tg.start_soon(until, self._done)
