"""``McpTestClient`` and the assertions of its results: they pass and fail when they should."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import McpResponse, Server, Tool, compile_server
from mcp_adapter.testing import McpResult, McpTestClient, texts_of
from mcp_adapter.testing.client import MODERN
from schemas import Schema

pytestmark = pytest.mark.anyio


class EchoInput(Schema):
    message: str


class EchoTool(Tool[EchoInput, str]):
    async def handle(self, payload: EchoInput) -> McpResponse:
        if payload.message == "fail":
            return McpResponse.error("You asked for a failure.")
        return McpResponse.structured(payload.message)


class EchoServer(Server):
    tools = (EchoTool,)


def _message(
    result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
) -> McpResult:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    return McpResult(body)


SUCCESS = _message(
    {
        "content": [{"type": "text", "text": "Hello, Ada!"}],
        "structuredContent": {"greeting": "Hello, Ada!"},
        "isError": False,
    }
)
TOOL_ERROR = _message({"content": [{"type": "text", "text": "No such user."}], "isError": True})
PROTOCOL_ERROR = _message(error={"code": -32602, "message": "Unknown tool: nope"})


def _fails(check: Any, *args: Any) -> str:
    with pytest.raises(AssertionError) as caught:
        check(*args)
    return str(caught.value)


# -- the assertions on known messages ---------------------------------------------------------


def test_assertions_pass_on_a_success_and_chain() -> None:
    assert SUCCESS.assertOk() is SUCCESS
    assert SUCCESS.assertTextContains("Ada") is SUCCESS
    assert SUCCESS.assertStructured({"greeting": "Hello, Ada!"}) is SUCCESS
    assert SUCCESS.texts == ["Hello, Ada!"]
    assert SUCCESS.structured == {"greeting": "Hello, Ada!"}
    assert not SUCCESS.is_error


@pytest.mark.parametrize(
    ("result", "why"),
    [
        (TOOL_ERROR, "expected success, got isError: true"),
        (PROTOCOL_ERROR, "expected a result, got a protocol error"),
    ],
    ids=["tool-error", "protocol-error"],
)
def test_assert_ok_fails_with_the_whole_message(result: McpResult, why: str) -> None:
    text = _fails(result.assertOk)
    assert why in text
    assert json.dumps(result.message, indent=2) in text


def test_assert_error_passes_on_both_kinds_of_error() -> None:
    assert TOOL_ERROR.assertError() is TOOL_ERROR
    assert TOOL_ERROR.assertError("No such") is TOOL_ERROR
    assert PROTOCOL_ERROR.assertError() is PROTOCOL_ERROR
    assert PROTOCOL_ERROR.assertError("Unknown tool") is PROTOCOL_ERROR


def test_assert_error_fails_on_success_and_on_other_text() -> None:
    text = _fails(SUCCESS.assertError)
    assert "expected an error, got success" in text
    assert json.dumps(SUCCESS.message, indent=2) in text
    text = _fails(TOOL_ERROR.assertError, "Permission denied")
    assert "'Permission denied'" in text
    assert json.dumps(TOOL_ERROR.message, indent=2) in text
    text = _fails(PROTOCOL_ERROR.assertError, "No such user")
    assert json.dumps(PROTOCOL_ERROR.message, indent=2) in text


def test_result_is_the_result_object_or_fails_with_the_whole_message() -> None:
    assert SUCCESS.result["structuredContent"] == {"greeting": "Hello, Ada!"}
    text = _fails(lambda: PROTOCOL_ERROR.result)
    assert "expected a result, got a protocol error" in text
    assert json.dumps(PROTOCOL_ERROR.message, indent=2) in text
    odd = McpResult({"jsonrpc": "2.0", "id": 1, "result": []})
    assert "expected a result, got a response without one" in _fails(lambda: odd.result)
    assert odd.texts == []
    assert not odd.is_error


def test_assert_error_with_a_code_wants_that_protocol_error() -> None:
    assert PROTOCOL_ERROR.assertError("Unknown tool", code=-32602) is PROTOCOL_ERROR
    text = _fails(lambda: PROTOCOL_ERROR.assertError(code=-32601))
    assert "expected a protocol error -32601" in text
    assert json.dumps(PROTOCOL_ERROR.message, indent=2) in text
    assert "got isError: true" in _fails(lambda: TOOL_ERROR.assertError(code=-32602))
    assert "got success" in _fails(lambda: SUCCESS.assertError(code=-32602))


def test_texts_of_reads_the_sdk_results() -> None:
    text = types.TextContent(type="text", text="Hello")
    image = types.ImageContent(type="image", data="AA==", mime_type="image/png")
    assert texts_of(types.CallToolResult(content=[text, image, text])) == ["Hello", "Hello"]
    prompt = types.GetPromptResult(
        messages=[
            types.PromptMessage(role="user", content=text),
            types.PromptMessage(role="user", content=image),
        ]
    )
    assert texts_of(prompt) == ["Hello"]
    resource = types.ReadResourceResult(
        contents=[
            types.TextResourceContents(uri="notes://1", text="note"),
            types.BlobResourceContents(uri="notes://2", blob="AA=="),
        ]
    )
    assert texts_of(resource) == ["note"]


def test_assert_text_contains_fails_with_the_whole_message() -> None:
    text = _fails(SUCCESS.assertTextContains, "Goodbye")
    assert "'Goodbye'" in text
    assert json.dumps(SUCCESS.message, indent=2) in text
    assert "Unknown tool" in _fails(PROTOCOL_ERROR.assertTextContains, "Unknown tool")


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (SUCCESS, {"greeting": "Hello, Eve!"}),
        (SUCCESS, "Hello, Ada!"),
        (TOOL_ERROR, None),
        (PROTOCOL_ERROR, None),
    ],
    ids=["other-value", "unwrapped-value", "absent-is-not-none", "protocol-error"],
)
def test_assert_structured_fails_with_the_whole_message(result: McpResult, expected: Any) -> None:
    text = _fails(result.assertStructured, expected)
    assert f"expected structuredContent == {expected!r}" in text
    assert json.dumps(result.message, indent=2) in text


# -- the client -----------------------------------------------------------------------------


async def test_the_default_era_is_2026_07_28() -> None:
    client = McpTestClient(Container(), EchoServer)
    result = (await client.tool("echo", {"message": "hi"})).assertOk()
    assert result.result is not None
    assert result.result["resultType"] == "complete"
    result.assertStructured("hi")


async def test_the_2025_era_does_the_handshake_and_wraps() -> None:
    client = McpTestClient(Container(), EchoServer, protocol="2025-11-25")
    result = (await client.tool("echo", {"message": "hi"})).assertOk()
    assert result.result is not None
    assert "resultType" not in result.result
    result.assertStructured({"result": "hi"})


async def test_results_carry_the_json_rpc_envelope(era: str) -> None:
    client = McpTestClient(Container(), EchoServer, protocol=era)  # type: ignore[arg-type]
    first = await client.tool("echo", {"message": "a"})
    second = await client.tool("echo", {"message": "b"})
    assert first.message["jsonrpc"] == second.message["jsonrpc"] == "2.0"
    assert first.message["id"] != second.message["id"]


async def test_assertions_on_real_answers(era: str) -> None:
    client = McpTestClient(Container(), EchoServer, protocol=era)  # type: ignore[arg-type]
    ok = await client.tool("echo", {"message": "fine"})
    ok.assertOk().assertTextContains("fine")
    failed = await client.tool("echo", {"message": "fail"})
    failed.assertError("You asked for a failure.")
    assert "You asked for a failure." in _fails(failed.assertOk)
    invalid = await client.tool("echo", {"message": 1})
    invalid.assertError("Invalid tool arguments")
    unknown = await client.tool("nope", {})
    unknown.assertError("Unknown tool: nope")
    assert unknown.error is not None


async def test_list_tools_and_raw_requests(era: str) -> None:
    client = McpTestClient(Container(), EchoServer, protocol=era)  # type: ignore[arg-type]
    listed = (await client.list_tools()).assertOk()
    assert listed.result is not None
    assert [tool["name"] for tool in listed.result["tools"]] == ["echo"]
    raw = await client.request("tools/call", {"name": "echo", "arguments": {"message": "raw"}})
    raw.assertOk().assertTextContains("raw")


async def test_a_compiled_catalog_is_accepted() -> None:
    container = Container()
    catalog = compile_server(EchoServer, container)
    client = McpTestClient(container, catalog)
    assert client.catalog is catalog
    (await client.tool("echo", {"message": "x"})).assertOk()


def _list_tools(era: str, request_id: str) -> str:
    """A ``tools/list`` request as text, with the era's envelope and ``request_id`` as its id."""
    params: dict[str, Any] = {}
    if era == MODERN:
        params["_meta"] = {
            types.PROTOCOL_VERSION_META_KEY: MODERN,
            types.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
            types.CLIENT_CAPABILITIES_META_KEY: {},
        }
    body = {"jsonrpc": "2.0", "id": "@", "method": "tools/list", "params": params}
    return json.dumps(body).replace('"@"', request_id)


