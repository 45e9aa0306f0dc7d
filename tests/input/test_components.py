"""Resources and prompts take resolved parameters too, in both eras; hooks that decide
whether a component exists cannot."""

from __future__ import annotations

import threading
from typing import Annotated, Any, ClassVar

import pytest
from mcp import types

from container import Container
from mcp_adapter import (
    Call,
    CompileError,
    Elicit,
    McpResponse,
    Next,
    Prompt,
    PromptArgument,
    RequestCall,
    Resolve,
    Resource,
    Server,
    Tool,
    compile_server,
    request_stage,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.components.support import SDK_MODES, sdk_client

pytestmark = pytest.mark.anyio


class Tone(Schema):
    tone: str


class Ledger:
    def __init__(self) -> None:
        self.handled: list[str] = []


async def ask_tone(topic: str) -> Elicit[Tone]:
    """Takes the prompt's argument by name."""
    return Elicit(f"Which tone for {topic}?", Tone)


def ask_tone_for_note(id: str) -> Elicit[Tone]:
    """Sync, and takes the resource's URI variable by name."""
    return Elicit(f"Which tone for note {id}?", Tone)


class TonePrompt(Prompt):
    name = "tone"
    arguments = (PromptArgument(name="topic", required=True),)

    async def handle(
        self, topic: str, ledger: Ledger, tone: Annotated[Tone, Resolve(ask_tone)]
    ) -> McpResponse:
        ledger.handled.append("prompt")
        return McpResponse.text(f"Write about {topic} in a {tone.tone} tone")


class NoteResource(Resource):
    """Everything sync: a thread-bound read, which asks without holding its thread."""

    name = "note"
    uri_template = "notes://{id}"

    def handle(
        self, id: str, ledger: Ledger, tone: Annotated[Tone, Resolve(ask_tone_for_note)]
    ) -> McpResponse:
        ledger.handled.append("resource")
        return McpResponse.text(f"note {id}, {tone.tone}")


class Writing(Server):
    prompts = (TonePrompt,)
    resources = (NoteResource,)


def writing() -> tuple[Container, Ledger]:
    container = Container()
    ledger = Ledger()
    container.instance(Ledger, ledger)
    return container, ledger


async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"tone": "dry"})


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_prompt_with_a_resolver(mode: str) -> None:
    container, ledger = writing()
    async with sdk_client(Writing, container, mode, elicitation_callback=answer) as sdk:
        result = await sdk.get_prompt("tone", {"topic": "tea"})
    (message,) = result.messages
    assert message.content == types.TextContent(type="text", text="Write about tea in a dry tone")
    assert ledger.handled == ["prompt"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_thread_bound_resource_with_a_resolver(mode: str) -> None:
    container, ledger = writing()
    assert compile_server(Writing, container).templates[0].thread_bound
    async with sdk_client(Writing, container, mode, elicitation_callback=answer) as sdk:
        result = await sdk.read_resource("notes://7")
    (contents,) = result.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text == "note 7, dry"
    assert ledger.handled == ["resource"]


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_declined_prompt_question_is_an_error_naming_the_parameter(mode: str) -> None:
    container, ledger = writing()

    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async with sdk_client(Writing, container, mode, elicitation_callback=decline) as sdk:
        with pytest.raises(Exception) as raised:
            await sdk.get_prompt("tone", {"topic": "tea"})
    assert "'tone'" in str(raised.value)
    assert ledger.handled == []


async def ask_anything() -> Elicit[Tone]:
    return Elicit("?", Tone)


class HiddenAsker(Tool):
    name = "hidden"

    def shouldRegister(self, tone: Annotated[Tone, Resolve(ask_anything)]) -> bool:
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


def test_should_register_cannot_ask() -> None:
    class S(Server):
        tools = (HiddenAsker,)

    with pytest.raises(CompileError) as caught:
        compile_server(S, Container())
    text = str(caught.value)
    assert "HiddenAsker.shouldRegister(tone)" in text
    assert "a hidden component must never ask" in text


# -- authorize with the answers -------------------------------------------------------------------


class Pin(Schema):
    pin: str


async def ask_pin() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin)


class VaultTool(Tool):
    """``authorize`` takes the answer; the handler takes the same one (asked once)."""

    name = "vault"

    def authorize(self, pin: Annotated[Pin, Resolve(ask_pin)], ledger: Ledger) -> bool:
        ledger.handled.append(f"authorize {pin.pin}")
        return pin.pin == "1234"

    async def handle(self, ledger: Ledger, pin: Annotated[Pin, Resolve(ask_pin)]) -> McpResponse:
        ledger.handled.append("vault")
        return McpResponse.text("opened")


