"""Tools as tasks through the real SDK client, in process (2026-07-28 and 2025-11-25):
declaring, starting, reading, cancelling; the body's own scope, finalized once."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError
from starlette.requests import Request

from container import Container
from mcp_adapter import McpResponse, Server, Tool, compile_server
from mcp_adapter.errors import CompileError
from schemas import Schema
from tests.tasks.fixtures import Ledger, PlainServer, TaskServer, container_with
from tests.tasks.helpers import EXTENSION, connected

pytestmark = pytest.mark.anyio


class Counted(Schema):
    count: int


async def test_a_task_tool_answers_a_handle_at_once_and_its_result_on_tasks_get() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger)) as tasks:
        created = await tasks.call("echo")
        assert created["resultType"] == "task"
        assert created["status"] == "working"
        assert {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
        assert "result" not in created
        assert "task" not in created
        assert len(created["taskId"]) >= 40  # 256 random bits
        done = await tasks.until(created["taskId"])
        assert done["resultType"] == "complete"
        assert done["status"] == "completed"
        assert done["result"]["content"] == [{"type": "text", "text": "echo 1"}]
        assert done["ttlMs"] == created["ttlMs"] == 3_600_000
    assert (ledger.built, ledger.finalized) == (1, 1)


async def test_without_the_extension_optional_runs_inline_and_required_is_refused() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger), negotiated=False) as tasks:
        inline = await tasks.call("echo")
        assert inline["content"] == [{"type": "text", "text": "echo 1"}]
        assert "taskId" not in inline
        with pytest.raises(MCPError) as refused:
            await tasks.call("waits")
        assert refused.value.code == -32021
        assert refused.value.error.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}
        for method in ("tasks/get", "tasks/cancel", "tasks/update"):
            with pytest.raises(MCPError) as gated:
                await tasks.request(method, taskId="anything")
            assert gated.value.code == -32021
    assert (ledger.built, ledger.finalized) == (1, 1)


async def test_a_tool_that_does_not_support_tasks_is_never_promoted() -> None:
    async with connected(TaskServer, container_with(Ledger())) as tasks:
        answer = await tasks.request("tools/call", name="inline", arguments={}, task={"ttl": 60000})
        assert answer["content"] == [{"type": "text", "text": "inline"}]
        assert answer["resultType"] == "complete"


async def test_tool_errors_complete_with_is_error_and_protocol_errors_fail() -> None:
    async with connected(TaskServer, container_with(Ledger())) as tasks:
        failed_tool = await tasks.until((await tasks.call("fails"))["taskId"])
        assert failed_tool["status"] == "completed"
        assert failed_tool["result"]["isError"] is True
        broken = await tasks.until((await tasks.call("breaks"))["taskId"])
        assert broken["status"] == "failed"
        assert broken["error"] == {"code": -32603, "message": "broken on purpose"}
        assert "result" not in broken


async def test_cancelling_a_running_task_finalizes_its_scope_once() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger)) as tasks:
        task_id = (await tasks.call("waits"))["taskId"]
        with anyio.fail_after(10):
            while ledger.built == 0:  # the body is running, its service built
                await anyio.sleep(0.01)
        ack = await tasks.cancel(task_id)
        assert {key for key in ack if key != "_meta"} == {"resultType"}
        assert ack["resultType"] == "complete"
        assert (await tasks.until(task_id))["status"] == "cancelled"
        with anyio.fail_after(10):  # the body's cancellation reaches it just after
            while ledger.finalized == 0:
                await anyio.sleep(0.01)
        assert (ledger.built, ledger.finalized) == (1, 1)
        again = await tasks.cancel(task_id)  # idempotent on an ended task
        assert again["resultType"] == "complete"
        assert (await tasks.get(task_id))["status"] == "cancelled"
    assert ledger.finalized == 1


async def test_a_body_running_at_shutdown_is_cancelled_and_its_scope_finalized() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger)) as tasks:
        await tasks.call("waits")
        with anyio.fail_after(10):
            while ledger.built == 0:
                await anyio.sleep(0.01)
    assert (ledger.built, ledger.finalized) == (1, 1)


async def test_unknown_and_removed_methods() -> None:
    async with connected(TaskServer, container_with(Ledger())) as tasks:
        with pytest.raises(MCPError) as unknown:
            await tasks.get("no-such-task")
        assert unknown.value.code == -32602
        for removed in ("tasks/result", "tasks/list"):
            with pytest.raises(MCPError) as gone:
                await tasks.request(removed, taskId="x")
            assert gone.value.code == -32601


async def test_invalid_arguments_are_answered_inline_and_start_no_task() -> None:
    class Typed(Tool[Counted]):
        name = "typed"
        task_support = "required"

        async def handle(self, payload: Counted) -> McpResponse:
            return McpResponse.text(str(payload.count))

    class Typing(Server):
        tools = (Typed,)

    async with connected(Typing) as tasks:
        answer = await tasks.call("typed", {"count": "many"})
        assert answer["isError"] is True
        assert "taskId" not in answer


async def test_caps_refuse_one_task_too_many_with_a_clear_error() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger)) as tasks:
        first = (await tasks.call("waits"))["taskId"]
        await tasks.call("waits")
        with pytest.raises(MCPError) as refused:
            await tasks.call("waits")
        assert refused.value.code == -32004
        assert "max_running_per_identity is 2" in refused.value.message
        await tasks.cancel(first)
        await tasks.until(first)
        assert (await tasks.call("echo"))["resultType"] == "task"  # a place is free again
        ledger.gate.set()


async def test_the_capability_and_task_support_are_advertised_only_with_task_tools() -> None:
    async with connected(TaskServer, container_with(Ledger())) as tasks:
        assert EXTENSION in (tasks.client.server_capabilities.extensions or {})
    async with connected(TaskServer, container_with(Ledger()), mode="legacy") as tasks:
        listed = {tool.name: tool for tool in (await tasks.client.list_tools()).tools}
        assert listed["echo"].execution is not None
        assert listed["echo"].execution.task_support == "optional"
        assert listed["inline"].execution is None
    async with connected(PlainServer) as tasks:
        assert EXTENSION not in (tasks.client.server_capabilities.extensions or {})
        with pytest.raises(MCPError) as absent:
            await tasks.request("tasks/get", taskId="x")
        assert absent.value.code == -32601


async def test_a_2025_11_25_client_gets_no_task_the_older_protocol_cannot_carry() -> None:
    ledger = Ledger()
    async with connected(TaskServer, container_with(ledger), mode="legacy") as tasks:
        inline = await tasks.call("echo")
        assert inline["content"] == [{"type": "text", "text": "echo 1"}]
        with pytest.raises(MCPError) as unknown:
            await tasks.call("waits")  # only runs as a task: unknown here, as it is unlisted
        assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: waits")
        with pytest.raises(MCPError) as unknown:
            await tasks.request("tasks/get", taskId="x")
        assert unknown.value.code == -32601
    assert ledger.finalized == 1


async def test_a_required_task_tool_is_listed_only_where_it_can_be_called() -> None:
    async with connected(TaskServer, container_with(Ledger()), mode="legacy") as legacy:
        listed = [tool.name for tool in (await legacy.client.list_tools()).tools]
        assert "waits" not in listed  # task_support="required": no 2025-11-25 call reaches it
        assert {"echo", "fails", "breaks", "inline"} <= set(listed)
    async with connected(TaskServer, container_with(Ledger())) as modern:
        assert "waits" in [tool.name for tool in (await modern.client.list_tools()).tools]
    async with connected(TaskServer, container_with(Ledger()), negotiated=False) as plain:
        # 2026-07-28 without the extension: listed, since negotiating it makes it callable
        assert "waits" in [tool.name for tool in (await plain.client.list_tools()).tools]
        with pytest.raises(MCPError) as refused:
            await plain.call("waits")
        assert refused.value.code == -32021


def test_a_task_tool_that_needs_the_http_request_does_not_compile() -> None:
    class Peeks(Tool):
        name = "peeks"
        task_support = "optional"

        async def handle(self, request: Request) -> McpResponse:
            return McpResponse.text(request.url.path)

    class Peeking(Server):
        tools = (Peeks,)

    with pytest.raises(CompileError) as failed:
        compile_server(Peeking, Container())
    text = str(failed.value)
    assert "tool 'peeks'" in text
    assert "HTTP Request" in text
    assert "ends before the task does" in text
    assert "task_support='forbidden'" in text


def test_bad_declarations_are_reported_at_compile() -> None:
    from mcp_adapter.declare.tasks import Tasks

    class Odd(Tool):
        name = "odd"
        task_support = "sometimes"  # type: ignore[assignment]

        async def handle(self) -> McpResponse:
            return McpResponse.text("")

    class Long(Tool):
        name = "long"
        task_support = "optional"

        async def handle(self) -> McpResponse:
            return McpResponse.text("")

    class OddServer(Server):
        tools = (Odd, Long)
        tasks = Tasks(ttl=10, max_ttl=5, max_running=0, store_timeout=0)

    with pytest.raises(CompileError) as failed:
        compile_server(OddServer, Container())
    text = str(failed.value)
    assert "task_support must be one of" in text
    assert "max_running must be a whole number" in text
    assert "store_timeout must be a positive number of seconds, not 0" in text


class Hidden(Tool):
    name = "hidden"
    task_support = "required"

    def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        raise AssertionError("never runs")


class Hiding(Server):
    tools = (Hidden,)


async def test_a_hidden_task_tool_is_unknown_and_starts_nothing() -> None:
    async with connected(Hiding) as tasks:
        with pytest.raises(MCPError) as unknown:
            await tasks.call("hidden")
        assert unknown.value.code == -32602
        assert "hidden" in unknown.value.message
