"""The demo server of the seeds, written with this project's imports.

Serve it (README command one does this)::

    mcp-adapter serve examples.demo.server:DemoServer \
        --container examples.demo.container:build_container \
        --http --auth examples.demo.auth:verifier --anonymous
"""

from __future__ import annotations

from examples.demo.services import GreetingService, NameFormatter

from mcp_adapter import (
    McpRequest,
    McpResponse,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    ToolAnnotations,
)
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

    def __init__(self, greetings: GreetingService) -> None:
        self.greetings = greetings

    async def handle(self, payload: GreetInput, names: NameFormatter) -> McpResponse:
        name = names.normalize(payload.name)
        if not name:
            return McpResponse.error("Provide a nonempty name.")
        return McpResponse.structured(self.greetings.greet(name))


class SummaryInput(Schema):
    values: list[float]


class SummaryOutput(Schema):
    count: int
    total: float


class SummaryTool(Tool[SummaryInput, SummaryOutput]):
    name = "summarize"
    title = "Summarize numbers"
    description = "Count and add up a list of numbers."
    annotations = ToolAnnotations(
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )

    async def handle(self, payload: SummaryInput) -> McpResponse:
        return McpResponse.structured(
            {
                "count": len(payload.values),
                "total": sum(payload.values, 0.0),
            }
        )


class GreetingResource(Resource):
    name = "greeting"
    uri_template = "demo://greetings/{name}"
    mime_type = "text/plain"

    def __init__(self, greetings: GreetingService) -> None:
        self.greetings = greetings

    def handle(self, name: str, names: NameFormatter) -> McpResponse:
        return McpResponse.text(self.greetings.greet(names.normalize(name)))


class GreetingPrompt(Prompt):
    name = "greeting"
    arguments = (PromptArgument(name="name", required=True),)

    def __init__(self, greetings: GreetingService) -> None:
        self.greetings = greetings

    async def handle(self, name: str, names: NameFormatter) -> McpResponse:
        greeting = self.greetings.greet(names.normalize(name))
        return McpResponse.text(greeting).asUser()


class PrivateInput(Schema):
    message: str


class PrivateTool(Tool[PrivateInput]):
    """Echo a message back, only to an authenticated caller."""

    name = "private-message"
    annotations = ToolAnnotations(
        read_only=True,
        destructive=False,
        idempotent=True,
        open_world=False,
    )

    def shouldRegister(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def authorize(self, request: McpRequest) -> bool:
        return request.identity is not None

    async def handle(self, payload: PrivateInput) -> McpResponse:
        return McpResponse.text(payload.message)


class DemoServer(Server):
    name = "Demo"
    title = "mcp-adapter demo"
    instructions = "Greet people, add up numbers; private-message needs a bearer token."
    tools = (GreetTool, SummaryTool, PrivateTool)
    resources = (GreetingResource,)
    prompts = (GreetingPrompt,)
