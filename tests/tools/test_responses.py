"""What a handler returns, and the ``CallToolResult`` a client receives for it."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from schemas import Schema
from tests.tools.drivers import Driver

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n-not-really"
WAV = b"RIFF....WAVEfmt "


class Total(Schema):
    total: int


def _returning(name: str, value: Any, output: Any = None) -> type[Tool[Any, Any]]:
    async def handle(self: Any) -> McpResponse:
        return value  # type: ignore[no-any-return]

    namespace = {"name": name, "output": output, "handle": handle}
    return type(f"{name.title().replace('-', '')}Tool", (Tool,), namespace)


def _server(*tools: type[Tool[Any, Any]]) -> type[Server]:
    return type("ResponsesServer", (Server,), {"tools": tools})


async def _call(driver: Driver, value: Any, output: Any = None) -> Any:
    """Serve one tool returning ``value`` and call it; the decoded answer."""
    return await driver.call(Container(), _server(_returning("t", value, output)), "t", {})


def _result(answer: Any) -> dict[str, Any]:
    assert answer.result is not None, answer.message
    result: dict[str, Any] = answer.result
    return result


# -- content kinds ------------------------------------------------------------------------


async def test_text(driver: Driver) -> None:
    result = _result((await _call(driver, McpResponse.text("plain words"))).assertOk())
    assert result["content"] == [{"type": "text", "text": "plain words"}]
    assert "structuredContent" not in result
    assert result["isError"] is False


async def test_text_with_content_annotations_and_meta(driver: Driver) -> None:
    response = McpResponse.text(
        "for you",
        annotations={"audience": ["user"], "priority": 0.25},
        meta={"com.example/lang": "en"},
    )
    result = _result((await _call(driver, response)).assertOk())
    assert result["content"] == [
        {
            "type": "text",
            "text": "for you",
            "annotations": {"audience": ["user"], "priority": 0.25},
            "_meta": {"com.example/lang": "en"},
        }
    ]


async def test_content_annotations_accept_the_protocol_model(driver: Driver) -> None:
    annotations = types.Annotations(audience=["assistant"], priority=1.0)
    result = _result(
        (await _call(driver, McpResponse.text("x", annotations=annotations))).assertOk()
    )
    assert result["content"][0]["annotations"] == {"audience": ["assistant"], "priority": 1.0}


async def test_structured_json_value_and_its_text(driver: Driver) -> None:
    value = {"ids": [1, 2], "name": "Zoë", "ok": True, "none": None}
    answer = (await _call(driver, McpResponse.structured(value))).assertOk()
    answer.assertStructured(value)
    (text,) = answer.texts
    assert json.loads(text) == value


async def test_structured_scalar_in_each_era(driver: Driver) -> None:
    answer = (await _call(driver, McpResponse.structured(3.5))).assertOk()
    answer.assertStructured(3.5 if driver.modern else {"result": 3.5})
    assert answer.texts == ["3.5"]


async def test_image_from_bytes_or_base64(driver: Driver) -> None:
    encoded = base64.b64encode(PNG).decode()
    for data in (PNG, encoded):
        response = McpResponse.image(data, "image/png", annotations={"priority": 0.5})
        result = _result((await _call(driver, response)).assertOk())
        assert result["content"] == [
            {
                "type": "image",
                "data": encoded,
                "mimeType": "image/png",
                "annotations": {"priority": 0.5},
            }
        ]


async def test_audio(driver: Driver) -> None:
    result = _result((await _call(driver, McpResponse.audio(WAV, "audio/wav"))).assertOk())
    assert result["content"] == [
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"}
    ]


async def test_embedded_text_resource(driver: Driver) -> None:
    response = McpResponse.resource(
        "file:///notes/today.md", text="# Today", mime_type="text/markdown"
    )
    result = _result((await _call(driver, response)).assertOk())
    assert result["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "file:///notes/today.md",
                "text": "# Today",
                "mimeType": "text/markdown",
            },
        }
    ]


async def test_embedded_blob_resource(driver: Driver) -> None:
    response = McpResponse.resource(
        "file:///img.png", blob=PNG, mime_type="image/png", meta={"k": "v"}
    )
    result = _result((await _call(driver, response)).assertOk())
    assert result["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "file:///img.png",
                "blob": base64.b64encode(PNG).decode(),
                "mimeType": "image/png",
            },
            "_meta": {"k": "v"},
        }
    ]


def test_an_embedded_resource_needs_exactly_one_of_text_or_blob() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        McpResponse.resource("file:///x")
    with pytest.raises(ValueError, match="exactly one"):
        McpResponse.resource("file:///x", text="a", blob=b"b")


async def test_resource_link(driver: Driver) -> None:
    response = McpResponse.resource_link(
        "demo://tickets/42",
        "ticket-42",
        title="Ticket 42",
        description="The printer is on fire",
        mime_type="application/json",
        size=512,
        annotations={"audience": ["assistant"]},
    )
    result = _result((await _call(driver, response)).assertOk())
    assert result["content"] == [
        {
            "type": "resource_link",
            "uri": "demo://tickets/42",
            "name": "ticket-42",
            "title": "Ticket 42",
            "description": "The printer is on fire",
            "mimeType": "application/json",
            "size": 512,
            "annotations": {"audience": ["assistant"]},
        }
    ]


async def test_result_meta(driver: Driver) -> None:
    response = McpResponse.text("t").with_meta(trace="abc", attempt=2)
    result = _result((await _call(driver, response)).assertOk())
    assert result["_meta"]["trace"] == "abc"
    assert result["_meta"]["attempt"] == 2
    assert "_meta" not in result["content"][0]


async def test_structured_with_result_meta(driver: Driver) -> None:
    answer = await _call(driver, McpResponse.structured({"a": 1}, meta={"source": "cache"}))
    answer.assertOk().assertStructured({"a": 1})
    assert _result(answer)["_meta"]["source"] == "cache"


# -- several responses ------------------------------------------------------------------------


@pytest.mark.parametrize("container_type", [list, tuple])
async def test_a_list_or_tuple_of_responses_is_one_result_in_order(
    driver: Driver, container_type: type
) -> None:
    responses = container_type(
        [
            McpResponse.text("first"),
            McpResponse.structured({"n": 1}).with_meta(a=1),
            McpResponse.image(PNG, "image/png"),
            McpResponse.text("last").with_meta(b=2),
        ]
    )
    answer = (await _call(driver, responses)).assertOk()
    result = _result(answer)
    assert [block["type"] for block in result["content"]] == ["text", "text", "image", "text"]
    assert answer.texts == ["first", '{"n":1}', "last"]
    answer.assertStructured({"n": 1})
    assert (result["_meta"]["a"], result["_meta"]["b"]) == (1, 2)


async def test_one_error_in_a_list_makes_the_result_an_error(driver: Driver) -> None:
    answer = await _call(driver, [McpResponse.text("partial"), McpResponse.error("then failed")])
    answer.assertError("then failed")
    assert answer.texts == ["partial", "then failed"]


async def test_two_structured_responses_are_an_execution_failure(driver: Driver) -> None:
    answer = await _call(driver, [McpResponse.structured(1), McpResponse.structured(2)])
    answer.assertError("Tool execution failed")
    assert "structuredContent" not in _result(answer)


# -- errors and output contracts ------------------------------------------------------------


async def test_error_is_a_tool_result_with_is_error(driver: Driver) -> None:
    answer = await _call(driver, McpResponse.error("No such ticket.", meta={"code": "E404"}))
    assert answer.error is None
    result = _result(answer)
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "No such ticket."}]
    assert result["_meta"]["code"] == "E404"


async def test_error_skips_output_validation(driver: Driver) -> None:
    answer = await _call(driver, McpResponse.error("Out of stock."), output=Total)
    answer.assertError("Out of stock.")
    assert "structuredContent" not in _result(answer)


async def test_valid_output_passes_the_contract(driver: Driver) -> None:
    answer = await _call(driver, McpResponse.structured({"total": "7"}), output=Total)
    answer.assertOk().assertStructured({"total": 7})


@pytest.mark.parametrize(
    "value",
    [
        McpResponse.structured({"total": "seven"}),
        McpResponse.structured({"total": 1, "extra": True}),
        McpResponse.structured([1, 2]),
    ],
    ids=["wrong-type", "extra-field", "not-an-object"],
)
async def test_output_contract_violation_is_an_execution_failure(
    driver: Driver, value: McpResponse, caplog: pytest.LogCaptureFixture
) -> None:
    answer = await _call(driver, value, output=Total)
    answer.assertError("Tool execution failed")
    assert "structuredContent" not in _result(answer)
    assert "output contract" in caplog.text


async def test_text_only_success_does_not_satisfy_a_typed_output(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    answer = await _call(driver, McpResponse.text('{"total": 1}'), output=Total)
    answer.assertError("Tool execution failed")
    assert "text-only success" in caplog.text


# -- what is not a response -----------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        {"content": [{"type": "text", "text": "looks like a result"}]},
        {"total": 1},
        "a bare string",
        None,
        [McpResponse.text("ok"), "not a response"],
        types.GetPromptResult(messages=[]),
    ],
    ids=["result-shaped-dict", "dict", "string", "none", "mixed-list", "other-protocol-result"],
)
async def test_anything_else_is_an_execution_failure_and_never_converted(
    driver: Driver, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    answer = await _call(driver, value)
    answer.assertError("Tool execution failed")
    assert "looks like a result" not in json.dumps(answer.message)
    assert "HandlerResultError" in caplog.text


async def test_a_bare_dict_is_not_converted_even_with_an_output_contract(driver: Driver) -> None:
    answer = await _call(driver, {"total": 1}, output=Total)
    answer.assertError("Tool execution failed")


# -- a complete protocol result ---------------------------------------------------------------


async def test_a_complete_result_is_passed_through(driver: Driver) -> None:
    complete = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="raw"),
            types.ResourceLink(type="resource_link", uri="demo://x", name="x"),
        ],
        structured_content={"total": 2},
        _meta={"built": "by hand"},
    )
    answer = (await _call(driver, complete)).assertOk()
    result = _result(answer)
    assert result["content"] == [
        {"type": "text", "text": "raw"},
        {"type": "resource_link", "uri": "demo://x", "name": "x"},
    ]
    answer.assertStructured({"total": 2})
    assert result["_meta"]["built"] == "by hand"


async def test_a_complete_result_is_checked_against_the_output_contract(driver: Driver) -> None:
    good = types.CallToolResult(content=[], structured_content={"total": "3"})
    (await _call(driver, good, output=Total)).assertOk().assertStructured({"total": 3})
    bad = types.CallToolResult(content=[], structured_content={"total": "three"})
    (await _call(driver, bad, output=Total)).assertError("Tool execution failed")
    missing = types.CallToolResult(content=[types.TextContent(type="text", text="3")])
    (await _call(driver, missing, output=Total)).assertError("Tool execution failed")


async def test_a_complete_error_result_is_passed_through_unchecked(driver: Driver) -> None:
    failed = types.CallToolResult(
        content=[types.TextContent(type="text", text="handled failure")], is_error=True
    )
    answer = await _call(driver, failed, output=Total)
    answer.assertError("handled failure")


async def test_a_complete_result_with_a_scalar_is_wrapped_in_the_2025_era(driver: Driver) -> None:
    complete = types.CallToolResult(
        content=[types.TextContent(type="text", text="9")], structured_content=9
    )
    answer = (await _call(driver, complete, output=int)).assertOk()
    answer.assertStructured(9 if driver.modern else {"result": 9})


# -- null structured content ------------------------------------------------------------------


async def test_null_structured_content_is_never_a_success_without_structured_content(
    driver: Driver,
) -> None:
    """A nullable output contract accepts ``None``, but 2026-07-28 cannot carry a null
    ``structuredContent`` (the SDK drops it, then clients reject the result of a tool with an
    output schema). It is a server-side failure there, and ``{"result": null}`` in 2025-11-25."""
    answer = await _call(driver, McpResponse.structured(None), output=int | None)
    if driver.modern:
        answer.assertError("Tool execution failed")
    else:
        answer.assertOk().assertStructured({"result": None})


# -- an instance of the output Schema is its structured content ------------------------------


class Other(Schema):
    other: str


async def test_an_instance_of_the_output_schema_is_structured_content(driver: Driver) -> None:
    result = _result((await _call(driver, Total(total=3), output=Total)).assertOk())
    assert result["structuredContent"] == {"total": 3}
    assert json.loads(result["content"][0]["text"]) == {"total": 3}
    assert result["isError"] is False


async def test_an_instance_of_another_schema_fails_the_output_contract(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    answer = await _call(driver, Other(other="x"), output=Total)
    answer.assertError("Tool execution failed")


async def test_a_schema_instance_without_an_output_contract_is_not_converted(
    driver: Driver, caplog: pytest.LogCaptureFixture
) -> None:
    answer = await _call(driver, Total(total=3))
    answer.assertError("Tool execution failed")
    assert "HandlerResultError" in caplog.text
