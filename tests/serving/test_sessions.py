"""A session scope: ``Lifetime.SESSION`` services live as long as the MCP session.

2025-11-25 over stdio and stateful HTTP: one value per session, shared by its calls,
finalized when the session ends (stdin closed; DELETE). Stateless HTTP and 2026-07-28:
no session, so each request is its own and the value lives as long as it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.serving.clients import connect
from tests.serving.harness import serve_http
from tests.serving.sessions import SESSION_FILE_ENV
from tests.serving.test_stdio import CALL_TIMEOUT, stdio_server

pytestmark = pytest.mark.anyio

APP = [
    "tests.serving.sessions:SessionServer",
    "--container",
    "tests.serving.sessions:build_container",
]


async def _turns(client: Client, count: int) -> list[dict[str, Any]]:
    turns = []
    for _ in range(count):
        result = await client.call_tool("turn", {})
        assert not result.is_error, result
        assert isinstance(result.structured_content, dict)
        turns.append(result.structured_content)
    return turns


async def _ended(path: Path, lines: int) -> list[str]:
    with anyio.fail_after(CALL_TIMEOUT):
        while not path.exists() or len(path.read_text().splitlines()) < lines:
            await anyio.sleep(0.05)
    return path.read_text().splitlines()


async def test_2025_stdio_one_session_value_for_the_connection(tmp_path: Path) -> None:
    ended = tmp_path / "sessions.log"
    params = stdio_server(APP, {SESSION_FILE_ENV: str(ended)})
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode="legacy") as client:
            turns = await _turns(client, 3)
            assert not ended.exists()  # still open while the connection is
    assert [t["calls"] for t in turns] == [1, 2, 3]
    assert len({t["session"] for t in turns}) == 1
    assert await _ended(ended, 1) == [f"closed {turns[0]['session']} after 3"]


async def test_2026_stdio_each_request_is_its_own_session(tmp_path: Path) -> None:
    ended = tmp_path / "sessions.log"
    params = stdio_server(APP, {SESSION_FILE_ENV: str(ended)})
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode="auto") as client:
            turns = await _turns(client, 2)
    assert [t["calls"] for t in turns] == [1, 1]
    assert turns[0]["session"] != turns[1]["session"]
    assert len(await _ended(ended, 2)) == 2


async def test_2025_stateful_http_session_ends_with_delete(tmp_path: Path) -> None:
    ended = tmp_path / "sessions.log"
    with serve_http([*APP, "--stateful"], {SESSION_FILE_ENV: str(ended)}) as served:
        async with connect(served.url, "legacy") as first:
            one = await _turns(first, 2)
        async with connect(served.url, "legacy") as second:
            two = await _turns(second, 1)
        lines = await _ended(ended, 2)
    assert [t["calls"] for t in one] == [1, 2]
    assert one[0]["session"] == one[1]["session"] != two[0]["session"]
    assert lines == [f"closed {one[0]['session']} after 2", f"closed {two[0]['session']} after 1"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stateless_http_has_no_session(mode: str, tmp_path: Path) -> None:
    ended = tmp_path / "sessions.log"
    with serve_http(APP, {SESSION_FILE_ENV: str(ended)}) as served:
        async with connect(served.url, mode) as client:
            turns = await _turns(client, 2)
        await _ended(ended, 2)
    assert [t["calls"] for t in turns] == [1, 1]
