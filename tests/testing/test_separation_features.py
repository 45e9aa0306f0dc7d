"""``assert_schema_separation`` on a server that uses every feature a call may vary in:
questions to the client (resolvers asking ``Elicit``, ``ElicitUrl``, ``Sample`` and
``ListRoots``, and ``McpResponse.elicit`` from a handler), task tools (required, and
optional with a question inside the task), a ``StateHandle`` field and a tool only an
MCP Apps view calls. The check drives each feature as a client would and finds no false
problem in either era; a real separation defect in such a tool is still reported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio.from_thread
import pytest
from hypothesis import Phase, find, settings
from mcp import types
from pydantic import BaseModel, ConfigDict

from container import Container, Lifetime
from mcp_adapter import (
    APP_MIME_TYPE,
    Catalog,
    Elicit,
    ElicitUrl,
    ListRoots,
    McpRequest,
    McpResponse,
    Resolve,
    Resource,
    Sample,
    Server,
    StateHandle,
    Tasks,
    Tool,
    ToolUI,
    compile_server,
)
from mcp_adapter.compiled.catalog import CompiledTool
from mcp_adapter.stores.handles import MemoryHandles
from mcp_adapter.testing import SchemaSeparationError, assert_schema_separation
from mcp_adapter.testing.driving import Driver, driving
from schemas import Contract, Schema
from tests.reliability.test_testing_helpers import _with_tool

ERAS = ("2026-07-28", "2025-11-25")


class Journal:
    """A singleton: what the real handlers were given, for the run_handlers checks."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []


class Ledger:
    """A scoped service every tool takes: it must never come from the payload."""


class Topic(Schema):
    topic: str


class Confirm(Schema):
    ok: bool
    reason: str = ""


async def confirm(payload: Topic, ledger: Ledger) -> Elicit[Confirm]:
    return Elicit(f"Go on with {payload.topic}?", Confirm)


def summarize(payload: Topic) -> Sample:
    text = types.TextContent(type="text", text=f"Summarize {payload.topic}")
    return Sample([types.SamplingMessage(role="user", content=text)], max_tokens=60)


def workspace() -> ListRoots:
    return ListRoots()


def sign_in() -> ElicitUrl:
    return ElicitUrl("Sign in", "https://wiki.example/login", elicitation_id="w-1")


class AskTool(Tool[Topic]):
    name = "ask"

    async def handle(
        self,
        payload: Topic,
        ledger: Ledger,
        journal: Journal,
        ok: Annotated[Confirm, Resolve(confirm)],
        summary: Annotated[types.CreateMessageResult, Resolve(summarize)],
        roots: Annotated[types.ListRootsResult, Resolve(workspace)],
        signed_in: Annotated[object, Resolve(sign_in)],
    ) -> McpResponse:
        journal.entries.append(("ask", (ok, summary.model, len(roots.roots))))
        return McpResponse.text("asked")


class ElicitTool(Tool[Topic]):
    """Decides mid-flow to ask (``McpResponse.elicit``), then reads the answer."""

    name = "elicit"

    async def handle(self, payload: Topic, request: McpRequest, journal: Journal) -> McpResponse:
        answer = request.input_responses.get("input")
        if answer is None:
            return McpResponse.elicit("Sure?", Confirm)
        journal.entries.append(("elicit", answer["action"]))
        return McpResponse.text("elicited")


class RequiredTask(Tool[Topic]):
    name = "required_task"
    task_support = "required"

    async def handle(self, payload: Topic, ledger: Ledger, journal: Journal) -> McpResponse:
        journal.entries.append(("required_task", payload.topic))
        return McpResponse.text("done")


class OptionalTask(Tool[Topic]):
    """A task that asks (a question inside the task, answered by tasks/update)."""

    name = "optional_task"
    task_support = "optional"

    async def handle(
        self, payload: Topic, journal: Journal, ok: Annotated[Confirm, Resolve(confirm)]
    ) -> McpResponse:
        journal.entries.append(("optional_task", ok))
        return McpResponse.text("done")


class Cart:
    def __init__(self, handle: StateHandle) -> None:
        self.handle = handle


async def cart(handle: StateHandle) -> AsyncIterator[Cart]:
    yield Cart(handle)


class AddInput(Schema):
    cart: StateHandle
    item: str


