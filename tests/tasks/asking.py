"""Task tools that ask for input, a ledger of what ran, and a client that declares
elicitation (its answers go through ``tasks/update``, never through the callback)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from mcp import types

from container import Container
from mcp_adapter import (
    Elicit,
    ElicitationResult,
    McpRequest,
    McpResponse,
    Resolve,
    Server,
    Tasks,
    Tool,
)
from mcp_adapter.testing import TaskClient
from schemas import Schema


@dataclass
class Runs:
    """What a test's tools did: handler runs by tool, and the request-scoped service."""

    handled: list[str] = field(default_factory=list)
    built: int = 0
    finalized: int = 0


class Scoped:
    """A request-scoped service with a finalizer (counted in ``Runs``)."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs


def container_with(runs: Runs) -> Container:
    container = Container()
    container.instance(Runs, runs)

    def scoped(runs: Runs) -> Iterator[Scoped]:
        runs.built += 1
        try:
            yield Scoped(runs)
        finally:
            runs.finalized += 1

    container.scoped(Scoped, scoped)
    return container


class Target(Schema):
    filename: str


class Confirm(Schema):
    confirm: bool


class Name(Schema):
    name: str


class Color(Schema):
    color: str


async def confirm_deletion(payload: Target) -> Elicit[Confirm]:
    return Elicit(f"Delete {payload.filename}?", Confirm)


async def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


async def ask_color(name: Annotated[Name, Resolve(ask_name)]) -> Elicit[Color]:
    return Elicit(f"Which color, {name.name}?", Color)


class Delete(Tool[Target]):
    name = "delete"
    task_support = "required"

    async def handle(
        self,
        payload: Target,
        answer: Annotated[Confirm, Resolve(confirm_deletion)],
        scoped: Scoped,
    ) -> McpResponse:
        scoped.runs.handled.append(self.name)
        verb = "deleted" if answer.confirm else "kept"
        return McpResponse.text(f"{verb} {payload.filename}")


class Paint(Tool):
    """Two rounds: the color's question names the answer to the first."""

    name = "paint"
    task_support = "required"

    async def handle(
        self,
        name: Annotated[Name, Resolve(ask_name)],
        color: Annotated[Color, Resolve(ask_color)],
        scoped: Scoped,
    ) -> McpResponse:
        scoped.runs.handled.append(self.name)
        return McpResponse.text(f"{name.name} paints in {color.color}")


class Either(Tool):
    """Two independent questions, asked at once."""

    name = "either"
    task_support = "required"

    async def handle(
        self,
        name: Annotated[Name, Resolve(ask_name)],
        target: Annotated[Confirm, Resolve(confirm_any)],
        runs: Runs,
    ) -> McpResponse:
        runs.handled.append(self.name)
        return McpResponse.text(f"{name.name}: {target.confirm}")


async def confirm_any() -> Elicit[Confirm]:
    return Elicit("Go ahead?", Confirm)


class Branches(Tool):
    """Takes the whole outcome, so a decline or cancel reaches the handler."""

    name = "branches"
    task_support = "required"

    async def handle(
        self, answer: Annotated[ElicitationResult[Name], Resolve(ask_name)], runs: Runs
    ) -> McpResponse:
        runs.handled.append(self.name)
        return McpResponse.text(f"outcome: {answer.action}")


class Asks(Tool):
    """Asks from its handler (``McpResponse.elicit``), as a handler deciding mid-flow."""

    name = "asks"
    task_support = "required"

    async def handle(self, request: McpRequest, runs: Runs) -> McpResponse:
        runs.handled.append(self.name)
        answer = request.input_responses.get("sure")
        if answer is None:
            return McpResponse.elicit("Sure?", Confirm, key="sure")
        return McpResponse.text(f"sure: {answer['content']['confirm']}")


class Greets(Tool):
    """Its ``authorize`` takes the name: asked inline, before the task starts."""

    name = "greets"
    task_support = "required"

    async def authorize(self, name: Annotated[Name, Resolve(ask_name)]) -> bool:
        return bool(name.name.strip())

    async def handle(self, name: Annotated[Name, Resolve(ask_name)], runs: Runs) -> McpResponse:
        runs.handled.append(self.name)
        return McpResponse.text(f"Hello, {name.name}!")


class AskingServer(Server):
    name = "asking"
    tools = (Delete, Paint, Either, Branches, Asks, Greets)
    tasks = Tasks(max_running_per_identity=8, max_running=16)


class ShortServer(Server):
    name = "short"
    tools = (Delete,)
    tasks = Tasks(ttl=1.0, max_running_per_identity=1)


async def never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("a task's questions are answered by tasks/update")


@asynccontextmanager
async def asking(server: Any, runs: Runs) -> AsyncIterator[TaskClient]:
    """A 2026-07-28 client that negotiated tasks and declared elicitation."""
    async with TaskClient.connect(
        container_with(runs), server, elicitation_callback=never
    ) as tasks:
        yield tasks


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}
