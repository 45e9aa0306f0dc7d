"""JSON Schema 2020-12 reaches clients unchanged (SEP-2106): composition (``allOf``, ``anyOf``,
``oneOf``, ``not``), conditionals (``if``/``then``/``else``), ``$anchor`` and ``$defs``
references in a contract are published as the contract says, in ``inputSchema`` and
``outputSchema``, in both eras, and still pass the published-schema check."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import ConfigDict, Field, WithJsonSchema

from container import Container
from mcp_adapter import McpResponse, Server, Tool, compile_server
from mcp_adapter.compile.published import published_schema_problems, schema_problems
from mcp_adapter.testing import McpTestClient
from schemas import Contract, Schema

pytestmark = pytest.mark.anyio

DIALECT = "https://json-schema.org/draft/2020-12/schema"


class Address(Schema):
    model_config = ConfigDict(json_schema_extra={"$anchor": "addressDef"})

    street: str | None = None
    city: str | None = None


CONTACT_RULES: dict[str, Any] = {
    "$schema": DIALECT,
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"method": {"const": "phone"}}, "required": ["method"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}

POSTCODE = {
    "type": "string",
    "oneOf": [{"pattern": "^[0-9]{5}$"}, {"pattern": "^[A-Z]{2}[0-9]{3}$"}],
    "not": {"const": "00000"},
}


class Contact(Schema):
    model_config = ConfigDict(extra="forbid", json_schema_extra=CONTACT_RULES)

    name: str | None = None
    home: Address | None = Field(default=None, alias="address")
    method: Literal["phone", "email"] | None = None
    phone: str | None = None
    email: str | None = None
    postcode: Annotated[str | None, WithJsonSchema(POSTCODE)] = None
    """A custom schema for one field (pydantic's ``WithJsonSchema``)."""


class Receipt(Schema):
    model_config = ConfigDict(
        json_schema_extra={
            "$schema": DIALECT,
            "oneOf": [{"required": ["email"]}, {"required": ["phone"]}],
        }
    )

    email: str | None = None
    phone: str | None = None
    to: Address | None = None


class SaveContactTool(Tool[Contact, Receipt]):
    name = "save-contact"

    async def handle(self, payload: Contact) -> McpResponse:
        return McpResponse.structured(Receipt(email=payload.email, phone=payload.phone))


class Contacts(Server):
    tools = (SaveContactTool,)


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_the_contracts_schemas_are_published_unchanged(era: str) -> None:
    client = McpTestClient(Container(), Contacts, protocol=era)  # type: ignore[arg-type]
    (entry,) = (await client.list_tools()).assertOk().result["tools"]
    assert entry["inputSchema"] == json.loads(json.dumps(Contract.of(Contact).json_schema))
    assert entry["outputSchema"] == json.loads(json.dumps(Contract.of(Receipt).json_schema))
    published = entry["inputSchema"]
    for keyword, value in CONTACT_RULES.items():
        assert published[keyword] == value
    assert published["$defs"]["Address"]["$anchor"] == "addressDef"
    assert published["properties"]["address"]["anyOf"][0] == {"$ref": "#/$defs/Address"}
    postcode = published["properties"]["postcode"]  # pydantic adds its title and default
    assert {keyword: postcode[keyword] for keyword in POSTCODE} == POSTCODE
    assert entry["outputSchema"]["oneOf"] == [{"required": ["email"]}, {"required": ["phone"]}]


async def test_they_pass_the_published_schema_check() -> None:
    catalog = compile_server(Contacts, Container())
    assert published_schema_problems(catalog) == []


def test_the_check_still_refuses_a_reference_that_resolves_nowhere() -> None:
    broken = dict(Contract.of(Contact).json_schema)
    broken["properties"] = {**broken["properties"], "lost": {"$ref": "#nowhere"}}
    assert schema_problems({**broken, "properties": {"home": {"$ref": "#addressDef"}}}) == []
    assert schema_problems(broken) == ["$ref '#nowhere' does not resolve inside the schema"]


async def test_a_call_is_validated_by_the_contract_and_answered() -> None:
    client = McpTestClient(Container(), Contacts)
    result = await client.tool("save-contact", {"name": "Ada", "email": "ada@example.com"})
    result.assertOk().assertStructured({"email": "ada@example.com", "phone": None, "to": None})