class AddItem(Tool[AddInput]):
    """Takes a handle back; its ``cart`` service is named like the payload field."""

    name = "add_item"

    async def handle(
        self, payload: AddInput, cart: Cart, ledger: Ledger, journal: Journal
    ) -> McpResponse:
        journal.entries.append(("add_item", cart.handle == payload.cart))
        return McpResponse.text("added")


VIEW = "ui://board/view.html"


class BoardView(Resource):
    uri = VIEW
    mime_type = APP_MIME_TYPE

    def handle(self) -> McpResponse:
        return McpResponse.text("<!doctype html>")


class RefreshTool(Tool[Topic]):
    """Only the view calls it: there for a client that negotiated MCP Apps."""

    name = "refresh"
    ui = ToolUI(VIEW, visibility=("app",))

    async def handle(self, payload: Topic, ledger: Ledger, journal: Journal) -> McpResponse:
        journal.entries.append(("refresh", payload.topic))
        return McpResponse.text("refreshed")


class Everything(Server):
    tools = (AskTool, ElicitTool, RequiredTask, OptionalTask, AddItem, RefreshTool)
    resources = (BoardView,)
    tasks = Tasks()


TOOLS = len(Everything.tools)
SKIPPED = [
    "required_task (2025-11-25): it runs only as a task, a 2026-07-28 feature: no client "
    "of this era can call it"
]


def everything(journal: Journal | None = None) -> Container:
    container = Container()
    container.scoped(Ledger)
    container.instance(Journal, journal or Journal())
    container.bind(Cart, cart, Lifetime.SESSION)
    return container


def test_a_server_with_every_feature_passes_in_both_eras() -> None:
    report = assert_schema_separation(Everything, everything(), max_examples=4)
    assert report.problems == []
    assert report.skipped == SKIPPED
    # every tool checked in each era it can be called in, with each kind of payload
    assert report.valid >= 2 * TOOLS - 1
    assert report.injected_keys >= 2 * TOOLS - 2  # ElicitTool takes no service
    assert report.invalid > 0


@pytest.mark.parametrize("era", ERAS)
def test_the_real_handlers_run_with_every_question_answered(era: Any) -> None:
    journal = Journal()
    report = assert_schema_separation(
        Everything, everything(journal), max_examples=3, protocols=(era,), run_handlers=True
    )
    assert report.problems == []
    ran = {name for name, _ in journal.entries}
    expected = {"ask", "elicit", "optional_task", "add_item", "refresh"}
    assert ran == (expected | {"required_task"} if era == "2026-07-28" else expected)
    assert len(journal.entries) == report.valid  # each call reached its handler once
    for name, given in journal.entries:
        if name == "ask":
            ok, model, roots = given
            assert isinstance(ok, Confirm)
            assert model == "mcp-adapter-separation-check"
            assert 0 <= roots <= 3
        elif name == "elicit":
            assert given == "accept"
        elif name == "add_item":
            assert given is True  # the cart of the handle the call carried


# -- real defects in such tools are still reported ----------------------------------------------


def test_an_injected_name_leaking_into_a_feature_tools_schema_is_reported() -> None:
    container = everything()
    catalog = compile_server(Everything, container)
    for name in ("ask", "required_task", "add_item"):
        entry = catalog.tools[name]
        schema = dict(entry.modern.input_schema)
        schema["properties"] = {**schema["properties"], "ledger": {"type": "object"}}
        listed = entry.modern.model_copy(update={"input_schema": schema})
        catalog = _with_tool(catalog, name, modern=listed)
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(catalog, container, max_examples=2, shrink=False)
    leaks = [p for p in caught.value.problems if "names injected parameter(s) ledger" in p]
    assert sorted(p.split(" ")[0] for p in leaks) == ["add_item", "ask", "required_task"]


class _Leaky(CompiledTool):
    """A compiled tool whose payload's ``ledger`` key, when sent, replaces the service."""

    def arguments(self, payload: Any) -> dict[str, Any]:
        return {"ledger": getattr(payload, "ledger", Ledger())}


class Permissive(BaseModel):
    """A contract that keeps unknown keys (``extra="allow"``): ``ledger`` gets through."""

    model_config = ConfigDict(extra="allow")
    topic: str = ""


