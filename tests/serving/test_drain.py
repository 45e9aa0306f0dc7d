"""SIGTERM drains calls in flight (both modes, both eras) before ``mcp-adapter serve`` exits."""

from __future__ import annotations

import signal
import time

import anyio
import httpx2
import pytest
from mcp.types import CallToolResult, TextContent

from tests.serving.clients import connect
from tests.serving.harness import Served, serve_http

pytestmark = pytest.mark.anyio

SLOW = ["tests.serving.apps:SlowServer"]
SECONDS = 2.0
EXIT_TIMEOUT = 20.0


async def _started(served: Served) -> None:
    with anyio.fail_after(30):
        while not any("slow call started" in line for line in served.output):
            await anyio.sleep(0.05)


def _await_exit(served: Served) -> int:
    deadline = time.monotonic() + EXIT_TIMEOUT
    while (code := served.process.poll()) is None:
        assert time.monotonic() < deadline, "the server did not exit after SIGTERM"
        time.sleep(0.05)
    return code


@pytest.mark.parametrize("stateful", [True, False], ids=["stateful", "stateless"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sigterm_lets_a_call_in_flight_finish(stateful: bool, mode: str) -> None:
    result: list[CallToolResult] = []
    with serve_http([*SLOW, *(["--stateful"] if stateful else [])]) as served:
        try:
            async with connect(served.url, mode) as client, anyio.create_task_group() as tasks:
                await client.list_tools()  # now: the client validates results against this list

                async def call() -> None:
                    result.append(await client.call_tool("slow", {"seconds": SECONDS}))

                tasks.start_soon(call)
                await _started(served)
                served.process.send_signal(signal.SIGTERM)
        except* httpx2.ConnectError:
            pass  # the client's own closing messages: the server has stopped listening by then
        [answer] = result
        assert not answer.is_error
        assert answer.content == [TextContent(type="text", text=f"slept {SECONDS}")]
        assert _await_exit(served) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal
