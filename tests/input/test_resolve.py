"""Input requests as dependencies: ``Annotated[T, Resolve(fn)]`` on a tool's handle.

Through the SDK's own client in both eras (2026-07-28: ``input_required`` and a retry;
2025-11-25: ``elicitation/create`` mid-call), class tools and ``@tool`` functions.
"""

from __future__ import annotations

from typing import Annotated, Any, Protocol

import pytest
from mcp import types

from container import Container
from mcp_adapter import (
    AcceptedElicitation,
    Catalog,
    CompileError,
    Elicit,
    ElicitationResult,
    McpExtension,
    McpRequest,
    McpResponse,
    Platform,
    Resolve,
    Server,
    Tool,
    compile_server,
    tool,
)
from mcp_adapter.extensions import ToolSpec
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import LEGACY, SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio

FORM = {"elicitation": {"form": {}}}


class Confirm(Schema):
    ok: bool


class Seat(Schema):
    seat: str


class DeleteInput(Schema):
    folder: str


class Notes:
    """A service: what happened, so a test sees whether the handler ran (and how often)."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.handled = 0
        self.resolved = 0

    def count(self, folder: str) -> int:
        return len(folder)


async def confirm_delete(payload: DeleteInput, notes: Notes) -> Elicit[Confirm]:
    notes.resolved += 1
    return Elicit(f"Delete {notes.count(payload.folder)} notes in {payload.folder}?", Confirm)


async def pick_seat() -> Elicit[Seat]:
    return Elicit("Which seat?", Seat)


def seat_label(seat: Annotated[Seat, Resolve(pick_seat)], request: McpRequest) -> str:
    """Depends on another resolver's answer (a second round) and on the request."""
    return f"seat {seat.seat}"


class DeleteTool(Tool[DeleteInput]):
    name = "delete"

    async def handle(
        self,
        payload: DeleteInput,
        notes: Notes,
        confirm: Annotated[Confirm, Resolve(confirm_delete)],
    ) -> McpResponse:
        notes.handled += 1
        if confirm.ok:
            notes.deleted.append(payload.folder)
            return McpResponse.text(f"deleted {payload.folder}")
        return McpResponse.text("kept")


class BranchTool(Tool[DeleteInput]):
    name = "branch"

    async def handle(
        self,
        notes: Notes,
        confirm: Annotated[ElicitationResult[Confirm], Resolve(confirm_delete)],
    ) -> McpResponse:
        notes.handled += 1
        if isinstance(confirm, AcceptedElicitation):
            return McpResponse.text(f"accepted ok={confirm.data.ok}")
        return McpResponse.text(f"outcome {confirm.action}")


async def confirm_booking(folder: str) -> Elicit[Confirm]:
    """A function tool's resolver takes its arguments by name."""
    return Elicit(f"Delete {len(folder)} notes in {folder}?", Confirm)


class Booking(McpExtension):
    @tool()
    async def book(
        self,
        notes: Notes,
        confirm: Annotated[Confirm, Resolve(confirm_booking)],
        label: Annotated[str, Resolve(seat_label)],
        folder: str,
    ) -> str:
        """A function tool: ``folder`` is its argument, the rest injected or resolved."""
        notes.handled += 1
        notes.resolved += 1
        return f"{folder}: ok={confirm.ok} {label}"


class Tools(Server):
    tools = (DeleteTool, BranchTool)


def desk() -> tuple[Catalog, Container, Notes]:
    container = Container()
    notes = Notes()
    container.instance(Notes, notes)
    return Platform([Booking()], server=Tools).compile(container), container, notes


def answering(*replies: dict[str, Any]) -> tuple[Any, list[types.ElicitRequestParams]]:
    """An elicitation callback of the SDK's client: replies by message prefix."""
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        for reply in replies:
            if params.message.startswith(reply["when"]):
                return types.ElicitResult(action=reply["action"], content=reply.get("content"))
        raise AssertionError(f"unexpected question {params.message!r}")

    return elicit, asked


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


