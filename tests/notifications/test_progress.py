"""``Progress``: a report reaches a client that asked for progress, else nothing happens;
the same call works in async handlers, sync ones (a worker thread) and threads of their own."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from container import Container
from mcp_adapter import McpRequest, McpResponse, Resource, Server, Tool
from mcp_adapter.declare.middleware import Call, Next
from mcp_adapter.notifications import Progress
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class ImportTool(Tool):
    name = "import"

    async def handle(self, progress: Progress) -> McpResponse:
        await progress.report(0, 3, "starting")
        await progress.report(1.5, 3)
        await progress.report(3, 3, "done")
        return McpResponse.text("imported")


class SyncImportTool(Tool):
    name = "sync-import"

    def handle(self, progress: Progress) -> McpResponse:
        progress.report(1, 3, "in the worker thread")  # a plain call: sent before it returns
        helper = threading.Thread(target=progress.report, args=(2, 3, "in a thread of its own"))
        helper.start()
        helper.join()
        progress.report(3, 3, "done")
        return McpResponse.text("imported")


class Export(Resource):
    name = "export"
    uri = "exports://latest"

    async def handle(self, progress: Progress) -> McpResponse:
        await progress.report(1, 1, "exported")
        return McpResponse.text("data")


async def announce(call: Call, call_next: Next, progress: Progress) -> Any:
    await progress.report(0, None, f"starting {call.name}")
    return await call_next(call)


class Announced(Tool):
    """Its middleware reports progress too: the same service, by type."""

    name = "announced"
    middleware = (announce,)

    def shouldRegister(self, request: McpRequest, progress: Progress) -> bool:
        progress.report(0, None, "checked")  # a sync hook runs in a worker thread
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("done")


class Jobs(Server):
    tools = (ImportTool, SyncImportTool, Announced)
    resources = (Export,)


def progress_of(notifications: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [n["params"] for n in notifications if n["method"] == "notifications/progress"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("token", ["job-1", 42])
async def test_progress_reaches_a_client_that_sent_a_token(era: str, token: str | int) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    result = await client.request(
        "tools/call", {"name": "import", "arguments": {}, "_meta": {"progressToken": token}}
    )
    result.assertOk()
    assert result.texts == ["imported"]
    assert progress_of(result.notifications) == [
        {"progressToken": token, "progress": 0, "total": 3, "message": "starting"},
        {"progressToken": token, "progress": 1.5, "total": 3},
        {"progressToken": token, "progress": 3, "total": 3, "message": "done"},
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_progress_is_a_no_op_without_a_token(era: str) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    for name in ("import", "sync-import", "announced"):
        result = (await client.tool(name)).assertOk()
        assert progress_of(result.notifications) == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_handler_and_its_own_thread_report_with_a_plain_call(era: str) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    result = await client.request(
        "tools/call", {"name": "sync-import", "arguments": {}, "_meta": {"progressToken": "s"}}
    )
    result.assertOk()
    assert [p["message"] for p in progress_of(result.notifications)] == [
        "in the worker thread",
        "in a thread of its own",
        "done",
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_hooks_and_middleware_report_through_the_same_service(era: str) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    result = await client.request(
        "tools/call", {"name": "announced", "arguments": {}, "_meta": {"progressToken": 7}}
    )
    result.assertOk()
    assert [p["message"] for p in progress_of(result.notifications)] == [
        "checked",
        "starting announced",
    ]


@pytest.mark.parametrize("era", ERAS)
async def test_resources_report_progress_too(era: str) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    result = await client.request(
        "resources/read", {"uri": "exports://latest", "_meta": {"progressToken": "r"}}
    )
    result.assertOk()
    assert progress_of(result.notifications) == [
        {"progressToken": "r", "progress": 1, "total": 1, "message": "exported"}
    ]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_progress_callback_of_the_sdk_client(mode: str) -> None:
    received: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append((progress, total, message))

    async with sdk_client(Jobs, Container(), mode) as sdk:
        result = await sdk.call_tool("import", {}, progress_callback=on_progress)
        assert not result.is_error
        assert received == [(0, 3, "starting"), (1.5, 3, None), (3, 3, "done")]
        received.clear()
        quiet = await sdk.call_tool("import", {})
        assert not quiet.is_error
    assert received == []
