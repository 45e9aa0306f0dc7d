"""Servers for ``mcp-adapter list`` and ``check``: one fine, one broken in several ways."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import ConfigDict

from container import Container
from mcp_adapter import McpResponse, Prompt, Resource, Server, Tool, ToolAnnotations
from schemas import Schema
from tests.serving.http_only import OriginTool


class Clock(ABC):
    @abstractmethod
    def now(self) -> str: ...


class Repository:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


class LooseTool(Tool):
    """A tool that declares no annotations."""

    async def handle(self) -> McpResponse:
        return McpResponse.text("loose")


class FineServer(Server):
    name = "fine"
    tools = (LooseTool,)


class NeedsRepositoryTool(Tool):
    def __init__(self, repository: Repository) -> None:
        self.repository = repository

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


class BadInput(Schema):
    when: str


class BadNameTool(Tool[BadInput]):
    name = "bad name!"

    async def handle(self, payload: BadInput, clock: Clock) -> McpResponse:
        return McpResponse.text(payload.when)


class BrokenServer(Server):
    name = "broken"
    tools = (NeedsRepositoryTool, BadNameTool, LooseTool)


def container() -> Container:
    return Container()


def not_a_container() -> str:
    return "nope"


def exploding_container() -> Container:
    raise RuntimeError("database is down")


class ExternalRefInput(Schema):
    """Its published schema points outside itself: clients cannot resolve it."""

    model_config = ConfigDict(json_schema_extra={"$ref": "https://example.com/elsewhere.json"})

    text: str = ""


class ExternalRefTool(Tool[ExternalRefInput]):
    name = "external-ref"
    annotations = ToolAnnotations(read_only=True)

    async def handle(self, payload: ExternalRefInput) -> McpResponse:
        return McpResponse.text(payload.text)


class UnresolvableSchemaServer(Server):
    tools = (ExternalRefTool,)


class CompiledWithProblemsServer(Server):
    """Compiles, but against ``broken_binding_container`` its check finds a problem; its
    tools lack annotations and one needs the HTTP request."""

    name = "mixed"
    tools = (OriginTool, LooseTool)


def broken_binding_container() -> Container:
    """A binding no tool uses, which cannot be built: ``Repository`` needs a ``Clock``."""
    container = Container()
    container.scoped(Repository)
    return container


class OneProblemServer(Server):
    """One problem: its tool's repository needs a Clock nobody binds."""

    name = "one-problem"
    tools = (NeedsRepositoryTool,)


class NoteResource(Resource):
    name = "note"
    uri = "cli://note"

    def handle(self) -> McpResponse:
        return McpResponse.text("a note")


class OtherNoteResource(NoteResource):
    name = "other-note"
    uri = "cli://other-note"


class HelloPrompt(Prompt):
    name = "hello"

    async def handle(self) -> McpResponse:
        return McpResponse.text("hello").asUser()


class ByePrompt(HelloPrompt):
    name = "bye"


class TwoOfEachServer(Server):
    """Two resources and two prompts (and one tool): plural counts."""

    name = "two-of-each"
    tools = (LooseTool,)
    resources = (NoteResource, OtherNoteResource)
    prompts = (HelloPrompt, ByePrompt)