def _leaking(catalog: Catalog, name: str) -> Catalog:
    honest = catalog.tools[name]
    plan = dataclasses.replace(
        honest.handler, services=tuple(s for s in honest.handler.services if s[0] != "ledger")
    )
    fields = {f.name: getattr(honest, f.name) for f in dataclasses.fields(honest) if f.init}
    fields.update(handler=plan, input=Contract.of(Permissive), spread=("ledger",))
    return dataclasses.replace(catalog, tools={**catalog.tools, name: _Leaky(**fields)})


@pytest.mark.parametrize("name", ["ask", "required_task"])
def test_a_service_filled_from_the_payload_of_a_feature_tool_is_reported(name: str) -> None:
    """The bug the check exists for, planted in a tool that asks and in a task tool (the
    task's body, run later by the worker, is where the service is filled)."""
    container = everything()
    catalog = _leaking(compile_server(Everything, container), name)
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(
            catalog, container, max_examples=6, protocols=("2026-07-28",), shrink=False
        )
    leaks = [p for p in caught.value.problems if "sent under its name" in p]
    assert len(leaks) == 1, caught.value.problems
    assert leaks[0].startswith(f"{name} (2026-07-28): parameter 'ledger' (service) received")


def test_an_invalid_payload_reaching_the_handler_is_reported_for_every_feature(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plant a server that skips validation: every tool, in each era it can be called in."""
    container = everything()
    catalog = compile_server(Everything, container)
    monkeypatch.setattr(Contract, "check_wire", lambda self, value: (value, ()))
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(catalog, container, max_examples=6, shrink=False)
    found = sorted(p.split(":")[0] for p in caught.value.problems)
    expected = [f"{tool.name} ({era})" for tool in Everything.tools for era in ERAS]
    assert found == sorted(set(expected) - {"required_task (2025-11-25)"})


def test_a_handle_the_server_loses_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plant a handle store that finds nothing: the minted handle's call never reaches the
    handler, and the check says so (it does not skip handle tools)."""

    async def lost(self: MemoryHandles, owner: Any, handle: str) -> None:
        return None

    monkeypatch.setattr(MemoryHandles, "take", lost)
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(Everything, everything(), max_examples=2, shrink=False)
    assert [p.split(":")[0] for p in caught.value.problems] == [
        "add_item (2026-07-28)",
        "add_item (2025-11-25)",
    ]
    assert all("Unknown state handle in argument 'cart'" in p for p in caught.value.problems)


def test_a_resolved_parameter_left_unfilled_is_reported() -> None:
    """Plant a plan that drops one resolver's answer: the handler would run without it."""
    container = everything()
    catalog = compile_server(Everything, container)
    plan = catalog.tools["ask"].handler
    dropped = tuple(entry for entry in plan.resolved if entry[0] != "roots")
    broken = _with_tool(catalog, "ask", handler=dataclasses.replace(plan, resolved=dropped))
    with pytest.raises(SchemaSeparationError) as caught:
        assert_schema_separation(broken, container, max_examples=2, shrink=False)
    assert [p.split(";")[0] for p in caught.value.problems] == [
        f"ask ({era}): parameter 'roots' (resolved) was not filled with its resolver's answer"
        for era in ERAS
    ]


class _GaveUp(BaseException):
    """Stands for hypothesis abandoning an example in a draw (its ``StopTest``)."""


@pytest.mark.parametrize("era", ERAS)
def test_an_example_given_up_mid_question_ends_its_call_cleanly(
    era: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A draw that fails while the server waits for an answer: the call still ends (the
    form cancelled, a tool error), nothing is left in flight, and the draw's exception
    reaches the test."""
    container = everything()
    catalog = compile_server(Everything, container)
    asked: list[str] = []

    def give_up(strategy: Any) -> Any:
        asked.append(repr(strategy)[:20])
        raise _GaveUp

    with (
        anyio.from_thread.start_blocking_portal() as portal,
        driving(Driver(container, catalog, era, portal)) as driver,
    ):
        with pytest.raises(_GaveUp):
            driver.send("ask", {"topic": "tea"}, give_up)
        assert len(asked) == 1  # the rest of the call's questions got fallbacks
        answered = driver.send("ask", {"topic": "tea"}, _first_answer)
        answered.assertOk().assertTextContains("asked")  # the client still serves
    assert "gave up" not in caplog.text


def _first_answer(strategy: Any) -> Any:
    """The first value ``strategy`` generates (no shrinking)."""
    return find(strategy, lambda _: True, settings=settings(database=None, phases=[Phase.generate]))