# -- one question, both eras ------------------------------------------------------------------


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_class_tool_gets_the_accepted_answer_and_runs_once(mode: str) -> None:
    catalog, container, notes = desk()
    elicit, asked = answering({"when": "Delete", "action": "accept", "content": {"ok": True}})
    async with sdk_client(catalog, container, mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("delete", {"folder": "inbox"})
    assert texts(result) == ["deleted inbox"]
    assert [p.message for p in asked] == ["Delete 5 notes in inbox?"]
    assert notes.deleted == ["inbox"]
    assert notes.handled == 1


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_declined_with_a_plain_parameter_is_a_tool_error_naming_it(
    mode: str, action: str
) -> None:
    catalog, container, notes = desk()
    elicit, _ = answering({"when": "Delete", "action": action})
    async with sdk_client(catalog, container, mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("delete", {"folder": "inbox"})
    assert result.is_error
    (text,) = texts(result)
    assert "'confirm'" in text
    assert action in text
    assert notes.handled == 0
    assert notes.deleted == []


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize(
    ("reply", "text"),
    [
        ({"action": "accept", "content": {"ok": False}}, "accepted ok=False"),
        ({"action": "decline"}, "outcome decline"),
        ({"action": "cancel"}, "outcome cancel"),
    ],
)
async def test_an_outcome_parameter_branches(mode: str, reply: dict[str, Any], text: str) -> None:
    catalog, container, notes = desk()
    elicit, _ = answering({"when": "Delete", **reply})
    async with sdk_client(catalog, container, mode, elicitation_callback=elicit) as sdk:
        result = await sdk.call_tool("branch", {"folder": "inbox"})
    assert texts(result) == [text]
    assert notes.handled == 1


# -- several questions: batched, then another round -----------------------------------------------


async def test_2026_independent_questions_are_asked_together() -> None:
    catalog, container, notes = desk()
    client = McpTestClient(container, catalog, capabilities=FORM)
    first = (await client.tool("book", {"folder": "work"})).assertOk().result
    assert first is not None
    assert first["resultType"] == "input_required"
    keys = sorted(first["inputRequests"])
    assert keys == ["confirm", "seat"]  # the parameters the resolvers fill
    assert notes.handled == 0


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_function_tool_with_a_resolver_chain(mode: str) -> None:
    catalog, container, notes = desk()
    elicit, asked = answering(
        {"when": "Delete", "action": "accept", "content": {"ok": True}},
        {"when": "Which", "action": "accept", "content": {"seat": "3C"}},
    )
    async with sdk_client(catalog, container, mode, elicitation_callback=elicit) as sdk:
        listed = await sdk.list_tools()
        result = await sdk.call_tool("book", {"folder": "work"})
    (entry,) = [t for t in listed.tools if t.name == "book"]
    assert set(entry.input_schema["properties"]) == {"folder"}  # resolved: never an argument
    assert texts(result) == ["work: ok=True seat 3C"]
    assert sorted(p.message for p in asked) == ["Delete 4 notes in work?", "Which seat?"]
    assert notes.handled == 1


async def test_2025_each_question_is_asked_once_and_nothing_runs_twice() -> None:
    catalog, container, notes = desk()
    asked: list[str] = []

    async def on_request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        if params["message"].startswith("Delete"):
            return {"action": "accept", "content": {"ok": True}}
        return {"action": "accept", "content": {"seat": "9F"}}

    client = McpTestClient(
        container, catalog, protocol=LEGACY, capabilities=FORM, on_server_request=on_request
    )
    result = (await client.tool("book", {"folder": "work"})).assertOk()
    assert result.texts == ["work: ok=True seat 9F"]
    assert asked == ["Delete 4 notes in work?", "Which seat?"]
    assert notes.handled == 1


# -- compile time -----------------------------------------------------------------------------


class Unbound(Protocol):
    """A protocol: nothing the container can build without a binding."""

    def fetch(self) -> str: ...


async def needs_unbound(thing: Unbound) -> Elicit[Confirm]:
    return Elicit("?", Confirm)


class MissingTool(Tool):
    name = "missing"

    async def handle(self, confirm: Annotated[Confirm, Resolve(needs_unbound)]) -> McpResponse:
        return McpResponse.text("never")


def test_a_missing_binding_is_a_compile_problem_with_the_path() -> None:
    class S(Server):
        tools = (MissingTool,)

    with pytest.raises(CompileError) as caught:
        compile_server(S, Container())
    text = str(caught.value)
    assert "MissingTool.handle(confirm) -> needs_unbound(thing)" in text


def cycle_first(value: Annotated[str, Resolve(cycle_second)]) -> str:
    return value


def cycle_second(value: Annotated[str, Resolve(cycle_first)]) -> str:
    return value


class CycleTool(Tool):
    name = "cycle"

    async def handle(self, value: Annotated[str, Resolve(cycle_first)]) -> McpResponse:
        return McpResponse.text(value)


def test_a_cycle_of_resolvers_is_refused_with_its_path() -> None:
    class S(Server):
        tools = (CycleTool,)

    with pytest.raises(CompileError) as caught:
        compile_server(S, Container())
    assert "cycle_first -> cycle_second -> cycle_first" in str(caught.value)


def two_questions() -> Elicit[Confirm] | Elicit[Seat]:
    return Elicit("?", Confirm)


def test_several_question_arms_are_a_compile_problem() -> None:
    async def handler(value: Annotated[Confirm, Resolve(two_questions)]) -> str:
        return "never"

    class Two(McpExtension):
        def tools(self) -> list[Any]:
            return [ToolSpec(name="two", handler=handler)]

    with pytest.raises(CompileError) as caught:
        Platform([Two()]).compile(Container())
    assert "a resolver asks one question" in str(caught.value)


def allow_when_confirmed(confirm: Annotated[Confirm, Resolve(confirm_booking)]) -> bool:
    return confirm.ok


class Guarded(McpExtension):
    @tool(authorize=allow_when_confirmed)
    async def guarded(
        self, folder: str, confirm: Annotated[Confirm, Resolve(confirm_booking)]
    ) -> str:
        return f"guarded {folder}"


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("ok", [True, False])
async def test_a_function_tools_authorize_takes_the_answer(mode: str, ok: bool) -> None:
    container = Container()
    catalog = Platform([Guarded()]).compile(container)
    elicit, asked = answering({"when": "Delete", "action": "accept", "content": {"ok": ok}})
    async with sdk_client(catalog, container, mode, elicitation_callback=elicit) as sdk:
        if ok:
            assert texts(await sdk.call_tool("guarded", {"folder": "a"})) == ["guarded a"]
        else:
            with pytest.raises(Exception, match="Not authorized"):
                await sdk.call_tool("guarded", {"folder": "a"})
    assert len(asked) == 1


class Address(Schema):
    street: str


class Nested(Schema):
    address: Address


def ask_nested() -> Elicit[Nested]:
    return Elicit("Where?", Nested)


class NestedTool(Tool):
    name = "nested"

    async def handle(self, where: Annotated[Nested, Resolve(ask_nested)]) -> McpResponse:
        return McpResponse.text("never")


def test_a_form_that_cannot_be_rendered_is_a_compile_problem() -> None:
    class S(Server):
        tools = (NestedTool,)

    with pytest.raises(CompileError) as caught:
        compile_server(S, Container())
    text = str(caught.value)
    assert "ask_nested asks for Nested, which cannot be an elicitation form" in text
    assert "NestedTool.handle(where) -> ask_nested" in text
