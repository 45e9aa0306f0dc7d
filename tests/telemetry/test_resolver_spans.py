"""Resolvers (``Resolve(fn)``) have spans of their own, not the handler's: named
``mcp_adapter.resolver``, with the resolver's key and whether it asked, through the
real client in both eras."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from container import Container
from mcp_adapter import Elicit, McpResponse, Resolve, Server, Tool
from mcp_adapter.dispatch.telemetry import (
    ASKED,
    HANDLER,
    RESOLVER,
    RESOLVER_KEY,
    STAGES,
    VALIDATION,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.telemetry.conftest import Recorded, names, parent_of

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}


class Name(Schema):
    name: str


async def greeting() -> str:
    return "Hello"


async def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


class GreetTool(Tool):
    name = "greet"

    async def handle(
        self,
        word: Annotated[str, Resolve(greeting)],
        who: Annotated[Name, Resolve(ask_name)],
    ) -> McpResponse:
        return McpResponse.text(f"{word} {who.name}")


class Greeter(Server):
    tools = (GreetTool,)


KEYS = {f"{__name__}:greeting": False, f"{__name__}:ask_name": True}


def resolver_spans(otel: Recorded) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for span in otel.named(RESOLVER):
        attributes = dict(span.attributes or {})
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "greet"
        found[attributes[RESOLVER_KEY]] = attributes[ASKED]
    return found


async def test_2026_a_round_that_asks_has_resolver_spans_and_no_handler_span(
    otel: Recorded,
) -> None:
    client = McpTestClient(Container(), Greeter, capabilities=FORM)
    first = (await client.tool("greet")).result
    assert first is not None
    assert first["resultType"] == "input_required"
    assert resolver_spans(otel) == KEYS
    assert otel.named(HANDLER) == []
    server = otel.server_span()
    assert all(parent_of(s) == server.context.span_id for s in otel.named(RESOLVER))


async def test_2025_each_resolver_has_its_span_and_the_handler_one(otel: Recorded) -> None:
    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    client = McpTestClient(
        Container(),
        Greeter,
        protocol="2025-11-25",
        capabilities=FORM,
        on_server_request=answer,
    )
    assert (await client.tool("greet")).assertOk().texts == ["Hello Ada"]
    assert resolver_spans(otel) == KEYS
    assert len(otel.named(HANDLER)) == 1  # handle() only, not the resolvers
    stages = names(otel.stages())
    assert stages.index(VALIDATION) < stages.index(RESOLVER) < stages.index(HANDLER)
    assert RESOLVER in STAGES
