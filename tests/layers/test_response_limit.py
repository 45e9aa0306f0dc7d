"""``ResponseLimit``: an answer past ``max_bytes`` is refused; at the request stage what is
measured is what is sent."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from mcp import types
from mcp.server.mcpserver.utilities.types import Image
from pydantic import BaseModel, field_serializer

from container import Container
from mcp_adapter import (
    McpExtension,
    McpResponse,
    Platform,
    Prompt,
    PromptArgument,
    Resource,
    Server,
    tool,
)
from mcp_adapter.layers import ResponseLimit, response_size
from mcp_adapter.testing import McpResult, McpTestClient
from tests.components.support import ERAS
from tests.layers.support import client

pytestmark = pytest.mark.anyio


SDK_ADDED = ("_meta", "cacheScope", "ttlMs")
"""What the SDK adds to a result it sends in 2026-07-28 (its server info, a resource's
caching hints): fixed for a server, never from the call."""


def sent_size(answer: McpResult) -> int:
    """UTF-8 bytes of the ``result`` member as it came over the wire, without what the SDK
    adds to every result."""
    assert answer.result is not None
    result = {key: value for key, value in answer.result.items() if key not in SDK_ADDED}
    return len(json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode())


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_answer_past_the_limit_is_a_tool_error_with_its_size(era: str) -> None:
    limit = response_size(
        types.CallToolResult(content=[types.TextContent(type="text", text="x" * 100)])
    )
    async with client(ResponseLimit(limit), era=era) as mcp:
        ok = (await mcp.tool("echo", {"text": "x" * 100})).assertOk()
        assert sent_size(ok) <= limit
        over = await mcp.tool("echo", {"text": "é" * 100})  # two bytes each in UTF-8
        over.assertError(f"Response too large: {limit + 100} bytes, limit {limit}")
        assert over.result is not None
        assert over.result["isError"] is True
        # a function tool's plain value: its text and its structured copy
        fits = (await mcp.tool("repeat", {"times": 3})).assertOk()
        assert sent_size(fits) <= limit
        (await mcp.tool("repeat", {"times": limit})).assertError("Response too large: ")


@pytest.mark.parametrize("era", ERAS)
async def test_other_kinds_past_the_limit_are_internal_errors_with_the_message(era: str) -> None:
    async with client(ResponseLimit(300), era=era) as mcp:
        (await mcp.read_resource("notes://3")).assertOk()
        read = await mcp.read_resource("notes://100")  # "note " * 100
        (await mcp.prompt("greeting", {"who": "ada"})).assertOk()
        prompt = await mcp.prompt("greeting", {"who": "a" * 300})
        listing = await mcp.list_tools()  # two tools with their schemas: past 300 bytes
    for answer in (read, prompt, listing):
        assert answer.error is not None
        assert answer.error["code"] == types.INTERNAL_ERROR
        assert answer.error["message"].startswith("Response too large: ")
        assert answer.error["message"].endswith(" bytes, limit 300")


# -- what is sent, however the answer is built ---------------------------------------------


class Items(Resource):
    """``count`` text items, each carrying the URI read (the client's to choose)."""

    uri_template = "items://{count}/{key}"

    async def handle(self, count: int, key: str) -> list[McpResponse]:
        return [McpResponse.text("a") for _ in range(count)]


class Shapes(McpExtension):
    """Function tools whose plain value grows when it becomes content."""

    @tool
    def grid(self, rows: int, cols: int) -> Any:
        """Nested lists: each number becomes a text block of its own."""
        return [[0] * cols for _ in range(rows)]

    @tool
    def deep(self, depth: int) -> Any:
        """Nested objects: rendered as indented JSON text."""
        value: Any = 0
        for _ in range(depth):
            value = {"a": value}
        return value


class Chatty(Prompt):
    """``count`` empty messages."""

    arguments: ClassVar = (PromptArgument(name="count", required=True),)

    async def handle(self, count: str) -> list[McpResponse]:
        return [McpResponse.text("") for _ in range(int(count))]


LIMIT = 4_000

CASES = {  # method, params, how many times LIMIT the unbounded answer is at least
    "a template's items each repeating a client-chosen URI": (
        "resources/read",
        {"uri": "items://100/" + "k" * 1_500},
        30,
    ),
    "nested lists flattened into one block per number": (
        "tools/call",
        {"name": "grid", "arguments": {"rows": 40, "cols": 40}},
        10,
    ),
    "a nested value rendered as indented JSON": (
        "tools/call",
        {"name": "deep", "arguments": {"depth": 200}},
        20,
    ),
    "a prompt's blocks each becoming a message": (
        "prompts/get",
        {"name": "chatty", "arguments": {"count": "150"}},
        1.9,
    ),
}


def shaped(*layers: Any, era: str) -> McpTestClient:
    class Shaped(Server):
        name = "shaped"
        resources = (Items,)
        prompts = (Chatty,)
        middleware: ClassVar = layers

    return McpTestClient(Container(), Platform([Shapes()], server=Shaped), protocol=era)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("case", CASES)
async def test_max_bytes_bounds_what_is_sent_where_the_answer_outgrows_the_value(
    era: str, case: str
) -> None:
    method, params, factor = CASES[case]
    unbounded = await shaped(era=era).request(method, params)
    assert sent_size(unbounded.assertOk()) > factor * LIMIT  # the blow-up is real
    # around the handler the value looked small: the call stage lets it through
    (await shaped(ResponseLimit(LIMIT, stage="call"), era=era).request(method, params)).assertOk()
    # at the request stage the answer is measured as it is sent
    answer = await shaped(ResponseLimit(LIMIT), era=era).request(method, params)
    answer.assertError("Response too large: ")
    assert len(json.dumps(answer.message)) < 1_000


@pytest.mark.parametrize("era", ERAS)
async def test_every_answer_that_passes_fits_the_limit(era: str) -> None:
    """Sizes around the limit, for every shape: what passes is never larger."""
    mcp = shaped(ResponseLimit(LIMIT), era=era)
    passed = 0
    for size in (1, 5, 10, 20, 40, 60, 80, 100, 150):
        for method, params in (
            ("resources/read", {"uri": f"items://{size}/" + "k" * size}),
            ("tools/call", {"name": "grid", "arguments": {"rows": size, "cols": size}}),
            ("tools/call", {"name": "deep", "arguments": {"depth": size}}),
            ("prompts/get", {"name": "chatty", "arguments": {"count": str(size)}}),
        ):
            answer = await mcp.request(method, params)
            if answer.error is None and not (answer.result or {}).get("isError"):
                assert sent_size(answer) <= LIMIT, (method, size)
                passed += 1
            else:
                answer.assertError("Response too large: ")
    assert 10 < passed < 36  # some of each side


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
async def test_a_huge_output_is_refused_and_the_client_gets_only_the_refusal(era: str) -> None:
    async with client(ResponseLimit(1_000_000), era=era, more=[Blobs()]) as mcp:
        huge = await mcp.tool("blob", {"size": 5_000_000})
        huge.assertError("Response too large: ")
        assert len(json.dumps(huge.message)) < 1000  # the client got the refusal, not the data
        small = (await mcp.tool("blob", {"size": 10})).assertOk()
        assert small.structured in ({"data": "b" * 10}, {"result": {"data": "b" * 10}})


@pytest.mark.parametrize("era", ERAS)
async def test_at_the_call_stage_a_refused_value_is_never_built_into_a_result(era: str) -> None:
    SERIALIZED.clear()
    async with client(ResponseLimit(1_000_000, stage="call"), era=era, more=[Blobs()]) as mcp:
        huge = await mcp.tool("blob", {"size": 20_000_000})
        huge.assertError("Response too large: 20000011 bytes, limit 1000000")
        assert SERIALIZED == [20_000_000]  # measured; the dispatcher never serialized it
        SERIALIZED.clear()
        (await mcp.tool("blob", {"size": 10})).assertOk()
        assert SERIALIZED == [10, 10]  # measured here, then built once into the result


def text_block_size(text: str) -> int:
    return len(json.dumps({"type": "text", "text": text}, separators=(",", ":")).encode())


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
    with pytest.raises(ValueError, match="stage= is 'request' or 'call'"):
        ResponseLimit(10, stage="result")  # type: ignore[arg-type]
