"""``ClientLogger``: records reach a client at or above the level it asked for (per request in
2026-07-28, per session with ``logging/setLevel`` in 2025-11-25), never one that did not ask;
every record also goes to the server's log; no deprecation warning of the SDK escapes."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest
from mcp import MCPError, types
from mcp.shared.exceptions import MCPDeprecationWarning

from container import Container
from mcp_adapter import McpRequest, McpResponse, Server, Tool, compile_server
from mcp_adapter.notifications import ClientLogger
from mcp_adapter.testing import McpTestClient
from tests.notifications.apps import NotesServer
from tests.notifications.support import LEGACY, client, notes_catalog

pytestmark = pytest.mark.anyio

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def records(notifications: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [n["params"] for n in notifications if n["method"] == "notifications/message"]


async def call(tool: str, meta: dict[str, Any] | None = None) -> tuple[dict[str, Any], ...]:
    params: dict[str, Any] = {"name": tool, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    result = await McpTestClient(Container(), NotesServer).request("tools/call", params)
    result.assertOk()
    return result.notifications


async def test_2026_a_request_gets_the_records_at_or_above_its_level() -> None:
    assert records(await call("work", {LOG_LEVEL: "info"})) == [
        {"level": "info", "data": {"step": 1}},
        {"level": "warning", "logger": "notes", "data": "careful"},
    ]
    assert [r["level"] for r in records(await call("work", {LOG_LEVEL: "debug"}))] == [
        "debug",
        "info",
        "warning",
    ]
    assert records(await call("work", {LOG_LEVEL: "error"})) == []


async def test_2026_a_request_that_did_not_ask_gets_no_record() -> None:
    assert records(await call("work")) == []
    assert records(await call("sync-work")) == []


async def test_a_sync_handler_and_its_own_thread_log_with_a_plain_call() -> None:
    assert records(await call("sync-work", {LOG_LEVEL: "info"})) == [
        {"level": "info", "data": "in the worker thread"},
        {"level": "error", "data": "in a thread of its own"},
    ]


async def test_2025_a_session_logs_at_the_level_it_set() -> None:
    container = Container()
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    catalog = notes_catalog(container)
    async with client(catalog, container, mode=LEGACY, logging_callback=on_log) as sdk:
        await sdk.call_tool("work", {})
        assert received == []  # the session has not asked
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK client's own method is deprecated at 2026
            await sdk.set_logging_level("warning")
        await sdk.call_tool("work", {})
        await sdk.call_tool("sync-work", {})
    assert [(r.level, r.logger, r.data) for r in received] == [
        ("warning", "notes", "careful"),
        ("error", None, "in a thread of its own"),
    ]


async def test_every_record_goes_to_the_server_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcp_adapter.log"):
        await call("work")  # the client asked for nothing: the server still logs
    logged = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    assert logged == [
        ("mcp_adapter.log", "DEBUG", "debugging"),
        ("mcp_adapter.log", "INFO", "{'step': 1}"),
        ("mcp_adapter.log.notes", "WARNING", "careful"),
    ]


async def test_no_deprecation_warning_of_the_sdk_reaches_users() -> None:
    container = Container()
    catalog = notes_catalog(container)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        await call("work", {LOG_LEVEL: "debug"})
        await call("sync-work", {LOG_LEVEL: "debug"})
        async with client(catalog, container, mode=LEGACY) as sdk:
            await sdk.session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level="debug")),
                types.EmptyResult,
            )
            await sdk.call_tool("work", {})
    deprecations = [w for w in caught if issubclass(w.category, MCPDeprecationWarning)]
    assert deprecations == []


class QuietTool(Tool):
    name = "quiet"

    async def handle(self) -> McpResponse:
        return McpResponse.text("nothing to say")


class Quiet(Server):
    tools = (QuietTool,)


async def test_logging_is_served_only_where_a_component_may_log() -> None:
    container = Container()
    async with client(compile_server(Quiet, container), container, mode=LEGACY) as sdk:
        assert sdk.server_capabilities.logging is None
        with pytest.raises(MCPError, match="Method not found"):
            await sdk.session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level="debug")),
                types.EmptyResult,
            )
    async with client(notes_catalog(container), container, mode=LEGACY) as sdk:
        assert sdk.server_capabilities.logging is not None


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        ClientLogger(McpRequest()).log("loud", "x")  # type: ignore[arg-type]