@pytest.mark.parametrize(
    "request_id",
    ["1.5", "1.0", "1e3", "true", "false", "null", "{}", '{"id": 1}', "[]", "[1]"],
    ids=[
        "fraction",
        "integral-float",
        "exponent",
        "true",
        "false",
        "null",
        "empty-object",
        "object",
        "empty-list",
        "list",
    ],
)
async def test_a_request_with_an_id_of_the_wrong_type_is_an_invalid_request(
    era: str, request_id: str
) -> None:
    """Answered ``-32600`` with ``id: null`` as over stdio and HTTP; no notification."""
    client = McpTestClient(Container(), EchoServer, protocol=era)  # type: ignore[arg-type]
    result = await client.send(_list_tools(era, request_id))
    assert result.message == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": types.INVALID_REQUEST, "message": "Invalid Request"},
    }
    assert result.notifications == ()


@pytest.mark.parametrize("request_id", ['"abc"', '""', "7", "0", "-3"])
async def test_a_request_with_a_string_or_integer_id_is_served(era: str, request_id: str) -> None:
    client = McpTestClient(Container(), EchoServer, protocol=era)  # type: ignore[arg-type]
    result = (await client.send(_list_tools(era, request_id))).assertOk()
    assert result.message["id"] == json.loads(request_id)
    assert result.result is not None
    assert [tool["name"] for tool in result.result["tools"]] == ["echo"]
