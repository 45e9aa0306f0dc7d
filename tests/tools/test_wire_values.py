"""Bounded ``Invalid tool arguments`` answers, and values JSON cannot carry.

- A summary lists each failing path once, at most ``MAX_LISTED`` of them and then one
  ``and N more`` entry, in text and in ``_meta.errors`` alike; unknown keys of an object
  are one entry; a failure with very many errors is counted, not read error by error.
- ``NaN``/``Infinity`` in arguments (a raw literal in the JSON body) and a lone surrogate
  are invalid arguments; ``inf``/``nan`` in structured output fails the call, with or
  without an output contract, never a success carrying ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError, model_validator

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from mcp_adapter.testing import McpTestClient
from schemas import Contract, Schema, summarize
from schemas.errors import MAX_DETAILED, MAX_LISTED, bounded
from tests.tools.drivers import DRIVERS, Driver

pytestmark = pytest.mark.anyio

MANY = 100_000


class Item(Schema):
    n: int


class BulkInput(Schema):
    items: list[Item] = Field(default_factory=list)
    values: list[int] = Field(default_factory=list)
    ratio: float = 1.0
    label: str = ""


class Pair(Schema):
    low: int = 0
    high: int = 0

    @model_validator(mode="after")
    def _ordered(self) -> Pair:
        if self.low > self.high:
            raise ValueError("low above high")
        return self


class Reading(Schema):
    value: float


handled: list[str] = []


class BulkTool(Tool[BulkInput]):
    name = "bulk"

    async def handle(self, payload: BulkInput) -> McpResponse:
        handled.append("bulk")
        return McpResponse.text("ok")


class PairTool(Tool[Pair]):
    name = "pair"

    async def handle(self, payload: Pair) -> McpResponse:
        return McpResponse.text("ok")


class FreeOutput(Tool[BulkInput]):
    """No output contract: the structured value is whatever the handler gave."""

    name = "free"

    async def handle(self, payload: BulkInput) -> McpResponse:
        return McpResponse.structured({"value": payload.ratio * math.inf, "ok": True})


class TypedOutput(Tool[Schema, Reading]):
    name = "typed"

    async def handle(self) -> McpResponse:
        return McpResponse.structured(Reading(value=math.nan))


class ScalarOutput(Tool[Schema, float]):
    """A non-object output: wrapped as ``{"result": ...}`` in 2025-11-25."""

    name = "scalar"

    async def handle(self) -> McpResponse:
        return McpResponse.structured(-math.inf)


class NestedFree(Tool):
    name = "nested"

    async def handle(self) -> McpResponse:
        return McpResponse.structured([{"deep": [1.0, math.nan]}])


class ValuesServer(Server):
    tools = (BulkTool, PairTool, FreeOutput, TypedOutput, ScalarOutput, NestedFree)


@pytest.fixture(autouse=True)
def _forget() -> None:
    handled.clear()


def _lines(text: str) -> list[str]:
    head, *lines = text.splitlines()
    assert head == "Invalid tool arguments"
    return lines


# -- bounded summaries ----------------------------------------------------------------------


async def test_many_bad_items_are_a_bounded_answer(driver: Driver) -> None:
    arguments = {"values": ["x"] * (MAX_LISTED + 15)}
    result = await driver.call(Container(), ValuesServer, "bulk", arguments)
    result.assertError("Invalid tool arguments")
    lines = _lines(result.texts[0])
    assert len(lines) == MAX_LISTED + 1
    assert lines[:2] == [
        "- values.0: Input should be a valid integer, unable to parse string as an integer",
        "- values.1: Input should be a valid integer, unable to parse string as an integer",
    ]
    assert lines[-1] == "- arguments: and 15 more errors"
    assert result.result is not None
    errors = result.result["_meta"]["errors"]
    assert len(errors) == MAX_LISTED + 1
    assert errors[-1] == {"path": "", "message": "and 15 more errors", "type": "too_many_errors"}
    assert handled == []


async def test_a_huge_bad_body_is_counted_not_listed(driver: Driver) -> None:
    arguments = {"items": [{"n": "x"}] * MANY}
    result = await driver.call(Container(), ValuesServer, "bulk", arguments)
    assert _lines(result.texts[0]) == [f"- arguments: {MANY} errors, too many to list"]
    assert result.result is not None
    assert result.result["_meta"]["errors"] == [
        {"path": "", "message": f"{MANY} errors, too many to list", "type": "too_many_errors"}
    ]


async def test_unknown_keys_are_one_summarised_entry(driver: Driver) -> None:
    arguments: dict[str, Any] = {f"key{i}": i for i in range(50)}
    arguments["ratio"] = "fast"
    result = await driver.call(Container(), ValuesServer, "bulk", arguments)
    assert _lines(result.texts[0]) == [
        "- ratio: Input should be a valid number, unable to parse string as a number",
        "- arguments: 50 unknown keys, not permitted: key0, key1, key2, key3, key4 and 45 more",
    ]
    assert result.result is not None
    assert [e["type"] for e in result.result["_meta"]["errors"]] == [
        "float_parsing",
        "extra_forbidden",
    ]


async def test_one_unknown_key_keeps_its_own_line(driver: Driver) -> None:
    result = await driver.call(Container(), ValuesServer, "bulk", {"admin": True})
    assert _lines(result.texts[0]) == ["- admin: Extra inputs are not permitted"]


async def test_an_error_on_the_whole_arguments_names_them(driver: Driver) -> None:
    result = await driver.call(Container(), ValuesServer, "pair", {"low": 2, "high": 1})
    assert _lines(result.texts[0]) == ["- arguments: Invalid value"]
    assert result.result is not None
    assert result.result["_meta"]["errors"] == [
        {"path": "", "message": "Invalid value", "type": "value_error"}
    ]


def test_each_path_is_listed_once_and_long_paths_are_clipped() -> None:
    long_key = "k" * 5_000
    summary = bounded(
        [
            (("a",), "int_parsing", "first"),
            (("a",), "int_parsing", "again"),
            ((long_key,), "missing", "Field required"),
        ]
    )
    assert [(e.path, e.message) for e in summary[:1]] == [("a", "first")]
    assert len(summary) == 2
    assert len(summary[1].path) <= 200


def test_summarize_does_not_read_every_error_of_a_huge_failure() -> None:
    """Past ``MAX_DETAILED`` errors the summary is a count: pydantic's ``errors()`` (each
    error rendered as a dict) is not called at all."""

    adapter = TypeAdapter(list[int])
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(["x"] * (MAX_DETAILED + 1))
    error = caught.value
    assert summarize(error)[0].message == f"{MAX_DETAILED + 1} errors, too many to list"
    with pytest.raises(ValidationError) as few:
        adapter.validate_python(["x"] * MAX_DETAILED)
    assert len(summarize(few.value)) == MAX_LISTED + 1


# -- non-finite numbers and lone surrogates in arguments ---------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_non_finite_literals_on_the_json_wire_are_invalid_arguments(
    era: str, literal: str
) -> None:
    client = McpTestClient(Container(), ValuesServer, protocol=era)  # type: ignore[arg-type]
    params = client._with_envelope({"name": "bulk", "arguments": {"ratio": 0}})
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    body = body.replace('"ratio": 0', f'"ratio": {literal}')
    assert f'"ratio": {literal}' in body
    result = await client.send(body)
    result.assertError("Invalid tool arguments")
    assert _lines(result.texts[0]) == ["- ratio: Input should be a finite number"]
    assert handled == []


async def test_non_finite_numbers_anywhere_in_arguments_are_invalid(driver: Driver) -> None:
    """(The SDK's in-process 2026-07-28 dispatch turns ``inf`` into ``null`` itself before
    the adapter sees it: still invalid for an ``int``, with pydantic's message for null.)"""
    arguments = {"values": [1, math.inf], "label": "NaN is fine in a string"}
    result = await driver.call(Container(), ValuesServer, "bulk", arguments)
    (line,) = _lines(result.texts[0])
    assert line.startswith("- values.1: Input should be a ")
    if driver.via == "test-client":
        assert line == "- values.1: Input should be a finite number"
    assert handled == []


async def test_nan_inside_a_string_is_just_text(driver: Driver) -> None:
    result = await driver.call(Container(), ValuesServer, "bulk", {"label": "NaN, Infinity"})
    result.assertOk()
    assert handled == ["bulk"]


@pytest.mark.parametrize(
    "arguments",
    [{"label": "a\ud800b"}, {"\udfffkey": 1}, {"items": [{"n": 1}, {"n": "\ud800"}]}],
    ids=["value", "key", "nested"],
)
@pytest.mark.parametrize(
    "driver", [d for d in DRIVERS if d.via == "sdk-client"], ids=lambda d: d.id
)
async def test_a_lone_surrogate_is_invalid_arguments(
    driver: Driver, arguments: dict[str, Any]
) -> None:
    """In process the SDK's client hands the string over as it is (the JSON wire cannot
    carry it: see the next test, -32700)."""
    result = await driver.call(Container(), ValuesServer, "bulk", arguments)
    result.assertError("Invalid tool arguments")
    assert "incident" not in result.texts[0]
    if "label" in arguments or "items" in arguments:  # (the SDK itself replaces one in a key)
        assert "lone surrogate" in result.texts[0]
    assert handled == []


async def test_a_lone_surrogate_in_json_text_is_a_parse_error(era: str) -> None:
    client = McpTestClient(Container(), ValuesServer, protocol=era)  # type: ignore[arg-type]
    result = await client.tool("bulk", {"label": "\ud800"})
    assert result.error is not None
    assert result.error["code"] == -32700


def test_check_wire_reports_what_json_cannot_carry() -> None:
    contract = Contract.of(BulkInput)
    assert contract.check_wire({"ratio": math.nan})[1][0].type == "finite_number"
    assert contract.check_wire({"label": "\ud800"})[1][0].type == "string_unicode"
    assert contract.check_wire({"label": "NaN"})[1] == ()


# -- non-finite numbers in structured output ----------------------------------------------


@pytest.mark.parametrize("name", ["free", "typed", "scalar", "nested"])
async def test_non_finite_structured_output_fails_the_call(driver: Driver, name: str) -> None:
    result = await driver.call(Container(), ValuesServer, name, {})
    result.assertError("Tool execution failed")
    assert result.result is not None
    assert "structuredContent" not in result.result
    assert "incident" in result.result["_meta"]
