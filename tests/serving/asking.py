"""A server whose tool asks for input, for the request-state and back-channel tests."""

from __future__ import annotations

from typing import Annotated

from mcp_adapter import Elicit, McpRequest, McpResponse, Resolve, Server, Tool
from schemas import Schema


class Confirm(Schema):
    ok: bool


class AskTool(Tool):
    name = "ask"

    async def handle(self, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("confirm")
        if answer is None:
            return McpResponse.elicit("Sure?", Confirm, key="confirm", state="asked")
        return McpResponse.text(f"{answer['action']} {request.request_state}")


async def confirm() -> Elicit[Confirm]:
    return Elicit("Sure?", Confirm)


class ResolvedAskTool(Tool):
    """The same question as a resolved parameter."""

    name = "ask_resolved"

    async def handle(self, answer: Annotated[Confirm, Resolve(confirm)]) -> McpResponse:
        return McpResponse.text(f"ok={answer.ok}")


class AskServer(Server):
    name = "asking"
    tools = (AskTool, ResolvedAskTool)
