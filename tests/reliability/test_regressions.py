"""Regression tests for defects the reliability suite found (fixed in dddbbca):

- a stdlib value type (``uuid.UUID``, ``fractions.Fraction``) as a function-tool
  argument was taken for an autowired service;
- a discriminated union whose tag has a default was published with the tag
  optional, though the validator requires it;
- a strict contract rejected every JSON date, UUID and tuple (arguments were
  validated in Python mode);
- ``McpTestClient.send`` raised on JSON nested deeper than pydantic-core parses
  instead of answering ``-32700``.
"""

from __future__ import annotations

import datetime
import fractions
import json
import uuid
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from container import Container
from mcp_adapter import McpResponse, Server, Tool
from mcp_adapter.compiled.handlers import Source
from mcp_adapter.extensions import McpExtension, Platform, tool
from mcp_adapter.testing import McpTestClient
from schemas import Contract, Schema

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("kind", [uuid.UUID, fractions.Fraction])
def test_a_stdlib_value_type_is_an_argument_of_a_function_tool(kind: type) -> None:
    def method(self: object, value: kind) -> str:  # type: ignore[valid-type]
        return str(value)

    method.__annotations__["value"] = kind  # a local name a string annotation cannot reach

    extension = type("ValueExtension", (McpExtension,), {"method": tool("value")(method)})
    catalog = Platform([extension()]).compile(Container())
    compiled = catalog.tools["value"]
    assert "value" in compiled.modern.input_schema["properties"]
    assert all(slot.source is not Source.SERVICE for slot in compiled.handler.slots)


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    bark: str


class PetInput(Schema):
    pet: Cat | Dog = Field(discriminator="kind")


async def test_a_payload_the_published_schema_allows_is_accepted() -> None:
    contract = Contract.of(PetInput)
    schema_requires_tag = "kind" in contract.json_schema["$defs"]["Cat"].get("required", [])
    validator_accepts_without_tag = not contract.check({"pet": {"lives": 3}})[1]
    assert schema_requires_tag or validator_accepts_without_tag


class StrictInput(Schema):
    model_config = ConfigDict(strict=True, extra="forbid")
    when: datetime.date
    ref: uuid.UUID
    span: tuple[int, int]


class StrictTool(Tool[StrictInput]):
    name = "strict"

    async def handle(self, payload: StrictInput) -> McpResponse:
        return McpResponse.text(payload.when.isoformat())


class StrictServer(Server):
    tools = (StrictTool,)


async def test_a_strict_contract_accepts_json_values() -> None:
    payload = {"when": "2024-01-02", "ref": str(uuid.uuid4()), "span": [1, 2]}
    result = await McpTestClient(Container(), StrictServer).tool("strict", payload)
    result.assertOk().assertTextContains("2024-01-02")


async def test_the_test_client_answers_too_deep_json_with_a_parse_error() -> None:
    from tests.reliability.fuzz import nested
    from tests.reliability.servers import FuzzServer

    arguments = {"text": nested(300)}
    text = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": arguments},
        }
    )
    client = McpTestClient(Container(), FuzzServer, protocol="2025-11-25")
    result = await client.send(text)
    assert result.error is not None
    assert result.error["code"] == -32700
