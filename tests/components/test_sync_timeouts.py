"""A sync call past its ``timeout`` answers at its deadline, as an async one does, and its
unit of work rolls back once its worker thread returns.

Before, the wait for a sync handler's worker thread could not be cancelled and nothing
looked at the deadline afterwards: a sync tool, resource or prompt that took longer than
its ``timeout`` answered its late value as a success when the thread returned, and its
scope's finalizers saw no error (a unit of work committed). Here the handler blocks until
the test releases it, which it does only once the answer has arrived: before the fix the
answer never came (the bounded wait failed).

A handler whose worker thread had not started by its deadline (a loaded machine can take
longer than a 0.05 s ``timeout`` to start one) never runs: the call answers as well, and
only what its scope built is finalized. The tests accept either case and check each, and
``late_start`` forces the second. Before, they took every handler to have started: under
load the thread-bound cases waited for a rollback of a scope that never built anything,
and the mixed one found its rollback, done on the loop at the deadline, before the answer.

No test asserts on timing: each wait only bounds the test.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.from_thread
import pytest

from container import Container
from mcp_adapter import McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.dispatch import threads
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS

pytestmark = pytest.mark.anyio

BOUND = 20.0
"""Seconds any wait of this module may take before the test fails (a hang, not a threshold)."""


class Ledger:
    """What the units of work did, and on which thread."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.threads: dict[str, int] = {}
        self.release = threading.Event()
        self.entered = threading.Event()

    def note(self, event: str) -> None:
        self.events.append(event)
        self.threads[event] = threading.get_ident()


class UnitOfWork:
    """Commits when its scope ends without error, rolls back otherwise."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.open = True

    def write(self, what: str) -> None:
        self.ledger.note(f"write {what}")


def unit_of_work(ledger: Ledger) -> Iterator[UnitOfWork]:
    work = UnitOfWork(ledger)
    ledger.note("open")
    error = yield work
    work.open = False
    ledger.note("rollback" if error else "commit")


class Clock:
    """An async service: a component that takes it is not thread-bound."""


async def clock() -> AsyncIterator[Clock]:
    yield Clock()


def _slow(work: UnitOfWork, what: str) -> McpResponse:
    """The sync handlers' body: write, block until released, look at the unit of work."""
    work.write(what)
    work.ledger.entered.set()
    work.ledger.release.wait(BOUND)
    work.ledger.note(f"still open: {work.open}")
    return McpResponse.text("late")


class SlowTool(Tool):
    name = "slow"
    timeout = 0.05

    def handle(self, work: UnitOfWork) -> McpResponse:
        return _slow(work, "tool")


class SlowMixedTool(Tool):
    """A sync handler with an async service: its services live on the loop."""

    name = "slow_mixed"
    timeout = 0.05

    def handle(self, work: UnitOfWork, clock: Clock) -> McpResponse:
        return _slow(work, "mixed")


class SlowResource(Resource):
    uri = "notes://slow"
    timeout = 0.05

    def handle(self, work: UnitOfWork) -> McpResponse:
        return _slow(work, "resource")


class SlowPrompt(Prompt):
    name = "slow"
    timeout = 0.05

    def handle(self, work: UnitOfWork) -> McpResponse:
        return _slow(work, "prompt")


class QuickTool(Tool):
    """Sync, with a timeout it keeps: it commits, on its thread."""

    name = "quick"
    timeout = 30

    def handle(self, work: UnitOfWork) -> McpResponse:
        work.write("quick")
        return McpResponse.text("done")


class Timed(Server):
    name = "timed"
    threads = 1  # what makes ``_settled`` wait for a call's worker thread to be done
    tools = (SlowTool, SlowMixedTool, QuickTool)
    resources = (SlowResource,)
    prompts = (SlowPrompt,)


def serving() -> tuple[Container, Ledger]:
    ledger = Ledger()
    container = Container()
    container.instance(Ledger, ledger)
    container.scoped(UnitOfWork, unit_of_work)
    container.scoped(Clock, clock)
    return container, ledger


