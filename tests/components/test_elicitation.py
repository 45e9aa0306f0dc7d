"""Asking the client for input: one tool, both eras.

2026-07-28: the call answers ``input_required`` and the client retries with
``inputResponses``/``requestState``. 2025-11-25: the adapter sends the SDK's
``elicitation/create`` request itself and calls the handler again with the same
two fields filled.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from mcp import types

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.input.resolution import MAX_INPUT_ROUNDS
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import LEGACY, MODERN, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

ELICITATION = {"elicitation": {"form": {}}}


class Confirm(Schema):
    ok: bool


class Seat(Schema):
    seat: str


class Ledger:
    """What the tools actually did: nothing may happen before the answer."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.calls = 0


class DeleteTool(Tool):
    name = "delete"

    async def handle(self, request: McpRequest, ledger: Ledger) -> McpResponse:
        ledger.calls += 1
        answer = request.input_responses.get("confirm")
        if answer is None:
            return McpResponse.elicit("Delete everything?", Confirm, key="confirm", state="step-1")
        if answer["action"] != "accept" or not answer["content"]["ok"]:
            return McpResponse.text(f"kept ({answer['action']}, state={request.request_state})")
        ledger.deleted.append("everything")
        return McpResponse.text(f"deleted (state={request.request_state})")


class BookTool(Tool):
    """Two questions in a row; the first answer travels in request_state."""

    name = "book"

    async def handle(self, request: McpRequest) -> McpResponse:
        if request.request_state is None:
            return McpResponse.elicit("Confirm booking?", Confirm, key="confirm", state="asked")
        if request.request_state == "asked":
            confirmed = request.input_responses["confirm"]["content"]["ok"]
            state = json.dumps({"confirmed": confirmed})
            return McpResponse.elicit("Which seat?", Seat, key="seat", state=state)
        earlier = json.loads(request.request_state)
        seat = request.input_responses["seat"]["content"]["seat"]
        return McpResponse.text(f"confirmed={earlier['confirmed']} seat={seat}")


class NagTool(Tool):
    name = "nag"

    async def handle(self) -> McpResponse:
        return McpResponse.elicit("Again?", Confirm, key="again")


