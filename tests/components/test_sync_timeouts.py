"""A sync call past its ``timeout`` answers at its deadline, as an async one does, and its
unit of work rolls back once its worker thread returns.

Before, the wait for a sync handler's worker thread could not be cancelled and nothing
looked at the deadline afterwards: a sync tool, resource or prompt that took longer than
its ``timeout`` answered its late value as a success when the thread returned, and its
scope's finalizers saw no error (a unit of work committed). Here the handler blocks until
the test releases it, which it does only once the answer has arrived: before the fix the
answer never came (the bounded wait failed).

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


async def _finished(ledger: Ledger) -> None:
    with anyio.fail_after(BOUND):
        while "commit" not in ledger.events and "rollback" not in ledger.events:
            await anyio.sleep(0.01)


async def _answer_while_blocked(ledger: Ledger, ask: Any) -> Any:
    """The answer, got while the handler is (or would be) still blocked; then release it."""
    try:
        with anyio.fail_after(BOUND):
            answer = await ask()
        assert "rollback" not in ledger.events, "no finalizer while the handler still runs"
        assert "commit" not in ledger.events
        return answer
    finally:
        ledger.release.set()


def _rolled_back_after_the_handler(ledger: Ledger, what: str) -> None:
    if f"write {what}" in ledger.events:  # the handler ran before its deadline
        assert ledger.events == ["open", f"write {what}", "still open: True", "rollback"]
    else:  # it had not started by the deadline: it never does
        assert ledger.events == ["open", "rollback"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("name", ["slow", "slow_mixed"])
async def test_a_sync_tool_past_its_timeout_answers_at_the_deadline_and_rolls_back(
    era: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcp_adapter")
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    answer = await _answer_while_blocked(ledger, lambda: client.tool(name))
    answer.assertError("Tool timed out after 0.05 s (incident ")
    assert answer.result is not None
    incident = answer.result["_meta"]["incident"]
    assert f"timed out after 0.05 s (incident {incident})" in caplog.text
    await _finished(ledger)
    what = "tool" if name == "slow" else "mixed"
    _rolled_back_after_the_handler(ledger, what)
    assert "late" not in str(answer.result), "the late value is discarded"
    if f"write {what}" in ledger.events:
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
    answer = await _answer_while_blocked(ledger, lambda: client.read_resource("notes://slow"))
    answer.assertError("Resource read failed (incident ")
    await _finished(ledger)
    _rolled_back_after_the_handler(ledger, "resource")


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_prompt_past_its_timeout_fails_at_the_deadline_and_rolls_back(
    era: str,
) -> None:
    container, ledger = serving()
    client = McpTestClient(container, Timed, protocol=era)
    answer = await _answer_while_blocked(ledger, lambda: client.prompt("slow"))
    answer.assertError("Prompt failed (incident ")
    await _finished(ledger)
    _rolled_back_after_the_handler(ledger, "prompt")


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
    tools = (Polite,)


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_handler_can_stop_at_its_deadline_by_itself(era: str) -> None:
    container, ledger = serving()
    client = McpTestClient(container, PoliteServer, protocol=era)
    with anyio.fail_after(BOUND):
        answer = await client.tool("polite")
    answer.assertError("Tool timed out after 0.05 s")
    await _finished(ledger)  # without the test releasing anything
    assert ledger.events[-1] == "rollback"