async def _answer_while_blocked(ledger: Ledger, ask: Any) -> tuple[Any, list[str]]:
    """The answer, got while the handler is (or would be) still blocked, and what the units
    of work had done by then; then release the handler."""
    try:
        with anyio.fail_after(BOUND):
            answer = await ask()
        return answer, list(ledger.events)
    finally:
        ledger.release.set()


async def _settled(client: McpTestClient, ledger: Ledger) -> list[str]:
    """What the units of work did once the call is over, its worker thread included.

    The server has one worker thread, which a call gives back only once everything handed
    to it has run (its scope's finalizers included): the ``quick`` call that follows gets
    it then, so what came before it is final, whether or not the handler ever started.
    """
    with anyio.fail_after(BOUND):
        (await client.tool("quick")).assertOk()
    done = ledger.events[:-3]
    assert ledger.events[-3:] == ["open", "write quick", "commit"]
    return done


def _rolled_back_after_the_handler(
    seen: list[str], events: list[str], what: str, thread_bound: bool
) -> None:
    """``seen``: the events when the answer arrived; ``events``: once the call was over."""
    if f"write {what}" in events:  # the handler started before its deadline: it ran to its end
        assert "rollback" not in seen, "no finalizer while the handler still runs"
        assert "commit" not in seen
        assert events == ["open", f"write {what}", "still open: True", "rollback"]
    elif thread_bound:  # not started by its deadline: it never does, nor its scope's services
        assert events == []
    else:  # its services were built on the loop: rolled back there, at the deadline
        assert events == ["open", "rollback"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("name", ["slow", "slow_mixed"])
async def test_a_sync_tool_past_its_timeout_answers_at_the_deadline_and_rolls_back(
    era: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcp_adapter")
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    answer, seen = await _answer_while_blocked(ledger, lambda: client.tool(name))
    answer.assertError("Tool timed out after 0.05 s (incident ")
    assert answer.result is not None
    incident = answer.result["_meta"]["incident"]
    assert f"timed out after 0.05 s (incident {incident})" in caplog.text
    events = await _settled(client, ledger)
    what = "tool" if name == "slow" else "mixed"
    _rolled_back_after_the_handler(seen, events, what, thread_bound=name == "slow")
    assert "late" not in str(answer.result), "the late value is discarded"
    if f"write {what}" in events:
        handler = ledger.threads[f"write {what}"]
        assert handler != threading.get_ident()
        # thread-bound: finalized on the handler's thread; else on the loop, after it
        finalizer = handler if name == "slow" else threading.get_ident()
        assert ledger.threads["rollback"] == finalizer


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_resource_past_its_timeout_fails_at_the_deadline_and_rolls_back(
    era: str,
) -> None:
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    answer, seen = await _answer_while_blocked(ledger, lambda: client.read_resource("notes://slow"))
    answer.assertError("Resource read failed (incident ")
    events = await _settled(client, ledger)
    _rolled_back_after_the_handler(seen, events, "resource", thread_bound=True)


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_prompt_past_its_timeout_fails_at_the_deadline_and_rolls_back(
    era: str,
) -> None:
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    answer, seen = await _answer_while_blocked(ledger, lambda: client.prompt("slow"))
    answer.assertError("Prompt failed (incident ")
    events = await _settled(client, ledger)
    _rolled_back_after_the_handler(seen, events, "prompt", thread_bound=True)


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_call_within_its_timeout_commits_on_its_thread(era: str) -> None:
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    (await client.tool("quick")).assertOk().assertTextContains("done")
    assert ledger.events == ["open", "write quick", "commit"]
    assert len({ledger.threads[event] for event in ledger.events}) == 1
    assert ledger.threads["commit"] != threading.get_ident()


class Blocker(Tool):
    """Holds the server's only worker thread until released."""

    name = "block"

    def handle(self, ledger: Ledger) -> McpResponse:
        ledger.note("blocking")
        ledger.entered.set()
        ledger.release.wait(BOUND)
        return McpResponse.text("released")


class Waiting(Tool):
    """Sync, with a timeout: it waits for a thread and never gets one in time."""

    name = "waiting"
    timeout = 0.05

    def handle(self, work: UnitOfWork) -> McpResponse:
        work.write("waiting")
        return McpResponse.text("ran")


class OneThread(Server):
    name = "one-thread"
    threads = 1
    tools = (Blocker, Waiting)


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_that_waits_for_a_thread_past_its_deadline_never_runs(era: str) -> None:
    container, ledger = serving()
    client = McpTestClient(container, OneThread, protocol=era)
    blocked: list[Any] = []
    async with anyio.create_task_group() as group:

        async def block() -> None:
            blocked.append(await client.tool("block"))

        group.start_soon(block)
        with anyio.fail_after(BOUND):
            await anyio.to_thread.run_sync(ledger.entered.wait, BOUND)
            answer = await client.tool("waiting")
        answer.assertError("Tool timed out after 0.05 s")
        ledger.release.set()
    blocked[0].assertOk()
    assert "write waiting" not in ledger.events
    assert "open" not in ledger.events, "its scope never built the unit of work"


class Polite(Tool):
    """Sync and long, but it looks for its cancellation between steps."""

    name = "polite"
    timeout = 0.05

    def handle(self, work: UnitOfWork) -> McpResponse:
        work.write("polite")
        work.ledger.entered.set()
        for _ in range(int(BOUND * 100)):
            anyio.from_thread.check_cancelled()  # raises once the call timed out
            work.ledger.release.wait(0.01)
        return McpResponse.text("never")


class PoliteServer(Server):
    name = "polite"
    threads = 1
    tools = (Polite, QuickTool)


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_handler_can_stop_at_its_deadline_by_itself(era: str) -> None:
    container, ledger = serving()
    client = McpTestClient(container, PoliteServer, protocol=era)
    with anyio.fail_after(BOUND):
        answer = await client.tool("polite")
    answer.assertError("Tool timed out after 0.05 s")
    events = await _settled(client, ledger)  # without the test releasing anything
    if "write polite" in events:  # it started before its deadline, and stopped by itself
        assert events == ["open", "write polite", "rollback"]
    else:  # it had not started by then: it never does
        assert events == []


@pytest.fixture
def late_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """A borrowed worker thread starts serving only once the returned event is set: a loaded
    machine, where starting a thread can take longer than a call's whole ``timeout``."""
    go = threading.Event()
    serve = threads.Worker.serve

    def late(worker: threads.Worker) -> None:
        go.wait(BOUND)
        serve(worker)

    monkeypatch.setattr(threads.Worker, "serve", late)
    yield go
    go.set()


ASKS: dict[str, tuple[Any, str]] = {
    "tool": (lambda client: client.tool("slow"), "Tool timed out after 0.05 s (incident "),
    "mixed": (lambda client: client.tool("slow_mixed"), "Tool timed out after 0.05 s (incident "),
    "resource": (lambda client: client.read_resource("notes://slow"), "Resource read failed ("),
    "prompt": (lambda client: client.prompt("slow"), "Prompt failed (incident "),
}
"""How each kind of sync call past its timeout is asked, and what its answer says."""


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("what", list(ASKS))
async def test_a_sync_call_whose_thread_starts_after_its_deadline_answers_and_never_runs(
    era: str, what: str, late_start: threading.Event
) -> None:
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    ask, said = ASKS[what]
    try:
        answer, seen = await _answer_while_blocked(ledger, lambda: ask(client))
    finally:
        late_start.set()
    answer.assertError(said)
    events = await _settled(client, ledger)
    assert f"write {what}" not in events, "a handler not started by its deadline never runs"
    _rolled_back_after_the_handler(seen, events, what, thread_bound=what != "mixed")
