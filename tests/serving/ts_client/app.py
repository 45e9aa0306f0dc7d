"""The small server the TypeScript SDK's client drives over stdio: a tool whose resolver
asks the client to sample, one that asks for its roots, one that announces a change of
the tool list through the injected ``Notifier``."""

from __future__ import annotations

from typing import Annotated

from mcp import types

from mcp_adapter import ListRoots, McpResponse, Resolve, Sample, Server, Tool
from mcp_adapter.notifications import Notifier
from schemas import Schema


class Topic(Schema):
    topic: str


def summarize(payload: Topic) -> Sample:
    text = types.TextContent(type="text", text=f"Summarize {payload.topic} in one line")
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=60)


def workspace() -> ListRoots:
    return ListRoots()


class SummarizeTool(Tool[Topic]):
    name = "summarize"

    async def handle(
        self, summary: Annotated[types.CreateMessageResult, Resolve(summarize)]
    ) -> McpResponse:
        content = summary.content
        text = content.text if isinstance(content, types.TextContent) else repr(content)
        return McpResponse.text(f"summary: {text} (by {summary.model})")


class RootsTool(Tool):
    name = "roots"

    async def handle(
        self, roots: Annotated[types.ListRootsResult, Resolve(workspace)]
    ) -> McpResponse:
        return McpResponse.text(", ".join(f"{root.name}={root.uri}" for root in roots.roots))


class AnnounceTool(Tool):
    name = "announce"

    async def handle(self, notifier: Notifier) -> McpResponse:
        await notifier.tool_list_changed()
        return McpResponse.text("announced")


class TsClientServer(Server):
    name = "ts-client-server"
    tools = (SummarizeTool, RootsTool, AnnounceTool)
