"""A question's key on the wire is the name of the parameter its resolver fills, never the
server's module paths (``module:qualname``): inline calls in both eras, a task's
``tasks/get`` and ``tasks/update``. Keys stay unique within a call (``#1`` after a name
another resolver of the component has already), and an answer counts only for the
question its key was asked with."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import (
    Elicit,
    McpResponse,
    Prompt,
    PromptArgument,
    Resolve,
    Resource,
    Server,
    Tool,
    compile_server,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import SDK_MODES, sdk_client
from tests.tasks.asking import AskingServer, Runs, accept, asking

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}


class Confirm(Schema):
    ok: bool


class Pin(Schema):
    pin: str


class Seen:
    def __init__(self) -> None:
        self.calls: list[str] = []


async def confirm_move() -> Elicit[Confirm]:
    return Elicit("Move?", Confirm)


async def ask_pin() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin)


async def confirm_allowed() -> Elicit[Confirm]:
    return Elicit("Allowed?", Confirm)


class MoveTool(Tool):
    """Two resolvers, one of them taken by ``authorize`` under the handler's other name."""

    name = "move"

    async def authorize(self, confirm: Annotated[Confirm, Resolve(confirm_allowed)]) -> bool:
        return confirm.ok

    async def handle(
        self,
        seen: Seen,
        confirm: Annotated[Confirm, Resolve(confirm_move)],
        pin: Annotated[Pin, Resolve(ask_pin)],
    ) -> McpResponse:
        seen.calls.append(f"move ok={confirm.ok} pin={pin.pin}")
        return McpResponse.text(f"ok={confirm.ok} pin={pin.pin}")


async def ask_topic_ok(topic: str) -> Elicit[Confirm]:
    return Elicit(f"Write about {topic}?", Confirm)


class WritePrompt(Prompt):
    name = "write"
    arguments = (PromptArgument(name="topic", required=True),)

    async def handle(
        self, topic: str, sure: Annotated[Confirm, Resolve(ask_topic_ok)]
    ) -> McpResponse:
        return McpResponse.text(f"about {topic}")


class SecretResource(Resource):
    name = "secret"
    uri_template = "secret://{id}"

    async def handle(self, id: str, pin: Annotated[Pin, Resolve(ask_pin)]) -> McpResponse:
        return McpResponse.text(f"secret {id}")


class Desk(Server):
    tools = (MoveTool,)
    prompts = (WritePrompt,)
    resources = (SecretResource,)


def desk() -> tuple[McpTestClient, Seen]:
    container = Container()
    seen = Seen()
    container.instance(Seen, seen)
    return McpTestClient(container, Desk, capabilities=FORM), seen


def test_keys_are_parameter_names_unique_within_a_component() -> None:
    tool = compile_server(Desk, Container()).tools["move"]
    keys = {resolver.label: resolver.key for resolver in tool.inputs}
    # the handler is planned first: its parameter keeps the plain name
    assert keys == {"confirm_move": "confirm", "confirm_allowed": "confirm#1", "ask_pin": "pin"}


@pytest.mark.parametrize(
    ("method", "params", "keys"),
    [
        ("tools/call", {"name": "move", "arguments": {}}, ["confirm", "confirm#1", "pin"]),
        ("prompts/get", {"name": "write", "arguments": {"topic": "tea"}}, ["sure"]),
        ("resources/read", {"uri": "secret://7"}, ["pin"]),
    ],
)
async def test_2026_input_requests_are_keyed_by_parameter_names(
    method: str, params: dict[str, Any], keys: list[str]
) -> None:
    client, _ = desk()
    first = (await client.request(method, params)).result
    assert first["resultType"] == "input_required"
    assert sorted(first["inputRequests"]) == keys
    assert not any(":" in key or __name__ in key for key in first["inputRequests"])


async def test_2026_an_answer_counts_only_under_the_key_its_question_was_asked_with() -> None:
    client, seen = desk()
    first = (await client.tool("move")).result
    yes = {"action": "accept", "content": {"ok": True}}
    pin = {"action": "accept", "content": {"pin": "1234"}}
    swapped = {"confirm": yes, "confirm#1": pin, "pin": yes}  # each answer under another key
    retry = await client.request(
        "tools/call",
        {
            "name": "move",
            "arguments": {},
            "inputResponses": swapped,
            "requestState": first["requestState"],
        },
    )
    # confirm's answer fits confirm's question; the other two are asked again
    assert sorted(retry.result["inputRequests"]) == ["confirm#1", "pin"]
    final = await client.request(
        "tools/call",
        {
            "name": "move",
            "arguments": {},
            "inputResponses": {"confirm#1": yes, "pin": pin},
            "requestState": retry.result["requestState"],
        },
    )
    assert final.texts == ["ok=True pin=1234"]
    assert seen.calls == ["move ok=True pin=1234"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_answers_parameter_keyed_questions_in_both_eras(mode: str) -> None:
    container = Container()
    seen = Seen()
    container.instance(Seen, seen)

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        if params.message == "Your PIN?":
            return types.ElicitResult(action="accept", content={"pin": "9"})
        return types.ElicitResult(action="accept", content={"ok": True})

    async with sdk_client(Desk, container, mode, elicitation_callback=answer) as sdk:
        result = await sdk.call_tool("move", {})
    assert result.content == [types.TextContent(type="text", text="ok=True pin=9")]
    assert seen.calls == ["move ok=True pin=9"]


async def test_a_tasks_questions_are_keyed_by_parameter_names() -> None:
    runs = Runs()
    async with asking(AskingServer, runs) as tasks:
        task_id = (await tasks.call("either"))["taskId"]
        asked = await tasks.until(task_id, "input_required", "completed", "failed")
        assert sorted(asked["inputRequests"]) == ["name", "target"]
        await tasks.update(task_id, {"name": accept(name="Ada"), "target": accept(confirm=True)})
        done = await tasks.until(task_id)
    assert done["result"]["content"][0]["text"] == "Ada: True"
    assert runs.handled == ["either"]
