"""``mcp.server.operation.duration``: one measurement per component call, in seconds,
with the attributes the MCP semantic conventions name."""

from __future__ import annotations

import pytest

from mcp_adapter.dispatch.telemetry import BUCKETS
from tests.telemetry.conftest import Recorded
from tests.telemetry.test_spans import ERAS, client

pytestmark = pytest.mark.anyio


@ERAS
async def test_a_tool_call_is_measured_once(otel: Recorded, protocol: str) -> None:
    (await client(protocol).tool("add", {"a": 1, "b": 2})).assertOk()
    ((attributes, point),) = otel.durations()
    assert attributes == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "add",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": protocol,
    }
    assert point.count == 1
    assert 0 < point.sum < 10  # seconds
    assert tuple(point.explicit_bounds) == BUCKETS


@ERAS
async def test_calls_with_the_same_attributes_add_up(otel: Recorded, protocol: str) -> None:
    mcp = client(protocol)
    for _ in range(3):
        (await mcp.tool("sync_add", {"a": 1, "b": 2})).assertOk()
    ((_, point),) = otel.durations()
    assert point.count == 3


@ERAS
async def test_a_failed_tool_call_is_a_tool_error(otel: Recorded, protocol: str) -> None:
    assert (await client(protocol).tool("broken")).is_error
    ((attributes, point),) = otel.durations()
    assert attributes["error.type"] == "tool_error"
    assert attributes["gen_ai.tool.name"] == "broken"
    assert point.count == 1


@ERAS
async def test_a_protocol_error_is_its_code(otel: Recorded, protocol: str) -> None:
    assert (await client(protocol).tool("nope")).error is not None
    ((attributes, _),) = otel.durations()
    assert attributes["error.type"] == attributes["rpc.response.status_code"] == "-32602"
    assert attributes["gen_ai.tool.name"] == "nope"


@ERAS
async def test_a_prompt_and_a_resource_are_measured(otel: Recorded, protocol: str) -> None:
    mcp = client(protocol)
    (await mcp.prompt("greet", {"who": "Ada"})).assertOk()
    assert (await mcp.read_resource("notes://0")).error is not None
    measured = {attributes["mcp.method.name"]: attributes for attributes, _ in otel.durations()}
    assert measured["prompts/get"] == {
        "mcp.method.name": "prompts/get",
        "gen_ai.prompt.name": "greet",
        "mcp.protocol.version": protocol,
    }
    # a resource's URI is opt-in for the metric (unbounded): left out
    assert measured["resources/read"] == {
        "mcp.method.name": "resources/read",
        "mcp.protocol.version": protocol,
        "error.type": "-32603",
        "rpc.response.status_code": "-32603",
    }


async def test_listings_are_not_measured(otel: Recorded) -> None:
    (await client("2026-07-28").list_tools()).assertOk()
    assert otel.durations() == []
