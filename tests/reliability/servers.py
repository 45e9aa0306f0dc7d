"""Servers the reliability suite attacks: every component kind, some failing with a secret.

``FuzzServer`` is also served over stdio by ``python -m tests.reliability.stdio_server``
and over HTTP by the fuzz tests.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import Field

from container import Container
from mcp_adapter import (
    McpRequest,
    McpResponse,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    Tool,
)
from schemas import Schema

SECRET = "s3cr3t-7f9c2e"
"""Planted in every internal failure's exception text; no response may contain it."""
SECRET_PATH = "/srv/app/internal/credentials.py"

LEAK_PATTERNS = (
    SECRET,
    SECRET_PATH,
    "Traceback",
    'File "',
    "site-packages",
    "/work/",
    "RuntimeError",
    "ValueError",
    "TypeError",
    "KeyError",
    "ValidationError",
    "pydantic_core",
    "errors.pydantic.dev",
    "input_value",
)
"""Text that would mean a traceback, a file path or internal exception text reached a client."""

INCIDENT = re.compile(r"incident ([0-9a-f]{12})")


def leaks(response: str, request: str = "") -> list[str]:
    """The leak patterns in ``response`` that the request itself did not contain."""
    return [p for p in LEAK_PATTERNS if p in response and p not in request]


def explode() -> None:
    raise RuntimeError(f"database password {SECRET} rejected, see {SECRET_PATH}")


class EchoInput(Schema):
    text: Annotated[str, Field(max_length=100_000)]
    count: int = 1
    tags: list[str] = Field(default_factory=list)


class EchoTool(Tool[EchoInput]):
    name = "echo"

    async def handle(self, payload: EchoInput, request: McpRequest) -> McpResponse:
        return McpResponse.text(payload.text[:64] * min(max(payload.count, 0), 3))


class BoomTool(Tool):
    name = "boom"

    async def handle(self) -> McpResponse:
        explode()
        return McpResponse.text("unreachable")


class SyncBoomTool(Tool[EchoInput]):
    name = "sync_boom"

    def handle(self, payload: EchoInput) -> McpResponse:
        explode()
        return McpResponse.text("unreachable")


class Point(Schema):
    x: int
    y: int


class PointTool(Tool[EchoInput, Point]):
    """Violates its own output contract whenever ``count`` is odd."""

    name = "point"

    async def handle(self, payload: EchoInput) -> McpResponse:
        if payload.count % 2:
            return McpResponse.structured({"x": SECRET})
        return McpResponse.structured({"x": 1, "y": payload.count})


class HiddenTool(Tool):
    name = "hidden"

    def shouldRegister(self, request: McpRequest) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text(SECRET)


class ForbiddenTool(Tool):
    name = "forbidden"

    def authorize(self, request: McpRequest) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text(SECRET)


class StaticResource(Resource):
    name = "static"
    uri = "fuzz://static"
    mime_type = "text/plain"

    async def handle(self) -> McpResponse:
        return McpResponse.text("static")


class ItemResource(Resource):
    name = "item"
    uri_template = "fuzz://items/{id}"

    async def handle(self, id: int) -> McpResponse:
        return McpResponse.text(f"item {id}")

    async def complete(self, argument: str, value: str) -> list[str]:
        return [v for v in ("1", "2", "3") if v.startswith(value)]


class BoomResource(Resource):
    name = "boom_resource"
    uri = "fuzz://boom"

    async def handle(self) -> McpResponse:
        explode()
        return McpResponse.text("unreachable")


class GreetPrompt(Prompt):
    name = "greet"
    arguments = (PromptArgument(name="who", required=True),)

    async def handle(self, who: str) -> McpResponse:
        return McpResponse.text(f"Hello {who[:32]}")

    async def complete(self, argument: str, value: str) -> list[str]:
        if value == "boom":
            explode()
        return [n for n in ("Ada", "Alan") if n.startswith(value)]


class BoomPrompt(Prompt):
    name = "boom_prompt"

    async def handle(self) -> McpResponse:
        explode()
        return McpResponse.text("unreachable")


class FuzzServer(Server):
    name = "fuzz"
    tools = (EchoTool, BoomTool, SyncBoomTool, PointTool, HiddenTool, ForbiddenTool)
    resources = (StaticResource, ItemResource, BoomResource)
    prompts = (GreetPrompt, BoomPrompt)


TOOL_NAMES = ("echo", "boom", "sync_boom", "point", "hidden", "forbidden")
PROMPT_NAMES = ("greet", "boom_prompt")
URIS = ("fuzz://static", "fuzz://items/1", "fuzz://items/x", "fuzz://boom", "fuzz://nope")


def container() -> Container:
    return Container()
