"""Servers with task tools, and a scoped service that counts how often it was finalized."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import anyio
from mcp import MCPError

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from mcp_adapter.declare.tasks import Tasks
from mcp_adapter.errors import ToolError


@dataclass
class Ledger:
    """Counts request-scoped services built and finalized, shared by a test."""

    built: int = 0
    finalized: int = 0
    gate: anyio.Event = field(default_factory=anyio.Event)


class Session:
    """A request-scoped service with a finalizer."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger


def container_with(ledger: Ledger) -> Container:
    container = Container()
    container.instance(Ledger, ledger)

    def session(ledger: Ledger) -> Iterator[Session]:
        ledger.built += 1
        try:
            yield Session(ledger)
        finally:
            ledger.finalized += 1

    container.scoped(Session, session)
    return container


class Echo(Tool):
    """Answers its text, in a task when the client can have one."""

    name = "echo"
    task_support = "optional"

    async def handle(self, session: Session) -> McpResponse:
        return McpResponse.text(f"echo {session.ledger.built}")


class Waits(Tool):
    """Waits until the test lets it go (or is cancelled)."""

    name = "waits"
    task_support = "required"

    async def handle(self, session: Session) -> McpResponse:
        await session.ledger.gate.wait()
        return McpResponse.text("let go")


class Fails(Tool):
    name = "fails"
    task_support = "optional"

    async def handle(self) -> McpResponse:
        raise ToolError("no luck")


class Breaks(Tool):
    name = "breaks"
    task_support = "optional"

    async def handle(self) -> McpResponse:
        raise MCPError(-32603, "broken on purpose")


class Inline(Tool):
    name = "inline"

    async def handle(self) -> McpResponse:
        return McpResponse.text("inline")


class TaskServer(Server):
    name = "task-server"
    tools = (Echo, Waits, Fails, Breaks, Inline)
    tasks = Tasks(max_running_per_identity=2, max_running=3)


class PlainServer(Server):
    name = "plain"
    tools = (Inline,)
