"""A server with eager singletons and a lifespan that journal to a file, for the serve tests.

``LIFESPAN_LOG`` names the journal (one line per event, ``<pid> <event>``);
``LIFESPAN_FAIL`` makes a step fail (``pool``: an eager singleton, ``lifespan``:
the lifespan's start-up); ``LIFESPAN_PORT``, when set, is a port the start-up
tries to connect to, journaling whether anything listens there yet;
``LIFESPAN_HANG`` makes the lifespan's exit hang (``async``: it awaits forever,
``blocking``: it blocks the event loop).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import AsyncIterator, Iterator

import anyio

from container import Container, Lifetime
from mcp_adapter import McpResponse, Server, Tool

LOG_ENV = "LIFESPAN_LOG"
FAIL_ENV = "LIFESPAN_FAIL"
PORT_ENV = "LIFESPAN_PORT"
HANG_ENV = "LIFESPAN_HANG"


def journal(event: str) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {event}\n")


class Pool:
    """An eager singleton: built at start-up, finalized at shutdown."""

    def __init__(self) -> None:
        self.ready = False


def pool() -> Iterator[Pool]:
    if os.environ.get(FAIL_ENV) == "pool":
        raise RuntimeError("the database is unreachable")
    journal("pool up")
    yield Pool()
    journal("pool down")


class Migrations:
    """A second eager singleton, built after the pool (binding order)."""


def migrations(pool: Pool) -> Iterator[Migrations]:
    journal("migrated")
    yield Migrations()
    journal("migrations down")


def _port_state() -> str:
    port = os.environ.get(PORT_ENV)
    if not port:
        return "unknown"
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
    except OSError:
        return "closed"
    return "open"


class StatusTool(Tool):
    """What the lifespan prepared, seen by a request."""

    name = "status"

    async def handle(self, pool: Pool) -> McpResponse:
        journal("request")
        return McpResponse.structured({"ready": pool.ready, "pid": os.getpid()})


class Conversation:
    """Session-scoped: one per 2025-11-25 session (per request in 2026-07-28)."""


def conversation() -> Iterator[Conversation]:
    yield Conversation()
    journal("session down")


class TurnTool(Tool):
    """Uses the session's service."""

    name = "turn"

    async def handle(self, conversation: Conversation) -> McpResponse:
        journal("turn")
        return McpResponse.text("turned")


class WaitTool(Tool):
    """A call still in flight when the stop signal comes."""

    name = "wait"

    async def handle(self, pool: Pool) -> McpResponse:
        journal("waiting")
        try:
            await anyio.sleep_forever()
        finally:
            journal("wait cancelled")
        return McpResponse.text("never")


class LifespanServer(Server):
    name = "lifespan-demo"
    tools = (StatusTool, TurnTool, WaitTool)

    async def lifespan(self, pool: Pool, migrations: Migrations) -> AsyncIterator[None]:
        journal(f"lifespan up (port {_port_state()})")
        if os.environ.get(FAIL_ENV) == "lifespan":
            raise RuntimeError("migration 0042 failed")
        pool.ready = True
        try:
            yield
        finally:
            pool.ready = False
            hang = os.environ.get(HANG_ENV)
            if hang:
                journal("lifespan hangs")
                if hang == "blocking":
                    time.sleep(3600)
                else:
                    await anyio.sleep_forever()
            journal("lifespan down")


def build_container() -> Container:
    container = Container()
    container.singleton(Pool, pool, eager=True)
    container.singleton(Migrations, migrations, eager=True)
    return container


def build_session_container() -> Container:
    """``build_container`` with the session-scoped ``Conversation`` (``turn``)."""
    container = build_container()
    container.bind(Conversation, conversation, Lifetime.SESSION)
    return container
