# Seed 004, "Services in the constructor and method": app/mcp/servers/demo_server.py.
# Kept as the seed prints it: no reformatting, no import sorting.
# fmt: off
# ruff: noqa: I001
from mcp_adapter import (
    McpResponse, Prompt, PromptArgument, Resource, Server, Tool,
)
from schemas import Schema


class GreetingService:
    def greet(self, name: str) -> str:
        return f"Hello, {name}!"


class NameFormatter:
    def normalize(self, name: str) -> str:
        return name.strip()


class GreetInput(Schema):
    name: str


class GreetTool(Tool[GreetInput, str]):
    name = "greet"
    description = "Return a greeting."

    def __init__(self, greetings: GreetingService) -> None:
        self.greetings = greetings

    async def handle(
        self,
        payload: GreetInput,
        names: NameFormatter,
    ) -> McpResponse:
        name = names.normalize(payload.name)
        return McpResponse.structured(self.greetings.greet(name))


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


class DemoServer(Server):
    name = "Demo"
    tools = (GreetTool,)
    resources = (GreetingResource,)
    prompts = (GreetingPrompt,)
