"""The input phase of one call: running a component's resolvers, asking what they ask.

Each ``Annotated[T, Resolve(fn)]`` parameter names a resolver, planned at compile time
(``compiled.resolvers``). The phase walks the resolvers a call needs, dependencies
first, each at most once per round. A resolver returns a plain value (no question) or
a marker (``input.questions``); :class:`Asker` turns the marker into an outcome:

- a recorded outcome of an earlier round, when the resolver asks the very same
  question again (its digest is pinned in the sealed ``requestState``);
- a fresh answer of the client to that very question;
- else the question is asked: at once over the 2025-11-25 back-channel (``send``),
  or kept pending for this round's ``input_required`` result (2026-07-28) or for the
  next 2025-11-25 round of a call that may not hold a thread while the client answers.

Independent questions of one round are all collected before the round ends, so a
client sees them together (several keys in one ``inputRequests``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Protocol

import anyio
from mcp import MCPError, types
from mcp.server.elicitation import AcceptedElicitation, AcceptedUrlElicitation

from mcp_adapter.errors import ToolError
from mcp_adapter.input.questions import (
    Marker,
    Outcome,
    accepted,
    checked,
    declares,
    digest,
    is_marker,
    missing_capability,
    render,
    restored,
)

MAX_INPUT_ROUNDS = 8
"""Rounds of questions one call may go through (in either era) before it is refused."""

MAX_QUESTIONS_PER_ROUND = 16
"""Questions one round may ask at once."""

MAX_STATE_CHARS = 256 * 1024
"""The most a call may carry from one round to the next, as JSON characters: on 2026-07-28
the ``requestState`` (before the SDK seals it), on 2025-11-25 the answers recorded so far."""


class Resolving(Protocol):
    """A compiled resolver, as the phase walks it (``compiled.resolvers.ResolverPlan``)."""

    @property
    def key(self) -> str:
        """Its stable name on the wire (``inputRequests`` keys, recorded outcomes)."""

    @property
    def label(self) -> str: ...

    @property
    def needs(self) -> Sequence[tuple[str, Resolving, bool]]:
        """``(parameter, resolver, whole outcome)`` of each resolved parameter it takes."""


@dataclasses.dataclass(frozen=True, slots=True)
class RoundState:
    """What a call carries from one round to the next (sealed in ``requestState`` on
    2026-07-28, kept in memory between 2025-11-25 rounds)."""

    recorded: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    """Each answered question's outcome, by resolver key, pinned to its digest (``q``)."""
    asked: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The digest of each question asked in the last round, by resolver key."""
    rounds: int = 0
    """Rounds that asked so far."""


NO_ROUND_STATE = RoundState()


@dataclasses.dataclass(frozen=True, slots=True)
class Retry:
    """A round's input: the client's answers (unchecked, by key) and the progress so far."""

    answers: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    progress: RoundState = NO_ROUND_STATE


FIRST = Retry()


class Pending(Exception):
    """A resolver (or one it depends on) waits for an answer not given yet."""


Send = Callable[[types.InputRequest], Awaitable[Any]]
"""Asks the client over the 2025-11-25 back-channel; returns its answer as JSON."""


class Asker:
    """Turns a resolver's marker into an outcome (see the module's docstring)."""

    __slots__ = (
        "capabilities",
        "pending",
        "reachable",
        "recorded",
        "retry",
        "send",
        "sent",
        "timeout",
    )

    def __init__(
        self,
        capabilities: Mapping[str, Any],
        retry: Retry,
        send: Send | None = None,
        timeout: float = 300.0,
        *,
        reachable: bool = True,
    ) -> None:
        self.capabilities = capabilities
        self.retry = retry
        self.send = send
        self.timeout = timeout
        self.reachable = reachable
        """``False``: 2025-11-25 without a back-channel, where no question can go out."""
        self.pending: dict[str, types.InputRequest] = {}
        self.recorded: dict[str, Mapping[str, Any]] = {}
        """This round's outcomes of asked questions (what the next round may reuse)."""
        self.sent: dict[int, int] = {}
        """2025-11-25, asking at once: questions sent, by the round a 2026-07-28 call
        would have asked them in (the rounds before this one's, plus the number of
        answers they wait for, plus one)."""

    def progress(self) -> RoundState:
        """The progress the next round starts from, once this one asked ``pending`` (or
        its handler asked): one round more than the rounds so far, those whose questions
        went out at once on 2025-11-25 included (a tool error when its recorded answers
        are too large to carry)."""
        self._carried()
        asked = {key: digest(request) for key, request in self.pending.items()}
        rounds = max(self.retry.progress.rounds, max(self.sent, default=0)) + 1
        return RoundState(MappingProxyType(dict(self.recorded)), MappingProxyType(asked), rounds)

    async def ask(
        self, resolver: Resolving, marker: Marker, parameter: str, after: int = 0
    ) -> Outcome:
        """The outcome of ``marker``; ``after``: the rounds of questions its resolver's
        inputs went through (a question sent at once counts in the round after them)."""
        key = resolver.key
        request = render(marker)
        pinned = digest(request)
        record = self.retry.progress.recorded.get(key)
        if record is not None and record.get("q") == pinned:
            outcome = restored(marker, request, record)
            if outcome is not None:
                self.recorded[key] = record
                return outcome
        answer = self.retry.answers.get(key)
        if answer is not None and self.retry.progress.asked.get(key) == pinned:
            found = checked(marker, request, answer)
            if found is not None:
                return self._keep(key, pinned, found)
        if not self.reachable:
            raise no_back_channel()
        if not declares(self.capabilities, marker):
            raise missing_capability(marker, parameter)
        if self.send is None:
            self.pending[key] = request
            raise Pending
        self._may_send(self.retry.progress.rounds + after + 1)
        for _ in range(MAX_INPUT_ROUNDS):
            try:
                with anyio.fail_after(self.timeout):
                    answer = await self.send(request)
            except TimeoutError:
                raise ToolError(
                    f"The client did not answer the request for {parameter!r} within "
                    f"{self.timeout:g} s"
                ) from None
            found = checked(marker, request, answer)
            if found is not None:
                return self._keep(key, pinned, found)
        raise ToolError(
            f"The client's answers to the question for {parameter!r} did not match what was asked"
        )

    def _may_send(self, round_: int) -> None:
        """2025-11-25, asking at once: the limits a 2026-07-28 call meets (rounds,
        questions a round, answers carried), counted as if its questions had waited for
        the round's end; past one the call ends before the question goes out."""
        if round_ > MAX_INPUT_ROUNDS:
            raise rounds_exceeded()
        asked = self.sent.get(round_, 0) + 1
        if asked > MAX_QUESTIONS_PER_ROUND:
            raise too_many_questions(asked)
        self._carried()
        self.sent[round_] = asked

    def _carried(self) -> None:
        """The answers recorded so far fit what a call may carry to its next question."""
        if self.recorded and len(json.dumps(self.recorded)) > MAX_STATE_CHARS:
            raise too_large()

    def _keep(self, key: str, pinned: str, found: tuple[Outcome, dict[str, Any]]) -> Outcome:
        outcome, record = found
        self.recorded[key] = {**record, "q": pinned}
        return outcome


