"""A server whose components raise ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``
and a self-made ``CancelledError``: none may stop it. Served in process and by
``mcp-adapter serve tests.reliability.interrupts:InterruptServer --container
tests.reliability.interrupts:build_container`` (stdio and HTTP)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Literal

import anyio

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, PromptArgument, Resource, Server, Tool
from schemas import Schema

Kind = Literal["exit", "interrupt", "generator-exit", "cancelled"]
KINDS: tuple[Kind, ...] = ("exit", "interrupt", "generator-exit", "cancelled")


def interrupt(kind: str) -> None:
    if kind == "exit":
        raise SystemExit(3)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind == "generator-exit":
        raise GeneratorExit
    raise asyncio.CancelledError


class RaiseInput(Schema):
    kind: Kind


class AsyncRaiseTool(Tool[RaiseInput]):
    name = "async-raise"

    async def handle(self, payload: RaiseInput) -> McpResponse:
        interrupt(payload.kind)
        return McpResponse.text("unreachable")


class SyncRaiseTool(Tool[RaiseInput]):
    """A sync handler: it runs in a worker thread."""

    name = "sync-raise"

    def handle(self, payload: RaiseInput) -> McpResponse:
        interrupt(payload.kind)
        return McpResponse.text("unreachable")


class HookRaiseTool(Tool):
    name = "hook-raise"

    def authorize(self, request: McpRequest) -> bool:
        if request.method == "tools/call":  # listed, so that clients that list first call it
            raise SystemExit(4)
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class Exploding:
    """A scoped service whose factory raises ``KeyboardInterrupt``."""


def exploding() -> Exploding:
    raise KeyboardInterrupt


class FactoryRaiseTool(Tool):
    name = "factory-raise"

    async def handle(self, service: Exploding) -> McpResponse:
        return McpResponse.text("unreachable")


class Closing:
    """A scoped service whose finalizer raises ``SystemExit``."""


def closing() -> Iterator[Closing]:
    yield Closing()
    raise SystemExit(5)


class FinalizerRaiseTool(Tool):
    name = "finalizer-raise"

    async def handle(self, service: Closing) -> McpResponse:
        return McpResponse.text("handled")


class PingTool(Tool):
    name = "ping"

    async def handle(self) -> McpResponse:
        return McpResponse.text("pong")


STARTED = anyio.Event()
"""Set by ``wait`` once it runs (in process, per test: ``reset()``)."""
SEEN: list[str] = []


def reset() -> None:
    global STARTED
    STARTED = anyio.Event()
    SEEN.clear()


class WaitTool(Tool):
    """Waits until cancelled; records how it ended."""

    name = "wait"

    async def handle(self) -> McpResponse:
        STARTED.set()
        try:
            await anyio.sleep_forever()
        except BaseException as exc:
            SEEN.append(type(exc).__name__)
            raise
        return McpResponse.text("unreachable")


class RaiseResource(Resource):
    name = "raise"
    uri_template = "interrupt://{kind}"

    async def handle(self, kind: str) -> McpResponse:
        interrupt(kind)
        return McpResponse.text("unreachable")

    async def complete(self, argument: str, value: str) -> list[str]:
        interrupt(value)
        return []


class RaisePrompt(Prompt):
    name = "raise"
    arguments = (PromptArgument(name="kind", required=True),)

    def handle(self, kind: str) -> McpResponse:
        interrupt(kind)
        return McpResponse.text("unreachable")


class InterruptServer(Server):
    name = "interrupts"
    tools = (
        AsyncRaiseTool,
        SyncRaiseTool,
        HookRaiseTool,
        FactoryRaiseTool,
        FinalizerRaiseTool,
        PingTool,
        WaitTool,
    )
    resources = (RaiseResource,)
    prompts = (RaisePrompt,)


def build_container() -> Container:
    container = Container()
    container.scoped(Exploding, exploding)
    container.scoped(Closing, closing)
    return container


class ListingChoice:
    """Which interrupt the listed tool's hook raises while a listing runs."""

    def __init__(self, kind: str) -> None:
        self.kind = kind


class ListedTool(Tool):
    name = "listed"

    def shouldRegister(self, choice: ListingChoice) -> bool:
        interrupt(choice.kind)
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class ListingServer(Server):
    name = "listing"
    tools = (ListedTool, PingTool)
