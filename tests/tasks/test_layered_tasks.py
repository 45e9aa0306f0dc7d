"""Request-stage layers around a tool that runs as a task: the task's handle is the call's
answer they see (``AccessLog`` logs it as ``task``, ``RateLimit`` counts it,
``ResponseLimit`` measures it, a layer's context value reaches the body), for a tool
whose task is optional and one whose task is required; a handle a layer does not pass
on withdraws its task. In process through the SDK client, and over real HTTP."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
import pytest
from mcp import MCPError, types

from container import Container
from mcp_adapter import McpResponse, Server, Tool, http_app, request_stage
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.layers import AccessLog, AccessRecord, RateLimit, ResponseLimit, Timing
from mcp_adapter.tasks import CreateTaskResult
from tests.serving.harness import serve_app
from tests.tasks.fixtures import Ledger, TaskServer, container_with
from tests.tasks.helpers import connected, over_http

pytestmark = pytest.mark.anyio

OPTIONAL_AND_REQUIRED = pytest.mark.parametrize("tool", ["echo", "waits"])
"""``echo`` may run as a task, ``waits`` only runs as one (its body waits for the gate)."""


def layered(*layers: Any) -> type[Server]:
    class Layered(Server):
        name = "layered-tasks"
        tools = TaskServer.tools
        tasks = TaskServer.tasks
        middleware: ClassVar = layers

    return Layered


async def started_and_ended(tasks: Any, ledger: Ledger, tool: str) -> dict[str, Any]:
    """Call ``tool``, which must answer a task's handle, and let it end: the ended task."""
    created = await tasks.call(tool)
    assert created["resultType"] == "task", created
    ledger.gate.set()
    ended = await tasks.until(created["taskId"])
    assert ended["status"] == "completed", ended
    return ended


def access(caplog: pytest.LogCaptureFixture) -> list[AccessRecord]:
    return [AccessRecord.of(r) for r in caplog.records if r.name == "mcp_adapter.access"]


@OPTIONAL_AND_REQUIRED
async def test_access_log_records_a_tasks_creation_as_an_outcome_of_its_own(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    async with connected(layered(AccessLog()), container_with(ledger := Ledger())) as tasks:
        task_id = (await started_and_ended(tasks, ledger, tool))["taskId"]
    (record,) = access(caplog)
    assert (record.method, record.component, record.outcome) == ("tools/call", tool, "task")
    assert record.incident is None
    messages = [r.getMessage() for r in caplog.records if r.name == "mcp_adapter.access"]
    assert messages[0].startswith(f"tools/call '{tool}' task in ")
    assert task_id not in messages[0]  # the id is the caller's secret


@OPTIONAL_AND_REQUIRED
async def test_timing_times_the_call_that_started_the_task(tool: str) -> None:
    timing = Timing()
    ledger = Ledger()
    async with connected(layered(timing), container_with(ledger)) as tasks:
        await started_and_ended(tasks, ledger, tool)
    assert len(timing.durations("tools/call", tool)) == 1


@OPTIONAL_AND_REQUIRED
async def test_rate_limit_counts_each_task_started_and_refuses_one_too_many(tool: str) -> None:
    ledger = Ledger()
    limit = RateLimit(2, 3600.0, methods={"tools/call"})
    async with connected(layered(limit), container_with(ledger)) as tasks:
        first = await tasks.call(tool)
        second = await tasks.call("echo")
        assert (first["resultType"], second["resultType"]) == ("task", "task")
        refused = await tasks.call(tool)
        assert refused["isError"] is True
        assert refused["content"][0]["text"].startswith("Rate limit exceeded")
        ledger.gate.set()
        for created in (first, second):
            assert (await tasks.until(created["taskId"]))["status"] == "completed"
    assert ledger.built == 2  # the refused call started no task


@OPTIONAL_AND_REQUIRED
async def test_response_limit_measures_the_handle_and_a_refused_handle_starts_nothing(
    tool: str,
) -> None:
    ledger = Ledger()
    async with connected(layered(ResponseLimit(64_000)), container_with(ledger)) as tasks:
        await started_and_ended(tasks, ledger, tool)
    ledger = Ledger()
    async with connected(layered(ResponseLimit(100)), container_with(ledger)) as tasks:
        refused = await tasks.call(tool)
        assert refused["isError"] is True
        assert refused["content"][0]["text"].startswith("Response too large: ")
        assert refused["content"][0]["text"].endswith(" bytes, limit 100")
        ledger.gate.set()
        with anyio.fail_after(10):  # a body the worker took before the withdrawal ends too
            while ledger.built != ledger.finalized:
                await anyio.sleep(0.01)
    assert ledger.built in (0, 1)


@dataclass
class Seen:
    """What a custom request-stage layer saw come back from ``call_next``."""

    answers: list[str]


@OPTIONAL_AND_REQUIRED
async def test_a_custom_request_stage_layer_sees_the_handle_and_may_pass_it_on(tool: str) -> None:
    seen = Seen([])

    @request_stage
    async def watching(call: Call, call_next: Next) -> Any:
        answer = await call_next(call)
        seen.answers.append(type(answer).__name__)
        assert isinstance(answer, CreateTaskResult)
        assert answer.result_type == "task"
        return answer

    ledger = Ledger()
    async with connected(layered(watching), container_with(ledger)) as tasks:
        ended = await started_and_ended(tasks, ledger, tool)
    assert seen.answers == ["CreateTaskResult"]
    assert ended["result"]["content"][0]["type"] == "text"


async def test_a_handle_a_layer_does_not_pass_on_withdraws_its_task() -> None:
    """The first call's handle is replaced by the layer's own answer: the client never
    learns the task's id, so the task is cancelled and its place under the caps given
    back (``max_running_per_identity`` is 2: two more tasks start)."""
    replaced: list[str] = []

    @request_stage
    async def replacing(call: Call, call_next: Next) -> Any:
        answer = await call_next(call)
        if not replaced and isinstance(answer, CreateTaskResult):
            replaced.append(answer.task_id)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="replaced")], is_error=True
            )
        return answer

    ledger = Ledger()
    async with connected(layered(replacing), container_with(ledger)) as tasks:
        assert (await tasks.call("waits"))["content"][0]["text"] == "replaced"
        assert (await tasks.until(replaced[0]))["status"] == "cancelled"  # (its id leaked here)
        first, second = await tasks.call("waits"), await tasks.call("waits")
        assert (first["resultType"], second["resultType"]) == ("task", "task")
        ledger.gate.set()
        for created in (first, second):
            assert (await tasks.until(created["taskId"]))["status"] == "completed"