Invoke = Callable[[Any, dict[str, Any]], Awaitable[Any]]
"""Calls one resolver with its resolved arguments (the rest come from its plan)."""


class Resolution:
    """One round of a call's input phase: each resolver's outcome, by key."""

    __slots__ = ("asker", "depth", "invoke", "outcomes")

    def __init__(self, invoke: Invoke, asker: Asker) -> None:
        self.invoke = invoke
        self.asker = asker
        self.outcomes: dict[str, Outcome] = {}
        self.depth: dict[str, int] = {}
        """The rounds of questions each outcome waited for (absent: none)."""

    async def run(self, resolvers: Sequence[tuple[str, Resolving]]) -> bool:
        """Resolve each ``(parameter, resolver)``; whether every one has its outcome
        (else ``asker.pending`` holds this round's questions)."""
        done = True
        for parameter, resolver in resolvers:
            try:
                await self.outcome(resolver, parameter)
            except Pending:
                done = False
        if len(self.asker.pending) > MAX_QUESTIONS_PER_ROUND:
            raise too_many_questions(len(self.asker.pending))
        return done

    async def outcome(self, resolver: Resolving, parameter: str) -> Outcome:
        key = resolver.key
        if key in self.outcomes:
            return self.outcomes[key]
        if key in self.asker.pending:
            raise Pending
        given: dict[str, Any] = {}
        waiting = False
        after = 0
        for name, dependency, whole in resolver.needs:
            try:
                found = await self.outcome(dependency, name)
            except Pending:
                waiting = True  # its siblings still run: their questions join this round
                continue
            given[name] = found if whole else unwrap(found, name)
            after = max(after, self.depth.get(dependency.key, 0))
        if waiting:
            raise Pending
        value = await self.invoke(resolver, given)
        if is_marker(value):
            outcome = await self.asker.ask(resolver, value, parameter, after)
            after += 1
        else:
            outcome = accepted(value)
        self.outcomes[key] = outcome
        if after:
            self.depth[key] = after
        return outcome

    def values(self, slots: Sequence[tuple[str, Resolving, bool]]) -> dict[str, Any]:
        """The arguments of one consumer: each resolved parameter's value."""
        return {
            name: self.outcomes[resolver.key]
            if whole
            else unwrap(self.outcomes[resolver.key], name)
            for name, resolver, whole in slots
        }


