# Seed 004, "Structured responses": an object output contract.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
from mcp_adapter import McpResponse, Tool
from schemas import Schema


class SummaryInput(Schema):
    values: list[float]


class SummaryOutput(Schema):
    count: int
    total: float


class SummaryTool(Tool[SummaryInput, SummaryOutput]):
    name = "summarize"

    async def handle(self, payload: SummaryInput) -> McpResponse:
        return McpResponse.structured({
            "count": len(payload.values),
            "total": sum(payload.values, 0.0),
        })
