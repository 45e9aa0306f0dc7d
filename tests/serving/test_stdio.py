"""``mcp-adapter serve`` over stdio in a real subprocess, driven by the SDK's own ``mcp.Client``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcp_adapter.serving import serve_stdio
from tests.serving.apps import AUDIT_FILE_ENV, AuditServer, build_container
from tests.serving.harness import CLI, REPO, cli_env

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 60
MODES = ["auto", "legacy"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def stdio_server(args: list[str], env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=CLI[0], args=[*CLI[1:], "serve", *args], env=cli_env(env), cwd=REPO
    )


@pytest.mark.parametrize("mode", MODES)
async def test_scoped_service_per_call_and_finalizer_runs(mode: str, tmp_path: Path) -> None:
    audit = tmp_path / "audit.log"
    params = stdio_server(
        ["tests.serving.apps:AuditServer", "--container", "tests.serving.apps:build_container"],
        {AUDIT_FILE_ENV: str(audit)},
    )
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode=mode) as client:
            first = await client.call_tool("record", {"text": "one"})
            second = await client.call_tool("record", {"text": "two"})
            assert not first.is_error
            assert not second.is_error
            one, two = first.structured_content, second.structured_content
            assert isinstance(one, dict)
            assert isinstance(two, dict)
            assert one["transport"] == "stdio"
            assert one["log"] != two["log"]  # a new scope, so a new AuditLog, per call
            assert one["pid"] == two["pid"]
            assert (one["calls"], two["calls"]) == (1, 2)  # the singleton is shared
            lines = audit.read_text().splitlines()
    assert lines == [
        f"opened {one['log']} | one via stdio | closed {one['log']}",
        f"opened {two['log']} | two via stdio | closed {two['log']}",
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_demo_over_stdio_in_both_eras(mode: str) -> None:
    params = stdio_server(
        [
            "examples.demo.server:DemoServer",
            "--container",
            "examples.demo.container:build_container",
        ]
    )
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode=mode) as client:
            assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["greet", "summarize"]
            greeting = await client.call_tool("greet", {"name": " Ada "})
            expected = {"result": "Hello, Ada!"} if mode == "legacy" else "Hello, Ada!"
            assert greeting.structured_content == expected
            summary = await client.call_tool("summarize", {"values": [2.5, 3.5]})
            assert summary.structured_content == {"count": 2, "total": 6.0}
            resource = await client.read_resource("demo://greetings/Bob")
            assert [getattr(c, "text", None) for c in resource.contents] == ["Hello, Bob!"]
            prompt = await client.get_prompt("greeting", {"name": "Cy"})
            assert prompt.messages[0].role == "user"
            # No identity on stdio: the private tool is hidden, and unknown when called.
            with pytest.raises(MCPError, match="Unknown tool: private-message"):
                await client.call_tool("private-message", {"message": "psst"})


async def test_unknown_toolset_fails_fast_with_a_clear_line() -> None:
    with anyio.fail_after(CALL_TIMEOUT):
        result = await anyio.run_process(
            [*CLI, "serve", "tests.serving.apps:toolset_catalog", "--toolsets", "nope"],
            cwd=REPO,
            env=cli_env(),
            check=False,
        )
    err = result.stderr.decode()
    assert result.returncode == 2
    assert "error: unknown toolset(s): nope (known: issues, repos, users)" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("mode", MODES)
async def test_a_platform_with_a_toolset_selection(mode: str) -> None:
    params = stdio_server(
        [
            "tests.serving.apps:platform",
            "--container",
            "tests.serving.apps:build_container",
            "--toolsets",
            "notes",
        ]
    )
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode=mode) as client:
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["add_note"]
            assert "counter" not in str(tools.tools[0].input_schema)
            first = await client.call_tool("add_note", {"text": "milk"})
            second = await client.call_tool("add_note", {"text": "eggs"})
            assert [getattr(c, "text", None) for c in first.content] == ["noted: milk (#1)"]
            assert [getattr(c, "text", None) for c in second.content] == ["noted: eggs (#2)"]
            with pytest.raises(MCPError, match="Unknown tool: purge_notes"):
                await client.call_tool("purge_notes", {})


async def test_lines_that_are_not_messages_are_answered_in_order_without_echoing_them() -> None:
    """JSON-RPC 2.0: -32700 for what is not JSON, -32600 for JSON that is no message, id null."""
    lines = [
        "{not json SECRET",
        "",
        "   \t",
        "\f",
        "[]",
        '[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]',
        '{"jsonrpc": "2.0", "id": 3, "method": 5, "params": {"SECRET": 1}}',
        "5",
        json.dumps(INITIALIZE),
    ]
    stdin = io.StringIO("".join(line + "\n" for line in lines))
    stdout = io.StringIO()
    with anyio.fail_after(CALL_TIMEOUT):
        await serve_stdio(
            AuditServer,
            build_container(),
            stdin=anyio.wrap_file(stdin),
            stdout=anyio.wrap_file(stdout),
        )
    answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
    errors = [(a["id"], a["error"]["code"], a["error"]["message"]) for a in answers[:-1]]
    assert errors == [
        (None, -32700, "Parse error"),  # the blank lines are not messages: no answer
        (None, -32700, "Parse error"),  # a form feed is no JSON whitespace
        (None, -32600, "Invalid Request"),
        (None, -32600, "Invalid Request"),
        (None, -32600, "Invalid Request"),
        (None, -32600, "Invalid Request"),
    ]
    assert answers[-1]["id"] == 1, "the server kept serving"
    assert answers[-1]["result"]["serverInfo"]["name"]
    assert "SECRET" not in stdout.getvalue()
    assert "pydantic" not in stdout.getvalue()


async def test_a_request_whose_id_is_no_id_is_answered_invalid_request() -> None:
    """MCP ids are strings or integers; the SDK would read the rest as unanswered notifications."""
    bad_ids: list[object] = [True, False, [1], {"n": 1}, None, 1.5, 2.0]
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": bad, "method": "ping", "params": {"SECRET": 1}})
        for bad in bad_ids
    ]
    lines.insert(3, '{"jsonrpc": "2.0", "method": "notifications/initialized"}')  # no answer
    lines.append(json.dumps({**INITIALIZE, "id": "s"}))  # a string id is an id
    stdout = io.StringIO()
    with anyio.fail_after(CALL_TIMEOUT):
        await serve_stdio(
            AuditServer,
            build_container(),
            stdin=anyio.wrap_file(io.StringIO("".join(line + "\n" for line in lines))),
            stdout=anyio.wrap_file(stdout),
        )
    answers = [json.loads(line) for line in stdout.getvalue().splitlines()]
    error = {"code": -32600, "message": "Invalid Request"}
    invalid = {"jsonrpc": "2.0", "id": None, "error": error}
    assert answers[: len(bad_ids)] == [invalid] * len(bad_ids)
    assert [(a["id"], "result" in a) for a in answers[len(bad_ids) :]] == [("s", True)]
    assert "SECRET" not in stdout.getvalue()


@pytest.mark.parametrize("mode", MODES)
async def test_a_handler_reading_stdin_gets_eof_not_the_clients_messages(mode: str) -> None:
    """fd 0 points at the null device while serving: the wire is read from a private copy."""
    params = stdio_server(["tests.serving.apps:StdinServer"])
    with anyio.fail_after(CALL_TIMEOUT):
        async with Client(params, mode=mode) as client:
            read = await client.call_tool("read-stdin", {})
            again = await client.call_tool("read-stdin", {})
    assert read.structured_content == again.structured_content == {"read": ""}
