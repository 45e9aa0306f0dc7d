"""``ResponseLimit``: an output past ``max_bytes`` is refused before it becomes a result."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import types
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel, field_serializer

from mcp_adapter import McpExtension, McpResponse, tool
from mcp_adapter.layers import ResponseLimit, response_size
from tests.components.support import ERAS
from tests.layers.support import client

pytestmark = pytest.mark.anyio


def text_block_size(text: str) -> int:
    return len(json.dumps({"type": "text", "text": text}, separators=(",", ":")).encode())


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_output_past_the_limit_is_a_tool_error_with_its_size(era: str) -> None:
    limit = text_block_size("x" * 100)
    async with client(ResponseLimit(limit), era=era) as mcp:
        (await mcp.tool("echo", {"text": "x" * 100})).assertOk()
        over = await mcp.tool("echo", {"text": "é" * 100})  # two bytes each in UTF-8
        over.assertError(f"Response too large: {limit + 100} bytes, limit {limit}")
        assert over.result is not None
        assert over.result["isError"] is True
        # a function tool's plain value: its JSON, a string with its quotes
        (await mcp.tool("repeat", {"times": limit - 2})).assertOk()
        (await mcp.tool("repeat", {"times": limit - 1})).assertError(
            f"Response too large: {limit + 1} bytes, limit {limit}"
        )


@pytest.mark.parametrize("era", ERAS)
async def test_other_kinds_past_the_limit_are_internal_errors_with_the_message(era: str) -> None:
    async with client(ResponseLimit(200), era=era) as mcp:
        (await mcp.read_resource("notes://3")).assertOk()
        read = await mcp.read_resource("notes://100")  # "note " * 100
        (await mcp.prompt("greeting", {"who": "ada"})).assertOk()
        prompt = await mcp.prompt("greeting", {"who": "a" * 300})
        listing = await mcp.list_tools()  # two tools with their schemas: past 200 bytes
    for answer, size in (
        (read, text_block_size("note " * 100)),
        (prompt, text_block_size("hello " + "a" * 300)),
    ):
        assert answer.error == {
            "code": types.INTERNAL_ERROR,
            "message": f"Response too large: {size} bytes, limit 200",
        }
    assert listing.error is not None
    assert listing.error["code"] == types.INTERNAL_ERROR
    assert listing.error["message"].startswith("Response too large: ")


class Blob(BaseModel):
    """Structured output whose serializer counts how often it runs."""

    data: str

    @field_serializer("data")
    def counted(self, data: str) -> str:
        SERIALIZED.append(len(data))
        return data


SERIALIZED: list[int] = []


class Blobs(McpExtension):
    @tool
    def blob(self, size: int) -> Blob:
        """A structured value of ``size`` characters."""
        return Blob(data="b" * size)


@pytest.mark.parametrize("era", ERAS)
async def test_a_huge_output_is_measured_once_and_never_built_into_a_result(era: str) -> None:
    SERIALIZED.clear()
    async with client(ResponseLimit(1_000_000), era=era, more=[Blobs()]) as mcp:
        huge = await mcp.tool("blob", {"size": 20_000_000})
        huge.assertError("Response too large: 20000011 bytes, limit 1000000")
        assert len(json.dumps(huge.message)) < 1000  # the client got the refusal, not the data
        assert SERIALIZED == [20_000_000]  # measured; the dispatcher never serialized it
        SERIALIZED.clear()
        small = (await mcp.tool("blob", {"size": 10})).assertOk()
        assert small.structured in ({"data": "b" * 10}, {"result": {"data": "b" * 10}})
        assert SERIALIZED == [10, 10]  # measured here, then built once into the result
        SERIALIZED.clear()
        text = await mcp.tool("repeat", {"times": 20_000_000})
        text.assertError("Response too large: 20000002 bytes, limit 1000000")
        assert len(json.dumps(text.message)) < 1000


def test_what_is_measured() -> None:
    text = McpResponse.text("hi")
    assert response_size(text) == text_block_size("hi")
    structured = McpResponse.structured({"n": 1})
    assert response_size(structured) == len('{"n":1}')
    assert response_size([text, structured]) == text_block_size("hi") + len('{"n":1}')
    result = types.CallToolResult(content=[types.TextContent(type="text", text="hi")])
    assert response_size(result) == len(
        '{"content":[{"type":"text","text":"hi"}],"isError":false,"resultType":"complete"}'
    )
    image = Image(data=b"\x89PNG....", format="png")
    assert response_size(image) == len(
        image.to_image_content().model_dump_json(by_alias=True, exclude_none=True)
    )
    assert response_size(b"abc") == len('"YWJj"')  # bytes as base64
    assert response_size("é") == len('"é"'.encode())


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_the_limit_is_a_positive_whole_number_of_bytes(bad: Any) -> None:
    with pytest.raises(ValueError, match="positive number of bytes"):
        ResponseLimit(bad)