class AskingPrompt(Prompt):
    name = "asking"

    def handle(self, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("sure")
        if answer is None:
            return McpResponse.elicit("Sure?", Confirm, key="sure")
        return McpResponse.text(f"prompt: {answer['action']}")


class AskingResource(Resource):
    name = "asking"
    uri = "ask://me"

    def handle(self, request: McpRequest) -> McpResponse:
        answer = request.input_responses.get("sure")
        if answer is None:
            return McpResponse.elicit("Sure?", Confirm, key="sure")
        return McpResponse.text(f"resource: {answer['action']}")


class Desk(Server):
    tools = (DeleteTool, BookTool, NagTool)
    prompts = (AskingPrompt,)
    resources = (AskingResource,)


def desk() -> tuple[Container, Ledger]:
    container = Container()
    ledger = Ledger()
    container.instance(Ledger, ledger)
    return container, ledger


CONFIRM_SCHEMA = {"type": "object", "properties": {"ok": {"title": "Ok", "type": "boolean"}}}


# -- 2026-07-28 -----------------------------------------------------------------------------------


async def test_2026_the_first_call_answers_input_required() -> None:
    container, ledger = desk()
    client = McpTestClient(container, Desk, capabilities=ELICITATION)
    result = (await client.tool("delete")).assertOk().result
    assert result is not None
    assert result["resultType"] == "input_required"
    sealed = result["requestState"]
    assert sealed.startswith("v1.")
    assert "step-1" not in sealed  # sealed and encrypted by the SDK's RequestStateBoundary
    (key,) = result["inputRequests"]
    asked = result["inputRequests"][key]
    assert key == "confirm"
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["mode"] == "form"
    assert asked["params"]["message"] == "Delete everything?"
    schema = asked["params"]["requestedSchema"]
    assert {k: schema[k] for k in ("type", "properties")} == CONFIRM_SCHEMA
    assert schema["required"] == ["ok"]
    assert "content" not in result
    assert ledger.deleted == []


@pytest.mark.parametrize(
    ("answer", "text", "deleted"),
    [
        ({"action": "accept", "content": {"ok": True}}, "deleted (state=step-1)", ["everything"]),
        ({"action": "accept", "content": {"ok": False}}, "kept (accept, state=step-1)", []),
        ({"action": "decline"}, "kept (decline, state=step-1)", []),
    ],
)
async def test_2026_the_retry_carries_input_responses_and_request_state(
    answer: dict[str, Any], text: str, deleted: list[str]
) -> None:
    container, ledger = desk()
    client = McpTestClient(container, Desk, capabilities=ELICITATION)
    first = (await client.tool("delete")).result
    assert first is not None
    result = await client.request(
        "tools/call",
        {
            "name": "delete",
            "arguments": {},
            "inputResponses": {"confirm": answer},
            "requestState": first["requestState"],
        },
    )
    result.assertOk()
    assert result.result is not None
    assert result.result["resultType"] == "complete"
    assert result.texts == [text]
    assert ledger.deleted == deleted


async def test_2026_two_rounds_by_hand() -> None:
    client = McpTestClient(Container(), Desk, capabilities=ELICITATION)
    first = (await client.tool("book")).result
    assert first is not None
    assert list(first["inputRequests"]) == ["confirm"]
    second = (
        await client.request(
            "tools/call",
            {
                "name": "book",
                "arguments": {},
                "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
                "requestState": first["requestState"],
            },
        )
    ).result
    assert second is not None
    assert list(second["inputRequests"]) == ["seat"]
    third = await client.request(
        "tools/call",
        {
            "name": "book",
            "arguments": {},
            "inputResponses": {"seat": {"action": "accept", "content": {"seat": "12A"}}},
            "requestState": second["requestState"],
        },
    )
    assert third.texts == ["confirmed=True seat=12A"]


# -- 2025-11-25 -----------------------------------------------------------------------------------


class Answers:
    """A client's elicitation/create handler that records what it was asked."""

    def __init__(self, *results: dict[str, Any]) -> None:
        self.results = list(results)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((method, params))
        return self.results.pop(0) if len(self.results) > 1 else self.results[0]


@pytest.mark.parametrize(
    ("answer", "text", "deleted"),
    [
        ({"action": "accept", "content": {"ok": True}}, "deleted (state=step-1)", ["everything"]),
        ({"action": "decline"}, "kept (decline, state=step-1)", []),
        ({"action": "cancel"}, "kept (cancel, state=step-1)", []),
    ],
)
async def test_2025_the_adapter_asks_with_elicitation_create(
    answer: dict[str, Any], text: str, deleted: list[str]
) -> None:
    container, ledger = desk()
    answers = Answers(answer)
    client = McpTestClient(
        container, Desk, protocol=LEGACY, capabilities=ELICITATION, on_server_request=answers
    )
    result = (await client.tool("delete")).assertOk()
    assert result.texts == [text]
    assert "resultType" not in (result.result or {})
    (asked,) = answers.asked
    method, params = asked
    assert method == "elicitation/create"
    assert params["message"] == "Delete everything?"
    assert params["requestedSchema"]["properties"] == CONFIRM_SCHEMA["properties"]
    assert ledger.deleted == deleted
    assert ledger.calls == 2


async def test_2025_two_rounds_are_two_elicitation_requests() -> None:
    answers = Answers(
        {"action": "accept", "content": {"ok": True}},
        {"action": "accept", "content": {"seat": "3C"}},
    )
    client = McpTestClient(
        Container(), Desk, protocol=LEGACY, capabilities=ELICITATION, on_server_request=answers
    )
    result = (await client.tool("book")).assertOk()
    assert result.texts == ["confirmed=True seat=3C"]
    assert [params["message"] for _, params in answers.asked] == [
        "Confirm booking?",
        "Which seat?",
    ]


async def test_2025_a_handler_that_never_stops_asking_is_stopped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers = Answers({"action": "accept", "content": {"ok": True}})
    client = McpTestClient(
        Container(), Desk, protocol=LEGACY, capabilities=ELICITATION, on_server_request=answers
    )
    with caplog.at_level(logging.ERROR, logger="mcp_adapter"):
        result = await client.tool("nag")
    result.assertError(f"in {MAX_INPUT_ROUNDS} rounds without an end")  # the documented limit
    assert len(answers.asked) == MAX_INPUT_ROUNDS
    assert not [record for record in caplog.records if record.exc_info]  # no incident


# -- the SDK's client drives both eras itself ------------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_elicitation_callback_answers_in_both_eras(mode: str) -> None:
    container, ledger = desk()
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"ok": True})

    async with sdk_client(Desk, container, mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("delete", {})
    assert not result.is_error
    assert result.content == [types.TextContent(type="text", text="deleted (state=step-1)")]
    (params,) = asked
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "Delete everything?"
    assert ledger.deleted == ["everything"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_the_sdk_client_goes_through_two_rounds(mode: str) -> None:
    replies = iter(
        [
            types.ElicitResult(action="accept", content={"ok": False}),
            types.ElicitResult(action="accept", content={"seat": "1A"}),
        ]
    )

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return next(replies)

    async with sdk_client(Desk, Container(), mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("book", {})
    assert result.content == [types.TextContent(type="text", text="confirmed=False seat=1A")]


# -- a client that cannot answer ------------------------------------------------------------------


async def test_2026_a_client_without_elicitation_gets_a_capability_error() -> None:
    container, ledger = desk()
    result = await McpTestClient(container, Desk, capabilities={}).tool("delete")
    assert result.error is not None
    assert result.error["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert ledger.deleted == []


async def test_2025_a_client_without_elicitation_is_not_asked() -> None:
    container, ledger = desk()
    answers = Answers({"action": "accept", "content": {"ok": True}})
    client = McpTestClient(container, Desk, protocol=LEGACY, on_server_request=answers)
    result = await client.tool("delete")
    assert answers.asked == []
    assert result.error is not None
    assert result.error["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert ledger.deleted == []


# -- prompts and resources ask too ---------------------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_prompts_and_resources_ask_in_both_eras(mode: str, action: str) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"ok": True} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)

    async with sdk_client(Desk, Container(), mode, elicitation_callback=elicit) as sdk:
        prompt = await sdk.get_prompt("asking")
        read = await sdk.read_resource("ask://me")
    (message,) = prompt.messages
    assert message.content == types.TextContent(type="text", text=f"prompt: {action}")
    (contents,) = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == f"resource: {action}"
    assert asked == ["Sure?", "Sure?"]


async def test_2026_a_prompt_answers_input_required() -> None:
    client = McpTestClient(Container(), Desk, capabilities=ELICITATION)
    first = (await client.request("prompts/get", {"name": "asking"})).result
    assert first is not None
    assert first["resultType"] == "input_required"
    assert list(first["inputRequests"]) == ["sure"]


@pytest.mark.parametrize("era", [MODERN, LEGACY])
@pytest.mark.parametrize("declared", [{}, {"form": {}}, {"form": {}, "url": {}}])
async def test_a_bare_or_form_elicitation_capability_is_enough(
    era: str, declared: dict[str, Any]
) -> None:
    container, _ = desk()
    answers = Answers({"action": "accept", "content": {"ok": True}})
    client = McpTestClient(
        container,
        Desk,
        protocol=era,
        capabilities={"elicitation": declared},
        on_server_request=answers,
    )
    result = (await client.tool("delete")).assertOk()
    if era == MODERN:
        assert result.result is not None
        assert result.result["resultType"] == "input_required"
    else:
        assert len(answers.asked) == 1


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_a_url_only_client_is_not_asked_for_a_form(era: str) -> None:
    container, ledger = desk()
    answers = Answers({"action": "accept", "content": {"ok": True}})
    client = McpTestClient(
        container,
        Desk,
        protocol=era,
        capabilities={"elicitation": {"url": {}}},
        on_server_request=answers,
    )
    result = await client.tool("delete")
    assert answers.asked == []
    assert result.error is not None
    assert result.error["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert ledger.deleted == []
