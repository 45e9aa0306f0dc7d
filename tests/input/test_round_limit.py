"""The round limit holds for every way of asking: a handler that asks with
``McpResponse.elicit`` again and again (answers it never takes) is stopped after
``MAX_INPUT_ROUNDS`` rounds with the documented error, in both eras, as a resolver is.

On 2026-07-28 such a handler was asked for ever (still asking after 15 answers): its
``requestState`` carried no round count. On 2025-11-25 it ended in an incident
(``Tool execution failed``) instead of the tool error that says why.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import (
    Elicit,
    McpRequest,
    McpResponse,
    Prompt,
    Resolve,
    Resource,
    Server,
    Tool,
)
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import LEGACY

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}
LIMIT = f"in {MAX_INPUT_ROUNDS} rounds without an end"


class Confirm(Schema):
    ok: bool


class Log:
    def __init__(self) -> None:
        self.rounds = 0


class NagTool(Tool):
    """Asks again whatever the answer."""

    name = "nag"

    async def handle(self, log: Log, request: McpRequest) -> McpResponse:
        log.rounds += 1
        return McpResponse.elicit(f"Again ({log.rounds})?", Confirm, key="again")


async def first_question() -> Elicit[Confirm]:
    return Elicit("First?", Confirm)


class ResolvedNagTool(Tool):
    """A resolver asks once, then the handler asks again and again."""

    name = "resolved-nag"

    async def handle(
        self, log: Log, first: Annotated[Confirm, Resolve(first_question)]
    ) -> McpResponse:
        log.rounds += 1
        return McpResponse.elicit(f"Again ({log.rounds})?", Confirm, key="again")


async def fresh_question(log: Log) -> Elicit[Confirm]:
    return Elicit(f"Fresh ({log.rounds})?", Confirm)  # another question every round


class FreshNagTool(Tool):
    """Each round its resolver asks something new, then its handler asks again."""

    name = "fresh-nag"

    async def handle(
        self, log: Log, fresh: Annotated[Confirm, Resolve(fresh_question)]
    ) -> McpResponse:
        log.rounds += 1
        return McpResponse.elicit(f"Again ({log.rounds})?", Confirm, key="again")


class NagPrompt(Prompt):
    name = "nag"

    async def handle(self, log: Log) -> McpResponse:
        log.rounds += 1
        return McpResponse.elicit("Again?", Confirm, key="again")


class NagResource(Resource):
    name = "nag"
    uri = "nag://again"

    async def handle(self, log: Log) -> McpResponse:
        log.rounds += 1
        return McpResponse.elicit("Again?", Confirm, key="again")


class Nagging(Server):
    tools = (NagTool, ResolvedNagTool, FreshNagTool)
    prompts = (NagPrompt,)
    resources = (NagResource,)


YES = {"action": "accept", "content": {"ok": True}}
CALLS = {
    "tool": ("tools/call", {"name": "nag", "arguments": {}}),
    "resolved tool": ("tools/call", {"name": "resolved-nag", "arguments": {}}),
    "fresh tool": ("tools/call", {"name": "fresh-nag", "arguments": {}}),
    "prompt": ("prompts/get", {"name": "nag"}),
    "resource": ("resources/read", {"uri": "nag://again"}),
}


def nagging(**options: Any) -> tuple[McpTestClient, Log]:
    container = Container()
    log = Log()
    container.instance(Log, log)
    return McpTestClient(container, Nagging, capabilities=FORM, **options), log


@pytest.mark.parametrize("which", list(CALLS))
async def test_2026_a_handler_asking_for_ever_is_stopped_after_the_limit(which: str) -> None:
    client, _ = nagging()
    method, params = CALLS[which]
    result = await client.request(method, params)
    asked = 0
    while result.error is None and result.result.get("resultType") == "input_required":
        asked += 1
        assert asked <= MAX_INPUT_ROUNDS, "still asking past the limit"
        answers = dict.fromkeys(result.result["inputRequests"], YES)
        result = await client.request(
            method,
            {**params, "inputResponses": answers, "requestState": result.result["requestState"]},
        )
    assert asked == MAX_INPUT_ROUNDS
    result.assertError(LIMIT)
    if which in ("prompt", "resource"):
        assert result.error is not None
        assert result.error["code"] == types.INTERNAL_ERROR


@pytest.mark.parametrize("which", ["tool", "resolved tool", "fresh tool"])
async def test_2025_a_handler_asking_for_ever_is_stopped_with_the_documented_error(
    which: str,
) -> None:
    asked: list[str] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return YES

    client, _ = nagging(protocol=LEGACY, on_server_request=answer)
    method, params = CALLS[which]
    result = await client.request(method, params)
    result.assertError(LIMIT)
    assert result.error is None  # a tool error, not an incident
    assert len(asked) == MAX_INPUT_ROUNDS  # a resolver's question sent at once counts too
    if which == "resolved tool":
        assert asked[0] == "First?"


@pytest.mark.parametrize("which", ["prompt", "resource"])
async def test_2025_a_prompt_or_resource_asking_for_ever_gets_all_its_rounds(which: str) -> None:
    """The limit is the same number of questions as for a tool, then the documented error
    (not an incident after one question fewer)."""
    asked: list[str] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return YES

    client, _ = nagging(protocol=LEGACY, on_server_request=answer)
    method, params = CALLS[which]
    result = await client.request(method, params)
    result.assertError(LIMIT)
    assert len(asked) == MAX_INPUT_ROUNDS
