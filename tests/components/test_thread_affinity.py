"""A sync handler's services, and their finalizers, run on the worker thread the handler
runs on: thread-bound resources such as a ``sqlite3`` connection work.

Before, the services were built (and finalized) on the event loop's thread and the
handler ran in a worker thread, so sqlite3 refused the connection ("objects created
in a thread can only be used in that same thread").
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator

import pytest

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class Threads:
    """Where each part of a call ran."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def mark(self, what: str) -> None:
        self.seen.append((what, threading.get_ident()))


class Notes:
    def __init__(self, db: sqlite3.Connection, threads: Threads) -> None:
        threads.mark("service")
        self.db = db

    def count(self) -> int:
        return int(self.db.execute("select count(*) from notes").fetchone()[0])


def database(threads: Threads) -> Iterator[sqlite3.Connection]:
    threads.mark("factory")
    db = sqlite3.connect(":memory:")
    db.execute("create table notes (body text)")
    db.execute("insert into notes values ('a'), ('b')")
    yield db
    db.close()  # refuses another thread
    threads.mark("finalizer")


class AddInput(Schema):
    body: str


class AddTool(Tool[AddInput]):
    name = "add"

    def __init__(self, notes: Notes) -> None:
        self.notes = notes

    def shouldRegister(self, threads: Threads) -> bool:
        threads.mark("hook")
        return True

    def handle(self, payload: AddInput, threads: Threads) -> McpResponse:
        threads.mark("handler")
        self.notes.db.execute("insert into notes values (?)", (payload.body,))
        return McpResponse.text(f"{self.notes.count()} notes")


class CountResource(Resource):
    name = "count"
    uri = "notes://count"

    def handle(self, notes: Notes, threads: Threads) -> McpResponse:
        threads.mark("handler")
        return McpResponse.text(str(notes.count()))


class CountPrompt(Prompt):
    name = "count"

    def handle(self, notes: Notes, threads: Threads) -> McpResponse:
        threads.mark("handler")
        return McpResponse.text(str(notes.count()))


class AsyncTool(Tool):
    name = "async_count"

    async def handle(self, notes: Notes, threads: Threads) -> McpResponse:
        threads.mark("handler")
        return McpResponse.text(str(notes.count()))


class AskingInput(Schema):
    pass


class Confirm(Schema):
    ok: bool


class AskTool(Tool):
    name = "ask"

    def handle(self, request: McpRequest, notes: Notes, threads: Threads) -> McpResponse:
        threads.mark("handler")
        if request.input_responses.get("go") is None:
            return McpResponse.elicit("Count?", Confirm, key="go")
        return McpResponse.text(str(notes.count()))


class NotesServer(Server):
    tools = (AddTool, AsyncTool, AskTool)
    resources = (CountResource,)
    prompts = (CountPrompt,)


def notes_container() -> tuple[Container, Threads]:
    container = Container()
    threads = Threads()
    container.instance(Threads, threads)
    container.scoped(sqlite3.Connection, database)
    container.scoped(Notes)
    return container, threads


def one_thread(threads: Threads) -> None:
    where = {ident for _, ident in threads.seen}
    assert len(where) == 1, threads.seen
    assert where != {threading.get_ident()}  # a worker thread, not the loop's


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_tool_call_runs_on_one_worker_thread(era: str) -> None:
    container, threads = notes_container()
    client = McpTestClient(container, NotesServer, protocol=era)
    assert (await client.tool("add", {"body": "c"})).texts == ["3 notes"]
    assert [what for what, _ in threads.seen] == [
        "factory",  # the tool's constructor needs Notes, built before its hook runs
        "service",
        "hook",
        "handler",
        "finalizer",
    ]
    one_thread(threads)


@pytest.mark.parametrize("era", ERAS)
async def test_sync_resources_and_prompts_too(era: str) -> None:
    container, threads = notes_container()
    client = McpTestClient(container, NotesServer, protocol=era)
    assert (await client.read_resource("notes://count")).texts == ["2"]
    one_thread(threads)
    threads.seen.clear()
    assert (await client.prompt("count")).texts == ["2"]
    one_thread(threads)


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_through_the_sdk_client(mode: str) -> None:
    container, threads = notes_container()
    async with sdk_client(NotesServer, container, mode) as client:
        listed = await client.list_tools()
        assert "add" in [tool.name for tool in listed.tools]
        one_thread(threads)  # the listing's hooks and their services: one thread too
        threads.seen.clear()
        result = await client.call_tool("add", {"body": "d"})
    assert not result.is_error
    one_thread(threads)


async def test_2025_input_rounds_stay_on_the_thread_and_ask_through_the_loop() -> None:
    container, threads = notes_container()

    async def answer(method: str, params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"ok": True}}

    client = McpTestClient(
        container,
        NotesServer,
        protocol="2025-11-25",
        capabilities={"elicitation": {}},
        on_server_request=answer,
    )
    assert (await client.tool("ask")).texts == ["2"]
    assert [what for what, _ in threads.seen].count("handler") == 2
    one_thread(threads)


async def test_an_async_handler_keeps_its_services_on_the_loop() -> None:
    container, threads = notes_container()
    client = McpTestClient(container, NotesServer)
    assert (await client.tool("async_count")).texts == ["2"]
    assert {ident for _, ident in threads.seen} == {threading.get_ident()}
