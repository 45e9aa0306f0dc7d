"""Errors: invalid arguments, handler crashes, unknown tools and malformed JSON-RPC.

Tool failures are results with ``isError: true``; protocol problems are JSON-RPC
errors. Neither ever carries a rejected value, a traceback or exception text.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Annotated, Literal

import pytest
from mcp import types
from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.tools.drivers import MODERN, Driver

pytestmark = pytest.mark.anyio

SECRET = "sk-live-SECRET-0xDEADBEEF"
"""A value a client must never see echoed back."""


class Line(Schema):
    sku: str
    qty: int


class Kind(Schema):
    kind: Literal["a", "b"]


class OrderInput(Schema):
    customer: Annotated[str, Field(pattern=r"^[a-z]+$")] = "ada"
    code: Annotated[str, Field(max_length=4)] = "x"
    count: int = 1
    mode: Literal["fast", "slow"] = "fast"
    lines: list[Line] = Field(default_factory=list)
    note: str = "ok"

    @field_validator("note")
    @classmethod
    def _note(cls, value: str) -> str:
        if value != "ok":
            raise ValueError(f"note {value!r} is not ok")
        return value


calls: list[str] = []


class OrderTool(Tool[OrderInput]):
    name = "order"

    async def handle(self, payload: OrderInput) -> McpResponse:
        calls.append("handled")
        return McpResponse.text("ordered")


class CrashTool(Tool):
    name = "crash"

    async def handle(self) -> McpResponse:
        raise RuntimeError(f"database password is {SECRET}")


class SyncCrashTool(Tool):
    name = "sync-crash"

    def handle(self) -> McpResponse:
        raise KeyError(SECRET)


class Flaky:
    def __init__(self) -> None:
        raise ConnectionError(f"cannot reach {SECRET}")


class NeedsFlakyTool(Tool):
    name = "needs-flaky"

    def __init__(self, flaky: Flaky) -> None:
        self.flaky = flaky

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class ErrorsServer(Server):
    tools = (OrderTool, CrashTool, SyncCrashTool, NeedsFlakyTool)


@pytest.fixture(autouse=True)
def _forget_calls() -> None:
    calls.clear()


# -- invalid arguments ----------------------------------------------------------------------


BAD_ARGUMENTS = [
    pytest.param({"count": SECRET}, ["count"], id="wrong-type"),
    pytest.param({"customer": SECRET}, ["customer"], id="pattern"),
    pytest.param({"code": SECRET}, ["code"], id="max-length"),
    pytest.param({"mode": SECRET}, ["mode"], id="literal"),
    pytest.param({"note": SECRET}, ["note"], id="custom-validator"),
    pytest.param({"unknown": SECRET}, ["unknown"], id="extra-key"),
    pytest.param({"lines": [{"sku": "a", "qty": SECRET}]}, ["lines.0.qty"], id="nested"),
    pytest.param(
        {"count": SECRET, "lines": [{"qty": 1}], "mode": SECRET},
        ["count", "lines.0.sku", "mode"],
        id="several",
    ),
]


@pytest.mark.parametrize(("arguments", "paths"), BAD_ARGUMENTS)
async def test_invalid_arguments_name_the_fields_and_never_the_values(
    driver: Driver, arguments: dict[str, object], paths: list[str]
) -> None:
    result = await driver.call(Container(), ErrorsServer, "order", arguments)
    assert result.error is None, "invalid arguments are a tool result, not a protocol error"
    result.assertError("Invalid tool arguments")
    (text,) = result.texts
    assert text.startswith("Invalid tool arguments")
    for path in paths:
        assert re.search(rf"^- {re.escape(path)}: ", text, re.MULTILINE), text
    assert SECRET not in json.dumps(result.message)
    assert "Traceback" not in text
    assert calls == [], "handle() must not run on invalid arguments"


async def test_invalid_arguments_carry_machine_readable_paths_in_meta(driver: Driver) -> None:
    result = await driver.call(Container(), ErrorsServer, "order", {"count": SECRET, "x": 1})
    assert result.result is not None
    errors = result.result["_meta"]["errors"]
    assert [(e["path"], e["type"]) for e in errors] == [
        ("count", "int_parsing"),
        ("x", "extra_forbidden"),
    ]


async def test_valid_arguments_reach_the_handler(driver: Driver) -> None:
    arguments = {"lines": [{"sku": "a", "qty": 2}]}
    result = await driver.call(Container(), ErrorsServer, "order", arguments)
    result.assertOk().assertTextContains("ordered")
    assert calls == ["handled"]


async def test_arguments_that_are_not_an_object_are_a_protocol_error(driver: Driver) -> None:
    """``arguments`` must be an object: the SDK rejects anything else before the tool."""
    client = McpTestClient(Container(), ErrorsServer, protocol=driver.era)  # type: ignore[arg-type]
    result = await client.request("tools/call", {"name": "order", "arguments": [SECRET]})
    assert result.error is not None
    assert result.error["code"] == types.INVALID_PARAMS
    assert SECRET not in json.dumps(result.message)
    assert calls == []


class Cat(Schema):
    kind: Literal["cat"]


class Dog(Schema):
    kind: Literal["dog"]


class PetInput(Schema):
    pet: Annotated[Cat | Dog, Field(discriminator="kind")]


class CustomInput(Schema):
    token: str

    @field_validator("token")
    @classmethod
    def _token(cls, value: str) -> str:
        raise PydanticCustomError("bad_token", "token {token} is revoked", {"token": value})


class PetTool(Tool[PetInput]):
    name = "pet"

    async def handle(self, payload: PetInput) -> McpResponse:
        return McpResponse.text("pet")


class CustomTool(Tool[CustomInput]):
    name = "custom"

    async def handle(self, payload: CustomInput) -> McpResponse:
        return McpResponse.text("custom")


class LeakyServer(Server):
    tools = (PetTool, CustomTool)


async def test_a_rejected_discriminator_tag_is_not_echoed(era: str) -> None:
    client = McpTestClient(Container(), LeakyServer, protocol=era)  # type: ignore[arg-type]
    result = await client.tool("pet", {"pet": {"kind": SECRET}})
    result.assertError("Invalid tool arguments").assertTextContains("pet")
    assert SECRET not in json.dumps(result.message)


async def test_a_custom_error_message_does_not_echo_the_value(era: str) -> None:
    client = McpTestClient(Container(), LeakyServer, protocol=era)  # type: ignore[arg-type]
    result = await client.tool("custom", {"token": SECRET})
    result.assertError("Invalid tool arguments").assertTextContains("token")
    assert SECRET not in json.dumps(result.message)


# -- unexpected failures --------------------------------------------------------------------

INCIDENT = re.compile(r"^Tool execution failed \(incident ([0-9a-f]+)\)$")


@pytest.mark.parametrize(
    ("tool", "exception"),
    [
        ("crash", RuntimeError),
        ("sync-crash", KeyError),
        ("needs-flaky", ConnectionError),
    ],
    ids=["async-handler", "sync-handler", "constructor-service"],
)
async def test_a_crash_is_a_safe_result_with_an_incident_logged_with_its_traceback(
    driver: Driver,
    caplog: pytest.LogCaptureFixture,
    tool: str,
    exception: type[BaseException],
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_adapter")
    result = await driver.call(Container(), ErrorsServer, tool)
    assert result.error is None
    result.assertError("Tool execution failed")
    (text,) = result.texts
    match = INCIDENT.match(text)
    assert match is not None, text
    incident = match.group(1)
    assert result.result is not None
    assert result.result["_meta"]["incident"] == incident
    wire = json.dumps(result.message)
    for leaked in (SECRET, "Traceback", exception.__name__, "handlers.py"):
        assert leaked not in wire
    logged = [record for record in caplog.records if incident in record.getMessage()]
    assert len(logged) == 1
    (record,) = logged
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert record.exc_info[0] is exception
    assert SECRET in caplog.text, "the server-side log keeps the whole story"
    assert "Traceback (most recent call last)" in caplog.text


async def test_every_crash_gets_its_own_incident(caplog: pytest.LogCaptureFixture) -> None:
    client = McpTestClient(Container(), ErrorsServer)
    first = (await client.tool("crash")).texts[0]
    second = (await client.tool("crash")).texts[0]
    assert INCIDENT.match(first)
    assert INCIDENT.match(second)
    assert first != second


# -- protocol errors ------------------------------------------------------------------------


async def test_an_unknown_tool_is_a_protocol_error(driver: Driver) -> None:
    result = await driver.call(Container(), ErrorsServer, "no-such-tool", {})
    assert "result" not in result.message
    assert result.error is not None
    assert result.error["code"] == types.INVALID_PARAMS == -32602
    assert "no-such-tool" in result.error["message"]
    result.assertError("Unknown tool")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        pytest.param("{not json", types.PARSE_ERROR, id="not-json"),
        pytest.param("[]", types.INVALID_REQUEST, id="empty-batch"),
        pytest.param('{"jsonrpc": "2.0", "id": 1}', types.INVALID_REQUEST, id="no-method"),
        pytest.param(
            '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
            types.INVALID_REQUEST,
            id="wrong-version",
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "id": 1, "method": 42}', types.INVALID_REQUEST, id="bad-method"
        ),
        pytest.param(
            '{"jsonrpc": "2.0", "id": 1, "result": {}}', types.INVALID_REQUEST, id="a-response"
        ),
    ],
)
async def test_an_invalid_envelope_is_a_protocol_error(era: str, text: str, code: int) -> None:
    client = McpTestClient(Container(), ErrorsServer, protocol=era)  # type: ignore[arg-type]
    result = await client.send(text)
    assert "result" not in result.message
    assert result.error is not None
    assert result.error["code"] == code
    assert result.message["id"] is None
    result.assertError()


async def test_a_notification_has_no_response_to_wait_for() -> None:
    client = McpTestClient(Container(), ErrorsServer)
    with pytest.raises(ValueError, match="notification"):
        await client.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')


@pytest.mark.parametrize(
    ("params", "code"),
    [
        pytest.param({}, types.INVALID_PARAMS, id="no-name"),
        pytest.param({"name": 5}, types.INVALID_PARAMS, id="name-not-a-string"),
    ],
)
async def test_malformed_call_params_are_a_protocol_error(
    era: str, params: dict[str, object], code: int
) -> None:
    client = McpTestClient(Container(), ErrorsServer, protocol=era)  # type: ignore[arg-type]
    result = await client.request("tools/call", params)
    assert result.error is not None
    assert result.error["code"] == code


async def test_an_unknown_method_is_a_protocol_error(era: str) -> None:
    client = McpTestClient(Container(), ErrorsServer, protocol=era)  # type: ignore[arg-type]
    result = await client.request("tools/frobnicate", {})
    assert result.error is not None
    assert result.error["code"] == types.METHOD_NOT_FOUND


async def test_a_raw_request_sent_as_text_is_served(era: str) -> None:
    """``send()`` accepts any request text; the envelope fields of the era are the caller's."""
    client = McpTestClient(Container(), ErrorsServer, protocol=era)  # type: ignore[arg-type]
    params: dict[str, object] = {"name": "crash"}
    if era == MODERN:
        params["_meta"] = {
            types.PROTOCOL_VERSION_META_KEY: MODERN,
            types.CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
            types.CLIENT_CAPABILITIES_META_KEY: {},
        }
    body = {"jsonrpc": "2.0", "id": "abc", "method": "tools/call", "params": params}
    result = await client.send(json.dumps(body))
    assert result.message["id"] == "abc"
    result.assertError("Tool execution failed")
