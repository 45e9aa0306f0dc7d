"""A server whose tool asks for input, for the request-state and back-channel tests."""

from __future__ import annotations

from mcp_adapter import McpRequest, McpResponse, Server, Tool
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


class AskServer(Server):
    name = "asking"
    tools = (AskTool,)
