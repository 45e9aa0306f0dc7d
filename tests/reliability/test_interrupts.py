"""A handler cannot stop the server: ``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``
and a self-raised ``CancelledError`` are incidents; a real cancellation still cancels."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.memory import create_client_server_memory_streams

from container import Container
from mcp_adapter.testing import McpTestClient
from mcp_adapter.testing.client import _decode, _encode
from tests.reliability import interrupts
from tests.reliability.interrupts import KINDS, InterruptServer, build_container
from tests.serving.harness import CLI, REPO, cli_env, serve_http

pytestmark = pytest.mark.anyio

TARGET = ["tests.reliability.interrupts:InterruptServer"]
CONTAINER = ["--container", "tests.reliability.interrupts:build_container"]
TIMEOUT = 60
TOOL_CALLS = [
    *(("async-raise", {"kind": kind}) for kind in KINDS),
    *(("sync-raise", {"kind": kind}) for kind in KINDS),
    ("hook-raise", {}),
    ("factory-raise", {}),
    ("finalizer-raise", {}),
]


def client(era: str) -> McpTestClient:
    return McpTestClient(build_container(), InterruptServer, protocol=era)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "arguments"), TOOL_CALLS, ids=lambda v: str(v))
async def test_a_tool_raising_an_interrupt_is_an_incident(
    era: str, name: str, arguments: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        result = await client(era).tool(name, arguments)
    result.assertError("Tool execution failed (incident ")
    assert result.result is not None
    incident = result.result["_meta"]["incident"]
    assert any(incident in record.getMessage() for record in caplog.records)
    (await client(era).tool("ping")).assertOk().assertTextContains("pong")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", ["resources/read", "prompts/get", "completion/complete"])
async def test_resources_prompts_and_completions_raising_one_are_incidents(
    era: str, kind: str, method: str
) -> None:
    params: dict[str, Any] = {
        "resources/read": {"uri": f"interrupt://{kind}"},
        "prompts/get": {"name": "raise", "arguments": {"kind": kind}},
        "completion/complete": {
            "ref": {"type": "ref/resource", "uri": "interrupt://{kind}"},
            "argument": {"name": "kind", "value": kind},
        },
    }[method]
    result = await client(era).request(method, params)
    assert result.error is not None, result.message
    assert result.error["code"] == -32603
    assert "(incident " in result.error["message"]


async def test_a_real_cancellation_still_cancels(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``notifications/cancelled`` for a running call cancels it (no incident), and the
    same connection keeps answering."""
    interrupts.reset()
    tester = client(era)
    server = tester.sdk_server
    messages: list[dict[str, Any]] = []
    with anyio.fail_after(TIMEOUT), caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        async with (
            create_client_server_memory_streams() as (streams, server_streams),
            anyio.create_task_group() as tg,
        ):
            read, write = streams
            tg.start_soon(
                server.run,
                server_streams[0],
                server_streams[1],
                server.create_initialization_options(),
            )
            if era != "2026-07-28":
                await tester._handshake(read, write)

            async def send(body: dict[str, Any]) -> None:
                await write.send(_decode(json.dumps(body)))

            call = {"name": "wait", "arguments": {}}
            await send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": tester._with_envelope(call),
                }
            )
            await interrupts.STARTED.wait()
            await send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
            )
            ping = {"name": "ping", "arguments": {}}
            await send(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": tester._with_envelope(ping),
                }
            )
            while True:
                message = _encode(await read.receive())
                messages.append(message)
                if message.get("id") == 2:
                    break
            await write.aclose()
    assert interrupts.SEEN == ["CancelledError"]
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "pong"}]
    assert not [m for m in messages if m.get("id") == 1 and "result" in m]
    assert not [r for r in caplog.records if "incident" in r.getMessage()]


def _check_server_keeps_answering(results: list[Any], pong: Any) -> None:
    for result in results:
        assert result.is_error
        assert "Tool execution failed (incident " in result.content[0].text
    assert pong.content[0].text == "pong"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_stdio_server_keeps_serving_after_each(mode: str) -> None:
    params = StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "serve", *TARGET, *CONTAINER], env=cli_env(), cwd=REPO
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, mode=mode) as sdk:
            results = [await sdk.call_tool(name, args) for name, args in TOOL_CALLS]
            _check_server_keeps_answering(results, await sdk.call_tool("ping", {}))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_http_server_keeps_serving_after_each(mode: str) -> None:
    with serve_http([*TARGET, *CONTAINER]) as served:
        with anyio.fail_after(TIMEOUT):
            async with Client(served.url, mode=mode) as sdk:
                results = [await sdk.call_tool(name, args) for name, args in TOOL_CALLS]
                _check_server_keeps_answering(results, await sdk.call_tool("ping", {}))
        assert served.process.poll() is None


@pytest.mark.parametrize("kind", KINDS)
async def test_a_sync_listing_hook_raising_one_fails_the_listing_not_the_server(
    era: str, kind: str
) -> None:
    container = Container()
    container.instance(interrupts.ListingChoice, interrupts.ListingChoice(kind))
    listing = McpTestClient(container, interrupts.ListingServer, protocol=era)  # type: ignore[arg-type]
    failed = await listing.list_tools()
    assert failed.error is not None
    assert failed.error["code"] == -32603
    assert "Listing failed (incident " in failed.error["message"]
    (await listing.tool("ping")).assertOk().assertTextContains("pong")
