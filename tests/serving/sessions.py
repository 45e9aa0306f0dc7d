"""A server with a session-scoped service, for the session-scope tests over real transports."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

from container import Container, Lifetime
from mcp_adapter import McpResponse, Server, Tool

SESSION_FILE_ENV = "MCP_TEST_SESSION_FILE"
_numbers = itertools.count(1)


class Conversation:
    """Lives per MCP session: counts the calls it served; its end is written to a file."""

    def __init__(self) -> None:
        self.number = next(_numbers)
        self.calls = 0


def conversation() -> Iterator[Conversation]:
    value = Conversation()
    yield value
    path = os.environ.get(SESSION_FILE_ENV)
    if path:
        with Path(path).open("a", encoding="utf-8") as file:
            file.write(f"closed {value.number} after {value.calls}\n")


class TurnTool(Tool):
    name = "turn"

    async def handle(self, conversation: Conversation) -> McpResponse:
        conversation.calls += 1
        return McpResponse.structured({"session": conversation.number, "calls": conversation.calls})


class SessionServer(Server):
    name = "sessions"
    tools = (TurnTool,)


def build_container() -> Container:
    container = Container()
    container.bind(Conversation, conversation, Lifetime.SESSION)
    return container
