"""A task tool that reads the HTTP request, and the service it needs that does too."""

from __future__ import annotations

from starlette.requests import Request

from container import Container
from mcp_adapter import McpResponse, Server, Tool


class Origin:
    """A request-scoped service built from the HTTP request."""

    def __init__(self, request: Request) -> None:
        self.host = request.headers.get("host", "")


class Peeks(Tool):
    name = "peeks"
    task_support = "optional"

    async def handle(self, origin: Origin) -> McpResponse:
        return McpResponse.text(origin.host)


class Peeking(Server):
    tools = (Peeks,)


def build_container() -> Container:
    container = Container()
    container.scoped(Origin)
    return container
