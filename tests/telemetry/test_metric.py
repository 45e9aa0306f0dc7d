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
    assert "gen_ai.tool.name" not in attributes  # a name the server does not know


@ERAS
async def test_names_the_catalog_does_not_know_share_one_series(
    otel: Recorded, protocol: str
) -> None:
    mcp = client(protocol)
    for number in range(20):
        assert (await mcp.tool(f"made-up-{number}")).error is not None
        assert (await mcp.prompt(f"made-up-{number}")).error is not None
    assert (await mcp.tool("hidden")).error is not None  # known to the catalog, so named
    series = {
        (attributes["mcp.method.name"], attributes.get("gen_ai.tool.name"), point.count)
        for attributes, point in otel.durations()
        if "gen_ai.prompt.name" not in attributes
    }
    assert series == {
        ("tools/call", None, 20),
        ("prompts/get", None, 20),
        ("tools/call", "hidden", 1),
    }


async def test_made_up_names_cannot_push_a_real_tool_into_the_overflow_series(
    otel: Recorded,
) -> None:
    """The SDK keeps 2,000 attribute sets per metric; past that, measurements go to one
    ``otel.metric.overflow`` series. 2,100 made-up names must not get a real tool there."""
    mcp = client("2026-07-28")
    for number in range(2_100):
        assert (await mcp.tool(f"made-up-{number}")).error is not None
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
    points = otel.durations()
    assert all("otel.metric.overflow" not in attributes for attributes, _ in points)
    (real,) = [point for attributes, point in points if attributes.get("gen_ai.tool.name") == "add"]
    assert real.count == 1
    assert len(points) == 2


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
