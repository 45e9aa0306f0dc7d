# Seed 004, "Visibility and authorization": the PrivateTool example, verbatim but
# for the import lines.
from mcp_adapter import McpRequest, McpResponse, Tool
from schemas import Schema


class PrivateInput(Schema):
    message: str


class PrivateTool(Tool[PrivateInput]):
    name = "private-message"

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def authorize(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def handle(self, payload: PrivateInput) -> McpResponse:
        return McpResponse.text(payload.message)
