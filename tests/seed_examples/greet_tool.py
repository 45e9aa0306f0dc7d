# Seed 004, "Define input and output contracts": app/mcp/tools/greet_tool.py.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
from mcp_adapter import McpResponse, Tool, ToolAnnotations
from schemas import Schema


class GreetInput(Schema):
    name: str


class GreetTool(Tool[GreetInput, str]):
    name = "greet"
    title = "Greet a user"
    description = "Return a friendly greeting for the supplied name."
    annotations = ToolAnnotations(
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )

    async def handle(self, payload: GreetInput) -> McpResponse:
        if not payload.name.strip():
            return McpResponse.error("Provide a nonempty name.")
        return McpResponse.structured(f"Hello, {payload.name}!")
