# Seed 004, "Generate a tool": the template `make:mcp-tool echo` writes.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
from mcp_adapter import McpResponse, Tool
from schemas import Schema

class EchoToolInput(Schema):
    """Arguments controlled by the MCP client."""

    message: str

class EchoTool(Tool[EchoToolInput]):
    """Describe the work performed by this tool."""

    description = "Echo the provided message."
    input = EchoToolInput

    async def handle(self, payload: EchoToolInput) -> McpResponse:
        """
        Process the validated input message.

        Parameters
        ----------
        payload : EchoToolInput
            Validated arguments supplied by the MCP client.

        Returns
        -------
        McpResponse
            Text response containing the input message.
        """
        return McpResponse.text(payload.message)
