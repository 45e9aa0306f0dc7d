"""A sync handler's services, and their finalizers, run on the worker thread the handler
runs on: thread-bound resources such as a ``sqlite3`` connection work.

Before, the services were built (and finalized) on the event loop's thread and the
handler ran in a worker thread, so sqlite3 refused the connection ("objects created
in a thread can only be used in that same thread").
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.layers import AccessLog
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


async def test_each_2025_input_round_runs_on_a_thread_in_a_scope_of_its_own() -> None:
    """A round that asks ends there (its scope closes on its thread); the question goes
    out on the loop; the answer comes to a new round, as a 2026-07-28 retry does."""
    container, threads = notes_container()

    async def answer(method: str, params: dict[str, object]) -> dict[str, object]:
        assert threads.seen[-1][0] == "finalizer", "the round that asked is over"
        return {"action": "accept", "content": {"ok": True}}

    client = McpTestClient(
        container,
        NotesServer,
        protocol="2025-11-25",
        capabilities={"elicitation": {}},
        on_server_request=answer,
    )
    assert (await client.tool("ask")).texts == ["2"]
    one_round = ["factory", "service", "handler", "finalizer"]
    assert [what for what, _ in threads.seen] == one_round * 2
    first, second = threads.seen[:4], threads.seen[4:]
    for round_ in (first, second):
        where = {ident for _, ident in round_}
        assert len(where) == 1, threads.seen
        assert where != {threading.get_ident()}


async def test_an_async_handler_keeps_its_services_on_the_loop() -> None:
    container, threads = notes_container()
    client = McpTestClient(container, NotesServer)
    assert (await client.tool("async_count")).texts == ["2"]
    assert {ident for _, ident in threads.seen} == {threading.get_ident()}


# -- with middleware: async layers on the loop, every sync part on one thread -------------
#
# Before, any middleware (a server's AccessLog included) made a component leave its
# thread: its services were built and finalized on the loop while its handler ran in a
# worker thread, so the docs' sqlite3 example failed under AccessLog with "SQLite
# objects created in a thread can only be used in that same thread".

NOTE_DB: list[tuple[str, int]] = []


def notes_db() -> Iterator[sqlite3.Connection]:
    """The docs' example (docs/tools.md, thread affinity): one connection per call."""
    db = sqlite3.connect(":memory:")  # bound to the thread that runs this
    NOTE_DB.append(("open", threading.get_ident()))
    db.execute("create table notes (body text)")
    yield db
    db.close()  # sqlite3 refuses this on any other thread
    NOTE_DB.append(("close", threading.get_ident()))


class NoteInput(Schema):
    body: str


class AddNoteTool(Tool[NoteInput]):
    name = "add_note"

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def handle(self, payload: NoteInput) -> McpResponse:
        NOTE_DB.append(("handle", threading.get_ident()))
        self.db.execute("insert into notes values (?)", (payload.body,))
        (count,) = self.db.execute("select count(*) from notes").fetchone()
        return McpResponse.text(f"{count} note(s)")


class NoteCount(Resource):
    name = "note_count"
    uri = "notes://db-count"

    def handle(self, db: sqlite3.Connection) -> McpResponse:
        NOTE_DB.append(("handle", threading.get_ident()))
        return McpResponse.text(str(db.execute("select count(*) from notes").fetchone()[0]))


class NotePrompt(Prompt):
    name = "note_prompt"

    def handle(self, db: sqlite3.Connection) -> McpResponse:
        NOTE_DB.append(("handle", threading.get_ident()))
        return McpResponse.text(str(db.execute("select count(*) from notes").fetchone()[0]))


class Audit:
    """A scoped service a layer injects: the layer and the handler share one per call."""

    def __init__(self, db: sqlite3.Connection) -> None:
        NOTE_DB.append(("audit", threading.get_ident()))
        self.db = db

    def record(self, what: str) -> None:
        self.db.execute("create table if not exists audit (what text)")
        self.db.execute("insert into audit values (?)", (what,))
        NOTE_DB.append(("record", threading.get_ident()))


async def audited(call: Any, call_next: Any, audit: Audit) -> Any:
    """A user layer: async (on the loop), injected a sync scoped service (built on the
    call's thread); it hands its work to that service's own thread-bound connection."""
    NOTE_DB.append(("layer", threading.get_ident()))
    return await call_next(call)


class AuditedTool(Tool[NoteInput]):
    name = "audited"

    def handle(self, payload: NoteInput, audit: Audit) -> McpResponse:
        audit.record(payload.body)
        (count,) = audit.db.execute("select count(*) from audit").fetchone()
        return McpResponse.text(f"{count} audited")


class LoggedNotes(Server):
    tools = (AddNoteTool,)
    resources = (NoteCount,)
    prompts = (NotePrompt,)
    middleware: ClassVar = (AccessLog(),)


class AuditedNotes(Server):
    tools = (AuditedTool, AddNoteTool)
    middleware: ClassVar = (audited,)


def db_container() -> Container:
    NOTE_DB.clear()
    container = Container()
    container.scoped(sqlite3.Connection, notes_db)
    container.scoped(Audit)
    return container


def on_one_worker_thread() -> None:
    where = {ident for what, ident in NOTE_DB if what != "layer"}
    assert len(where) == 1, NOTE_DB
    assert where != {threading.get_ident()}, "a worker thread, not the loop's"
    layers = {ident for what, ident in NOTE_DB if what == "layer"}
    assert layers <= {threading.get_ident()}, "async layers run on the loop"


@pytest.mark.parametrize("era", ERAS)
async def test_the_docs_sqlite_example_works_under_access_log(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcp_adapter.access")
    client = McpTestClient(db_container(), LoggedNotes, protocol=era)
    (await client.tool("add_note", {"body": "buy milk"})).assertOk().assertTextContains("1 note")
    assert [what for what, _ in NOTE_DB] == ["open", "handle", "close"]
    on_one_worker_thread()
    assert "tools/call 'add_note' ok" in caplog.text
    for read in (client.read_resource("notes://db-count"), client.prompt("note_prompt")):
        NOTE_DB.clear()
        assert (await read).texts == ["0"]
        assert [what for what, _ in NOTE_DB] == ["open", "handle", "close"]
        on_one_worker_thread()


@pytest.mark.parametrize("era", ERAS)
async def test_a_user_layer_injecting_a_scoped_service_keeps_the_call_on_one_thread(
    era: str,
) -> None:
    client = McpTestClient(db_container(), AuditedNotes, protocol=era)
    (await client.tool("audited", {"body": "x"})).assertOk().assertTextContains("1 audited")
    assert [what for what, _ in NOTE_DB] == ["open", "audit", "layer", "record", "close"]
    on_one_worker_thread()
    NOTE_DB.clear()
    (await client.tool("add_note", {"body": "y"})).assertOk().assertTextContains("1 note")
    on_one_worker_thread()


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_under_access_log_through_the_sdk_client(mode: str) -> None:
    async with sdk_client(LoggedNotes, db_container(), mode) as client:
        result = await client.call_tool("add_note", {"body": "d"})
    assert not result.is_error, result
    on_one_worker_thread()
