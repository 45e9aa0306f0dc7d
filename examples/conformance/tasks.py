"""The tasks extension's fixtures (``tasks-*`` scenarios of the conformance suite):
tools that run as tasks when the client negotiated ``io.modelcontextprotocol/tasks``."""

from __future__ import annotations

import anyio
from mcp import MCPError, types

from mcp_adapter import McpRequest, McpResponse, Tool, ToolError
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


CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}


class ConfirmDeleteTool(Tool[ConfirmInput]):
    name = "confirm_delete"
    description = "Asks to confirm before deleting a file."
    task_support = "optional"

    async def handle(self, payload: ConfirmInput, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("input")
        if answer is None:
            return McpResponse.elicit(f"Delete {payload.filename}?", CONFIRM_SCHEMA)
        return McpResponse.text(f"deleted {payload.filename}")


TASK_TOOLS = (
    GreetTool,
    SlowComputeTool,
    FailingJobTool,
    ProtocolErrorJobTool,
    ConfirmDeleteTool,
)
