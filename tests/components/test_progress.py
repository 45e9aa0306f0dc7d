"""Progress: ``await request.report_progress(...)`` reaches a client that asked, else no-op."""

from __future__ import annotations

from typing import Any

import anyio.from_thread
import pytest

from container import Container
from mcp_adapter import McpRequest, McpResponse, Resource, Server, Tool
from mcp_adapter.testing import McpTestClient
from tests.components.support import ERAS, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class ImportTool(Tool):
    name = "import"

    async def handle(self, request: McpRequest) -> McpResponse:
        await request.report_progress(0, 3, "starting")
        await request.report_progress(1.5, 3)
        await request.report_progress(3, 3, "done")
        return McpResponse.text("imported")


class SyncImportTool(Tool):
    name = "sync-import"

    def handle(self, request: McpRequest) -> McpResponse:
        # A sync handler runs in a worker thread: hop back to the event loop to report.
        anyio.from_thread.run(request.report_progress, 1, 2, "half")
        anyio.from_thread.run(request.report_progress, 2, 2, "done")
        return McpResponse.text("imported")


class Export(Resource):
    name = "export"
    uri = "exports://latest"

    async def handle(self, request: McpRequest) -> McpResponse:
        await request.report_progress(1, 1, "exported")
        return McpResponse.text("data")


class Jobs(Server):
    tools = (ImportTool, SyncImportTool)
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
    result = (await client.tool("import")).assertOk()
    assert result.texts == ["imported"]
    assert progress_of(result.notifications) == []


@pytest.mark.parametrize("era", ERAS)
async def test_a_sync_handler_reports_through_the_event_loop(era: str) -> None:
    client = McpTestClient(Container(), Jobs, protocol=era)
    result = await client.request(
        "tools/call", {"name": "sync-import", "arguments": {}, "_meta": {"progressToken": "s"}}
    )
    result.assertOk()
    assert [p["message"] for p in progress_of(result.notifications)] == ["half", "done"]
    plain = (await client.tool("sync-import")).assertOk()
    assert progress_of(plain.notifications) == []


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
