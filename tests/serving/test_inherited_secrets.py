"""A tool's child processes inherit none of ``serve``'s secrets.

``serve --workers N`` hands its options, request-state keys included, to each
worker in ``MCP_ADAPTER_SERVE``; a key given as ``MCP_ADAPTER_REQUEST_STATE_KEYS``
sits in the environment of every serving process. Each is read once and taken out
of the environment, so a tool that runs ``env`` (or reads ``os.environ``) sees
neither. Real ``mcp-adapter serve`` subprocesses; the tool spawns a real child.
"""

from __future__ import annotations

import secrets
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.serving.clients import connect
from tests.serving.harness import START_TIMEOUT, serve_http
from tests.serving.test_stdio import stdio_server
from tests.serving.trust_apps import NEEDLE

ENV_SERVER = "tests.serving.trust_apps:EnvServer"

pytestmark = pytest.mark.anyio


async def _seen(url: str, calls: int = 1) -> list[dict[str, Any]]:
    seen = []
    for _ in range(calls):
        async with connect(url) as client:
            result = await client.call_tool("child-env", {})
        assert not result.is_error, result
        assert isinstance(result.structured_content, dict)
        seen.append(result.structured_content)
    return seen


def _secret_env() -> dict[str, str]:
    """A request-state key given as its variable, and the same secret as the needle."""
    key = secrets.token_hex(32)
    return {"MCP_ADAPTER_REQUEST_STATE_KEYS": key, NEEDLE: key}


async def test_workers_take_their_options_out_of_the_environment() -> None:
    env = _secret_env()
    with serve_http([ENV_SERVER, "--workers", "2"], env) as served:
        seen = await _seen(served.url, calls=4)
    for each in seen:
        assert each["own"] == []
        assert each["child"] == []
        assert each["own_holding"] == []
        assert each["child_holding"] == []


async def test_a_key_given_on_the_command_line_reaches_no_child_either() -> None:
    key = secrets.token_hex(32)
    args = [ENV_SERVER, "--workers", "2", "--request-state-key", key]
    with serve_http(args, {NEEDLE: key}) as served:
        seen = await _seen(served.url, calls=2)
    assert all(each["own_holding"] == each["child_holding"] == [] for each in seen)
    assert all("MCP_ADAPTER_SERVE" not in each["child"] for each in seen)


async def test_one_process_forgets_the_key_variable() -> None:
    env = _secret_env()
    with serve_http([ENV_SERVER], env) as served:
        (seen,) = await _seen(served.url)
    assert seen["own"] == seen["child"] == []
    assert seen["own_holding"] == seen["child_holding"] == []


async def test_over_stdio_too() -> None:
    env = _secret_env()
    params = stdio_server([ENV_SERVER], env)
    with anyio.fail_after(START_TIMEOUT):
        async with Client(params) as client:
            result = await client.call_tool("child-env", {})
    seen = result.structured_content
    assert isinstance(seen, dict)
    assert seen["own"] == seen["child"] == []
    assert seen["own_holding"] == seen["child_holding"] == []
