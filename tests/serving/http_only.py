"""A server whose tool needs the HTTP request, for the transport checks."""

from __future__ import annotations

from starlette.requests import Request

from mcp_adapter import McpResponse, Server, Tool


class Origin:
    def __init__(self, request: Request) -> None:
        self.host = request.url.hostname


class OriginTool(Tool):
    name = "origin"

    async def handle(self, origin: Origin) -> McpResponse:
        return McpResponse.text(str(origin.host))


class OriginServer(Server):
    name = "origin"
    tools = (OriginTool,)