@dataclass(frozen=True)
class Tenant:
    id: str


class TenantTool(Tool):
    """Names the tenant its scope was given."""

    name = "tenant_report"
    task_support = "required"

    def __init__(self, tenant: Tenant) -> None:
        self.tenant = tenant

    async def handle(self) -> McpResponse:
        return McpResponse.text(f"report of {self.tenant.id}")


@request_stage(provides=[Tenant])
async def tenancy(call: Call, call_next: Next) -> Any:
    return await call_next(call.with_context({Tenant: Tenant("acme")}))


class Tenanted(Server):
    name = "tenanted-tasks"
    tools = (TenantTool,)
    middleware: ClassVar = (tenancy,)


async def test_a_context_value_a_layer_gives_reaches_the_tasks_body() -> None:
    container = Container()
    container.context(Tenant)
    async with connected(Tenanted, container) as tasks:
        created = await tasks.call("tenant_report")
        ended = await tasks.until(created["taskId"])
    assert ended["result"]["content"] == [{"type": "text", "text": "report of acme"}]


BUILT_IN: dict[str, Callable[[], Any]] = {
    "AccessLog": AccessLog,
    "Timing": Timing,
    "RateLimit": lambda: RateLimit(100, 60.0, per="client"),
    "ResponseLimit": lambda: ResponseLimit(64_000),
}


@OPTIONAL_AND_REQUIRED
async def test_every_built_in_layer_at_once_over_http(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_adapter.access")
    ledger = Ledger()
    layers = [make() for make in BUILT_IN.values()]
    with serve_app(http_app(layered(*layers), container_with(ledger))) as url:
        async with over_http(f"{url}/mcp") as tasks:
            ended = await started_and_ended(tasks, ledger, tool)
    assert ended["result"]["content"][0]["type"] == "text"
    assert [record.outcome for record in access(caplog)] == ["task"]


@pytest.mark.parametrize("layer", list(BUILT_IN))
async def test_a_2025_11_25_client_calls_an_optional_task_tool_inline_through_the_layers(
    layer: str,
) -> None:
    ledger = Ledger()
    built = BUILT_IN[layer]()
    async with connected(layered(built), container_with(ledger), mode="legacy") as tasks:
        inline = await tasks.call("echo")
        assert inline["content"] == [{"type": "text", "text": "echo 1"}]
        with pytest.raises(MCPError) as unknown:
            await tasks.call("waits")
        assert unknown.value.code == -32602
    assert (ledger.built, ledger.finalized) == (1, 1)