class Vault(Server):
    tools = (VaultTool,)


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize(("pin", "opened"), [("1234", True), ("0000", False)])
async def test_authorize_is_asked_with_the_answers(mode: str, pin: str, opened: bool) -> None:
    container, ledger = writing()
    asked: list[str] = []

    async def answer_pin(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"pin": pin})

    async with sdk_client(Vault, container, mode, elicitation_callback=answer_pin) as sdk:
        listed = await sdk.list_tools()
        assert [tool.name for tool in listed.tools] == ["vault"]  # a listing cannot ask
        if opened:
            result = await sdk.call_tool("vault", {})
            assert [c.text for c in result.content if isinstance(c, types.TextContent)] == [
                "opened"
            ]
        else:
            with pytest.raises(Exception) as raised:
                await sdk.call_tool("vault", {})
            assert "Not authorized" in str(raised.value)
    assert asked == ["Your PIN?"]
    assert ledger.handled == [f"authorize {pin}", "vault"] if opened else [f"authorize {pin}"]


class Built:
    """Counts how many components a call built, and on which threads."""

    def __init__(self) -> None:
        self.threads: list[int] = []


def ask_pin_sync() -> Elicit[Pin]:
    return Elicit("Your PIN?", Pin)


class SyncVaultTool(Tool):
    """Thread-bound (everything sync): ``authorize`` takes the answer, the handler runs on
    the same component."""

    name = "sync_vault"

    def __init__(self, built: Built) -> None:
        built.threads.append(threading.get_ident())
        self.built = built

    def authorize(self, pin: Annotated[Pin, Resolve(ask_pin_sync)]) -> bool:
        return pin.pin == "1234"

    def handle(self, pin: Annotated[Pin, Resolve(ask_pin_sync)]) -> McpResponse:
        return McpResponse.text(f"opened by {len(self.built.threads)} component(s)")


async def passing(call: Call, call_next: Next) -> Any:
    return await call_next(call)


class TimedVaultTool(SyncVaultTool):
    timeout = 30.0


class LayeredVault(Server):
    tools = (SyncVaultTool,)
    middleware: ClassVar = (passing,)


class TimedVault(Server):
    tools = (TimedVaultTool,)


@pytest.mark.parametrize("mode", SDK_MODES)
@pytest.mark.parametrize("server", [LayeredVault, TimedVault], ids=["middleware", "timeout"])
async def test_a_thread_bound_component_is_built_once_for_authorize_and_handle(
    mode: str, server: type[Server]
) -> None:
    container = Container()
    built = Built()
    container.singleton(Built, lambda: built)
    (tool,) = compile_server(server, container).tools.values()
    assert tool.thread_bound
    assert tool.borrows

    async def answer_pin(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"pin": "1234"})

    async with sdk_client(server, container, mode, elicitation_callback=answer_pin) as sdk:
        result = await sdk.call_tool(tool.name, {})
    texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
    assert texts == ["opened by 1 component(s)"]
    # one component for the call that ran (a 2026-07-28 round that only asked builds none)
    assert len(built.threads) == 1
    assert built.threads[0] != threading.get_ident()  # on the call's worker thread


# -- call-stage middleware ------------------------------------------------------------------------


class Reason(Schema):
    reason: str


async def ask_reason() -> Elicit[Reason]:
    return Elicit("Why?", Reason)


async def audited(
    call: Call, call_next: Next, ledger: Ledger, reason: Annotated[Reason, Resolve(ask_reason)]
) -> Any:
    """A call-stage layer that takes an answer: asked in the same round as the handler's."""
    ledger.handled.append(f"audit {call.name}: {reason.reason}")
    return await call_next(call)


class AuditedTool(Tool):
    name = "audited"
    middleware = (audited,)

    async def handle(self, ledger: Ledger, pin: Annotated[Pin, Resolve(ask_pin)]) -> McpResponse:
        ledger.handled.append(f"handle {pin.pin}")
        return McpResponse.text("done")


class Audited(Server):
    tools = (AuditedTool,)


@pytest.mark.parametrize("mode", SDK_MODES)
async def test_a_call_stage_layer_takes_an_answer(mode: str) -> None:
    container, ledger = writing()
    asked: list[str] = []

    async def reply(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"reason": "cleanup"} if params.message == "Why?" else {"pin": "9"}
        return types.ElicitResult(action="accept", content=content)

    async with sdk_client(Audited, container, mode, elicitation_callback=reply) as sdk:
        result = await sdk.call_tool("audited", {})
    assert not result.is_error
    assert sorted(asked) == ["Why?", "Your PIN?"]
    assert ledger.handled == ["audit audited: cleanup", "handle 9"]


async def test_2026_the_layers_question_joins_the_handlers_round() -> None:
    container, _ = writing()
    client = McpTestClient(container, Audited, capabilities={"elicitation": {}})
    first = (await client.tool("audited")).result
    assert first is not None
    assert sorted(first["inputRequests"]) == ["pin", "reason"]


@request_stage
async def asks_too_early(
    call: RequestCall, call_next: Next, reason: Annotated[Reason, Resolve(ask_reason)]
) -> Any:
    return await call_next(call)


def test_a_request_stage_layer_cannot_ask() -> None:
    class Early(Server):
        tools = (AuditedTool,)
        middleware = (asks_too_early,)

    with pytest.raises(CompileError) as caught:
        compile_server(Early, Container())
    assert "asks_too_early(reason)" in str(caught.value)
    assert "runs before the component is known" in str(caught.value)
