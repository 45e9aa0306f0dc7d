"""A resolver's form answer is checked against the schema that was sent, strictly, in both
eras: ``{"ok": "yes"}`` and ``{"ok": 1}`` do not confirm a boolean question (pydantic's lax
mode took them), ``{"count": "3"}`` is no integer; such an answer is asked again, and the
handler runs once, with a valid one."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from mcp import types

from container import Container
from mcp_adapter import Elicit, McpResponse, Resolve, Server, Tool
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}


class Confirm(Schema):
    ok: bool


class Count(Schema):
    count: int


class Tags(Schema):
    tags: list[Literal["red", "blue"]]


class Bank:
    def __init__(self) -> None:
        self.moves: list[str] = []


async def confirm() -> Elicit[Confirm]:
    return Elicit("Move the money?", Confirm)


def how_many() -> Elicit[Count]:
    return Elicit("How many?", Count)


class MoveTool(Tool):
    name = "move"

    async def handle(self, bank: Bank, answer: Annotated[Confirm, Resolve(confirm)]) -> McpResponse:
        bank.moves.append(f"ok={answer.ok!r}")
        return McpResponse.text(f"ok={answer.ok!r}")


class CountTool(Tool):
    """Everything sync: a thread-bound call, which asks once its round has ended."""

    name = "count"

    def handle(self, bank: Bank, answer: Annotated[Count, Resolve(how_many)]) -> McpResponse:
        bank.moves.append(f"count={answer.count!r}")
        return McpResponse.text(f"count={answer.count!r}")


def pick() -> Elicit[Tags]:
    return Elicit("Which tags?", Tags)


class TagTool(Tool):
    name = "tag"

    async def handle(self, bank: Bank, answer: Annotated[Tags, Resolve(pick)]) -> McpResponse:
        bank.moves.append(f"tags={answer.tags!r}")
        return McpResponse.text(f"tags={answer.tags!r}")


class BankServer(Server):
    tools = (MoveTool, CountTool, TagTool)


LOOSE = {
    "move": [{"ok": "yes"}, {"ok": 1}, {"ok": "true"}, {"ok": None}],
    "count": [{"count": "3"}, {"count": 3.5}, {"count": True}, {"count": None}],
    "tag": [{"tags": "red"}, {"tags": ["red", "green"]}],
}
VALID = {
    "move": ({"ok": True}, "ok=True"),
    "count": ({"count": 3}, "count=3"),
    "tag": ({"tags": ["red", "blue"]}, "tags=['red', 'blue']"),
}


def bank() -> tuple[Container, Bank]:
    container = Container()
    ledger = Bank()
    container.instance(Bank, ledger)
    return container, ledger


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("tool", list(VALID))
async def test_a_loose_answer_is_asked_again_and_only_a_valid_one_runs_the_handler(
    mode: str, tool: str
) -> None:
    container, ledger = bank()
    replies = [*LOOSE[tool], VALID[tool][0]]
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content=replies[len(asked) - 1])

    async with sdk_client(BankServer, container, mode, elicitation_callback=answer) as sdk:
        result = await sdk.call_tool(tool, {})
    assert not result.is_error, result
    assert result.content == [types.TextContent(type="text", text=VALID[tool][1])]
    assert len(asked) == len(replies)  # each loose answer was asked again
    assert ledger.moves == [VALID[tool][1]]


@pytest.mark.parametrize("loose", LOOSE["move"])
async def test_2026_by_hand_a_loose_answer_gets_the_question_again(loose: dict[str, Any]) -> None:
    container, ledger = bank()
    client = McpTestClient(container, BankServer, capabilities=FORM)
    first = (await client.tool("move")).result
    (key,) = first["inputRequests"]
    retry = await client.request(
        "tools/call",
        {
            "name": "move",
            "arguments": {},
            "inputResponses": {key: {"action": "accept", "content": loose}},
            "requestState": first["requestState"],
        },
    )
    assert retry.result["resultType"] == "input_required"
    assert list(retry.result["inputRequests"]) == [key]
    assert ledger.moves == []
