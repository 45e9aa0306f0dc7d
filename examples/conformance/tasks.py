"""The tasks extension's fixtures (``tasks-*`` scenarios of the conformance suite):
tools that run as tasks when the client negotiated ``io.modelcontextprotocol/tasks``."""

from __future__ import annotations

from typing import Annotated

import anyio
from examples.conformance.inputs import Name, user_name
from mcp import MCPError, types

from mcp_adapter import Elicit, McpResponse, Resolve, Tool, ToolError
from schemas import Schema


class GreetInput(Schema):
    name: str


class GreetTool(Tool[GreetInput]):
    name = "greet"
    description = "Greets by name, at once (never a task)."

    async def handle(self, payload: GreetInput) -> McpResponse:
        return McpResponse.text(f"Hello, {payload.name}!")


class SlowInput(Schema):
    seconds: float = 1.0
    label: str = ""


class SlowComputeTool(Tool[SlowInput]):
    name = "slow_compute"
    description = "Sleeps for `seconds`, then answers; a task when the client can have one."
    task_support = "optional"

    async def handle(self, payload: SlowInput) -> McpResponse:
        await anyio.sleep(max(0.0, min(payload.seconds, 300.0)))
        return McpResponse.text(f"computed {payload.label} after {payload.seconds:g} s")


class FailingJobTool(Tool):
    name = "failing_job"
    description = "Runs as a task only, and reports a tool error after about a second."
    task_support = "required"

    async def handle(self) -> McpResponse:
        await anyio.sleep(1.0)
        raise ToolError("The job failed, as it always does")


class ProtocolErrorJobTool(Tool):
    name = "protocol_error_job"
    description = "Runs as a task, and ends in a protocol error."
    task_support = "required"

    async def handle(self) -> McpResponse:
        raise MCPError(types.INTERNAL_ERROR, "The job broke down")


class ConfirmInput(Schema):
    filename: str


class Confirm(Schema):
    confirm: bool


class Entry(Schema):
    name: str
    confirm: bool = False


async def confirm_deletion(payload: ConfirmInput) -> Elicit[Confirm]:
    return Elicit(f"Delete {payload.filename}?", Confirm)


async def first_entry() -> Elicit[Entry]:
    return Elicit("First entry?", Entry)


async def second_entry() -> Elicit[Entry]:
    return Elicit("Second entry?", Entry)


class ConfirmDeleteTool(Tool[ConfirmInput]):
    name = "confirm_delete"
    description = "Asks to confirm before deleting a file; as a task, the task waits for it."
    task_support = "optional"

    async def handle(
        self, payload: ConfirmInput, answer: Annotated[Confirm, Resolve(confirm_deletion)]
    ) -> McpResponse:
        if not answer.confirm:
            return McpResponse.text(f"kept {payload.filename}")
        return McpResponse.text(f"deleted {payload.filename}")


class MultiInputTool(Tool):
    name = "multi_input"
    description = "Asks two questions at once; as a task, it waits until both are answered."
    task_support = "optional"

    async def handle(
        self,
        first: Annotated[Entry, Resolve(first_entry)],
        second: Annotated[Entry, Resolve(second_entry)],
    ) -> McpResponse:
        return McpResponse.text(f"got {first.name} and {second.name}")


class TaskAfterInputTool(Tool):
    name = "test_tool_with_task"
    description = (
        "Asks the user's name inline (its authorize takes it), then runs as a task "
        "that greets them."
    )
    task_support = "required"

    async def authorize(self, name: Annotated[Name, Resolve(user_name)]) -> bool:
        return bool(name.name.strip())  # no task starts for a blank name

    async def handle(self, name: Annotated[Name, Resolve(user_name)]) -> McpResponse:
        return McpResponse.text(f"Hello, {name.name}! (from a task)")


TASK_TOOLS = (
    GreetTool,
    SlowComputeTool,
    FailingJobTool,
    ProtocolErrorJobTool,
    ConfirmDeleteTool,
    MultiInputTool,
    TaskAfterInputTool,
)
