"""Switching the adapter's telemetry off: ``Server.telemetry = False`` or
``MCP_ADAPTER_TELEMETRY=off``; either one is enough."""

from __future__ import annotations

import pytest

from mcp_adapter.dispatch import telemetry
from tests.telemetry.conftest import Recorded
from tests.telemetry.test_spans import ERAS, Traced, client

pytestmark = pytest.mark.anyio


class Quiet(Traced):
    telemetry = False


async def exercise(protocol: str, server: type[Traced]) -> None:
    mcp = client(protocol, server)
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
    assert (await mcp.tool("broken")).is_error
    (await mcp.tool("sync_add", {"a": 1, "b": 2})).assertOk()
    (await mcp.read_resource("notes://1")).assertOk()
    (await mcp.prompt("greet", {"who": "Ada"})).assertOk()


def assert_only_the_sdk_spans(otel: Recorded) -> None:
    assert otel.stages() == []
    assert all(span.instrumentation_scope.name != "mcp_adapter" for span in otel.spans())
    assert all(telemetry.INCIDENT not in (span.attributes or {}) for span in otel.spans())
    assert otel.durations() == []
    calls = [s.name for s in otel.spans() if s.kind.name == "SERVER" and "/" in s.name]
    assert "tools/call add" in calls  # the SDK's own span is still there


@ERAS
async def test_server_telemetry_false_turns_the_adapters_spans_and_metric_off(
    otel: Recorded, protocol: str
) -> None:
    await exercise(protocol, Quiet)
    assert_only_the_sdk_spans(otel)


@ERAS
@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
async def test_the_environment_turns_them_off(
    otel: Recorded, protocol: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(telemetry.ENVIRONMENT, value)
    await exercise(protocol, Traced)
    assert_only_the_sdk_spans(otel)


async def test_off_in_either_place_wins(otel: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(telemetry.ENVIRONMENT, "on")
    await exercise("2026-07-28", Quiet)
    assert_only_the_sdk_spans(otel)


async def test_on_by_default_and_with_the_environment_on(
    otel: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    await exercise("2026-07-28", Traced)
    assert otel.stages() != []
    assert len(otel.durations()) == 5
    otel.exporter.clear()
    monkeypatch.setenv(telemetry.ENVIRONMENT, "on")
    (await client("2026-07-28").tool("add", {"a": 1, "b": 2})).assertOk()
    assert len(otel.stages()) == 5


async def test_the_environment_is_read_when_the_server_is_built(
    otel: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp = client("2026-07-28")
    monkeypatch.setenv(telemetry.ENVIRONMENT, "off")
    (await mcp.tool("add", {"a": 1, "b": 2})).assertOk()
    assert len(otel.stages()) == 5
