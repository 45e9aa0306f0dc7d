"""README command one serves the demo over HTTP on 127.0.0.1 and prints its URL."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.serving.clients import connect, tool_names
from tests.serving.harness import REPO, serve_http

pytestmark = pytest.mark.anyio


def main_command() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- main-command -->\s*```sh\n(.+?)\n```", text, re.DOTALL)
    assert found, "README.md has no main command"
    return found.group(1)


def serve_arguments() -> list[str]:
    """The ``mcp-adapter serve`` arguments of the command, without host and port."""
    steps = [shlex.split(step) for step in main_command().split("&&")]
    assert steps[0][:4] == ["python3", "-m", "pip", "install"]
    assert steps[1] == ["python3", "-m", "uv", "sync", "--frozen"]
    words = steps[-1]
    assert words[:6] == ["python3", "-m", "uv", "run", "mcp-adapter", "serve"]
    args = words[6:]
    assert args[args.index("--host") + 1] == "127.0.0.1"
    for option in ("--host", "--port"):
        at = args.index(option)
        del args[at : at + 2]
    assert "--http" in args
    args.remove("--http")
    return args


async def test_readme_command_serves_the_demo_with_its_private_tool() -> None:
    with serve_http(serve_arguments(), {"MCP_DEMO_TOKEN": "readme-token"}) as served:
        assert served.url.startswith("http://127.0.0.1:")
        assert served.url.endswith("/mcp")
        async with connect(served.url) as client:
            assert await tool_names(client) == ["greet", "summarize"]
        async with connect(served.url, token="readme-token") as client:
            result = await client.call_tool("private-message", {"message": "hi"})
            assert [getattr(c, "text", None) for c in result.content] == ["hi"]


async def test_without_a_token_variable_the_demo_prints_one() -> None:
    with serve_http(serve_arguments(), {"MCP_DEMO_TOKEN": ""}) as served:
        line = next(line for line in served.output if "demo token" in line)
        token = line.rsplit(": ", 1)[1].strip()
        async with connect(served.url, token=token) as client:
            assert "private-message" in await tool_names(client)