def next_round(retry: Retry, asker: Asker | None = None) -> RoundState:
    """What a round that asks hands on to the next, in every way of asking (its
    resolvers' questions, or its handler's ``McpResponse.elicit``): the answers recorded
    so far (``asker``'s, when resolvers ran) and one round more than ``retry`` brought;
    past ``MAX_INPUT_ROUNDS`` the call ends with a tool error instead."""
    if asker is not None:
        progress = asker.progress()
    else:
        progress = RoundState(retry.progress.recorded, {}, retry.progress.rounds + 1)
    if progress.rounds > MAX_INPUT_ROUNDS:
        raise rounds_exceeded()
    return progress


def unwrap(outcome: Outcome, parameter: str) -> Any:
    """The value a plain ``T`` parameter gets; a declined or cancelled question ends the call."""
    if isinstance(outcome, AcceptedElicitation):
        return outcome.data
    if isinstance(outcome, AcceptedUrlElicitation):
        return outcome
    action = getattr(outcome, "action", "declined")
    raise ToolError(
        f"The user {_past(action)} the request for {parameter!r}; the call cannot go on without it"
    )


def _past(action: str) -> str:
    return {"decline": "declined", "cancel": "cancelled"}.get(action, action)


def rounds_exceeded() -> ToolError:
    return ToolError(
        f"This call asked for input in {MAX_INPUT_ROUNDS} rounds without an end; "
        "the call is refused"
    )


def too_many_questions(count: int) -> ToolError:
    return ToolError(
        f"This call asks {count} questions at once; at most {MAX_QUESTIONS_PER_ROUND} are allowed"
    )


def too_large() -> ToolError:
    return ToolError(
        "The answers of this call are too large to carry to its next round "
        f"(at most {MAX_STATE_CHARS} characters of requestState)"
    )


def no_back_channel() -> MCPError:
    return MCPError(
        types.INVALID_REQUEST,
        "This call needs input, and on 2025-11-25 this transport cannot send the server's "
        "request to the client (stateless or JSON-response HTTP); serve it statefully with "
        "SSE responses, or call it with 2026-07-28",
    )
