"""A server with a tool, a function tool, a resource template and a prompt, for the layers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from container import Container
from mcp_adapter import (
    McpExtension,
    McpResponse,
    Platform,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
    ToolError,
    tool,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema

SECRET = "s3cr3t-argument-value"
"""An argument value no record may carry."""


class EchoInput(Schema):
    text: str
    mode: str = "ok"


class Echo(Tool[EchoInput]):
    """Echo text; ``mode`` makes it answer an error, refuse or fail."""

    name = "echo"

    async def handle(self, payload: EchoInput) -> McpResponse:
        if payload.mode == "error":
            return McpResponse.error(f"cannot echo {payload.text}")
        if payload.mode == "refuse":
            raise ToolError("echo refused")
        if payload.mode == "fail":
            raise RuntimeError(f"echo broke on {payload.text}")
        return McpResponse.text(payload.text)


class Note(Resource):
    uri_template = "notes://{number}"

    async def handle(self, number: int) -> McpResponse:
        if number < 0:
            raise RuntimeError("negative note")
        return McpResponse.text("note " * number)

    async def complete(self, argument: str, value: str) -> list[str]:
        return [value + "1"]


class Greeting(Prompt):
    arguments: ClassVar = (PromptArgument(name="who", required=True),)

    async def handle(self, who: str) -> McpResponse:
        return McpResponse.text(f"hello {who}")


class Texts(McpExtension):
    """Function tools: a plain value of the size asked for."""

    @tool
    def repeat(self, times: int) -> str:
        """The letter x, ``times`` times."""
        return "x" * times


def served(
    *layers: Callable[..., Any], server: str = "layered", more: Sequence[McpExtension] = ()
) -> Platform:
    """A server with ``layers`` as its ``Server.middleware``, the function tools of
    ``Texts`` and those of ``more``."""

    class Layered(Server):
        name = server
        tools = (Echo,)
        resources = (Note,)
        prompts = (Greeting,)
        middleware: ClassVar = layers

    return Platform([Texts(), *more], server=Layered)


def client(
    *layers: Callable[..., Any], era: str, more: Sequence[McpExtension] = (), **options: Any
) -> McpTestClient:
    """The test client of ``served(*layers, more=more)`` in ``era`` (``identity=``, ...)."""
    return McpTestClient(Container(), served(*layers, more=more), protocol=era, **options)
