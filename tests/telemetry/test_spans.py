"""The adapter's stage spans: children of the SDK's span, with their attributes, through
the real client in both eras."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, PromptArgument, Resource, Server, Tool
from mcp_adapter.dispatch.telemetry import (
    HANDLER,
    INCIDENT,
    OUTPUT,
    RESOLUTION,
    VALIDATION,
    VISIBILITY,
)
from mcp_adapter.testing import McpTestClient
from schemas import Schema
from tests.telemetry.conftest import Recorded, names, parent_of

pytestmark = pytest.mark.anyio

ERAS = pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
ALL_STAGES = [VISIBILITY, VALIDATION, RESOLUTION, HANDLER, OUTPUT]

seen: dict[str, Any] = {}
_user_tracer = trace.get_tracer("tests.telemetry")


class Clock:
    def now(self) -> int:
        return 7


class Ledger:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock


class AddInput(Schema):
    a: int
    b: int


class AddOutput(Schema):
    sum: int


class AddTool(Tool[AddInput, AddOutput]):
    name = "add"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def authorize(self, request: McpRequest) -> bool:
        return True

    async def handle(self, payload: AddInput, ledger: Ledger) -> McpResponse:
        seen["current"] = trace.get_current_span().get_span_context().span_id
        with _user_tracer.start_as_current_span("user work"):
            pass
        return McpResponse.structured(AddOutput(sum=payload.a + payload.b))


class SyncAddTool(Tool[AddInput, AddOutput]):
    """Thread-bound: its whole call runs on one worker thread."""

    name = "sync_add"

    def authorize(self, request: McpRequest) -> bool:
        return True

    def handle(self, payload: AddInput, ledger: Ledger) -> McpResponse:
        seen["current"] = trace.get_current_span().get_span_context().span_id
        with _user_tracer.start_as_current_span("user work"):
            pass
        return McpResponse.structured(AddOutput(sum=payload.a + payload.b))


class BrokenTool(Tool):
    name = "broken"

    async def handle(self) -> McpResponse:
        raise RuntimeError("the disk is on fire")


class WrongOutputTool(Tool[AddInput, AddOutput]):
    name = "wrong_output"

    async def handle(self, payload: AddInput) -> McpResponse:
        return McpResponse.text("no structured content")


class HiddenTool(Tool):
    name = "hidden"

    async def shouldRegister(self) -> bool:
        return False

    async def handle(self) -> McpResponse:
        return McpResponse.text("never")


class NoteResource(Resource):
    name = "note"
    uri_template = "notes://{note_id}"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def handle(self, note_id: int) -> McpResponse:
        if note_id == 0:
            raise LookupError("note 0 is cursed")
        return McpResponse.text(f"note {note_id}")


class GreetPrompt(Prompt):
    name = "greet"
    arguments = (PromptArgument(name="who", required=True),)

    async def handle(self, who: str) -> McpResponse:
        return McpResponse.text(f"Hello {who}")


class Traced(Server):
    name = "traced"
    tools = (AddTool, SyncAddTool, BrokenTool, WrongOutputTool, HiddenTool)
    resources = (NoteResource,)
    prompts = (GreetPrompt,)


def services() -> Container:
    container = Container()
    container.singleton(Clock)
    container.scoped(Ledger)
    return container


def client(protocol: str, server: type[Server] = Traced) -> McpTestClient:
    return McpTestClient(services(), server, protocol=protocol)  # type: ignore[arg-type]


@ERAS
@pytest.mark.parametrize("tool", ["add", "sync_add"])
async def test_each_stage_is_a_child_of_the_sdk_span(
    otel: Recorded, protocol: str, tool: str
) -> None:
    result = await client(protocol).tool(tool, {"a": 1, "b": 2})
    result.assertOk().assertStructured({"sum": 3})

    server = otel.server_span()
    assert server.name == f"tools/call {tool}"
    stages = otel.stages()
    assert names(stages) == ALL_STAGES
    for span in stages:
        assert span.kind == SpanKind.INTERNAL
        assert span.context.trace_id == server.context.trace_id
        assert parent_of(span) == server.context.span_id
        assert span.attributes is not None
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == tool
        assert "gen_ai.operation.name" not in span.attributes  # the SDK's span is the tool call
        assert span.status.status_code == StatusCode.UNSET
    visibility = stages[0]
    assert visibility.attributes is not None
    assert visibility.attributes["mcp_adapter.registered"] is True
    assert visibility.attributes["mcp_adapter.authorized"] is True
    # in the handler (on a worker thread for the thread-bound tool), the current span is
    # the handler's, so the handler's own spans are its children
    handler = otel.named(HANDLER)[0]
    assert seen["current"] == handler.context.span_id
    (user,) = otel.named("user work")
    assert parent_of(user) == handler.context.span_id
    # stages run one after another, within the SDK's span
    for earlier, later in itertools.pairwise(stages):
        assert (earlier.end_time or 0) <= (later.start_time or 0)
    assert (server.start_time or 0) <= (stages[0].start_time or 0)
    assert (stages[-1].end_time or 0) <= (server.end_time or 0)


@ERAS
async def test_a_failing_handler_names_the_incident_the_client_got(
    otel: Recorded, protocol: str
) -> None:
    result = await client(protocol).tool("broken")
    assert result.is_error
    assert result.result is not None
    incident = result.result["_meta"]["incident"]

    (handler,) = otel.named(HANDLER)
    assert handler.status.status_code == StatusCode.ERROR
    assert handler.attributes is not None
    assert handler.attributes["error.type"] == "RuntimeError"
    assert handler.attributes[INCIDENT] == incident
    assert [event.name for event in handler.events] == ["exception"]
    assert otel.named(OUTPUT) == []  # the call ended at the handler
    server = otel.server_span()
    assert server.attributes is not None
    assert server.attributes[INCIDENT] == incident
    assert server.attributes["error.type"] == "tool_error"  # the SDK's own verdict


class LeakyTool(Tool):
    """Fails with the call's data in its message (a row, an argument, a key)."""

    name = "leaky"

    async def handle(self) -> McpResponse:
        raise ValueError("row {'card': '4111-1111-1111-1111'} rejected")


class Leaky(Server):
    name = "leaky"
    tools = (LeakyTool,)


class Detailed(Leaky):
    telemetry_exception_details = True


@ERAS
async def test_a_failure_records_its_type_and_incident_not_its_message(
    otel: Recorded, protocol: str
) -> None:
    answer = await client(protocol, Leaky).tool("leaky")
    assert answer.result is not None
    (handler,) = otel.named(HANDLER)
    (event,) = handler.events
    assert event.name == "exception"
    assert dict(event.attributes or {}) == {"exception.type": "ValueError"}
    assert handler.attributes is not None
    assert handler.attributes[INCIDENT] == answer.result["_meta"]["incident"]
    for span in otel.spans():
        recorded = repr(dict(span.attributes or {})) + repr(
            [(e.name, dict(e.attributes or {})) for e in span.events]
        )
        assert "4111" not in recorded + (span.status.description or "")


@ERAS
async def test_the_exception_details_are_recorded_when_the_server_asks(
    otel: Recorded, protocol: str
) -> None:
    (await client(protocol, Detailed).tool("leaky")).assertError("Tool execution failed")
    (handler,) = otel.named(HANDLER)
    (event,) = handler.events
    attributes = dict(event.attributes or {})
    assert attributes["exception.type"] == "ValueError"
    assert "4111-1111-1111-1111" in str(attributes["exception.message"])
    assert "exception.stacktrace" in attributes


@ERAS
async def test_an_output_that_breaks_its_contract_fails_the_output_span(
    otel: Recorded, protocol: str
) -> None:
    result = await client(protocol).tool("wrong_output", {"a": 1, "b": 2})
    assert result.is_error
    assert result.result is not None
    (output,) = otel.named(OUTPUT)
    assert output.status.status_code == StatusCode.ERROR
    assert output.attributes is not None
    assert output.attributes["error.type"] == "OutputContractError"
    assert output.attributes[INCIDENT] == result.result["_meta"]["incident"]
    assert otel.named(HANDLER)[0].status.status_code == StatusCode.UNSET


@ERAS
async def test_invalid_arguments_fail_the_validation_span_and_stop_there(
    otel: Recorded, protocol: str
) -> None:
    result = await client(protocol).tool("add", {"a": "one", "b": 2})
    assert result.is_error
    stages = otel.stages()
    assert names(stages) == [VISIBILITY, VALIDATION]
    validation = stages[1]
    assert validation.status.status_code == StatusCode.ERROR
    assert validation.attributes is not None
    assert validation.attributes["error.type"] == "invalid_arguments"
    assert INCIDENT not in validation.attributes  # the caller's mistake, not an incident


@ERAS
async def test_a_hidden_tool_has_only_its_visibility_span(otel: Recorded, protocol: str) -> None:
    result = await client(protocol).tool("hidden")
    assert result.error is not None
    (visibility,) = otel.stages()
    assert visibility.name == VISIBILITY
    assert visibility.attributes is not None
    assert visibility.attributes["mcp_adapter.registered"] is False
    assert visibility.status.status_code == StatusCode.UNSET


@ERAS
async def test_a_resource_read_is_traced_with_its_uri(otel: Recorded, protocol: str) -> None:
    (await client(protocol).read_resource("notes://5")).assertOk()
    stages = otel.stages()
    assert names(stages) == [VALIDATION, RESOLUTION, HANDLER, OUTPUT]  # no hooks: no visibility
    server = otel.server_span()
    for span in stages:
        assert parent_of(span) == server.context.span_id
        assert span.attributes is not None
        assert span.attributes["mcp.method.name"] == "resources/read"
        assert span.attributes["mcp.resource.uri"] == "notes://5"


@ERAS
async def test_a_failing_resource_names_the_incident_in_its_error(
    otel: Recorded, protocol: str
) -> None:
    result = await client(protocol).read_resource("notes://0")
    assert result.error is not None
    found = re.search(r"incident ([0-9a-f]+)", result.error["message"])
    assert found is not None
    (handler,) = otel.named(HANDLER)
    assert handler.status.status_code == StatusCode.ERROR
    assert handler.attributes is not None
    assert handler.attributes["error.type"] == "LookupError"
    assert handler.attributes[INCIDENT] == found.group(1)
    server = otel.server_span()
    assert server.attributes is not None
    assert server.attributes[INCIDENT] == found.group(1)


@ERAS
async def test_a_resource_variable_that_does_not_convert_fails_validation(
    otel: Recorded, protocol: str
) -> None:
    result = await client(protocol).read_resource("notes://seven")
    assert result.error is not None
    (validation,) = otel.stages()
    assert validation.name == VALIDATION
    assert validation.status.status_code == StatusCode.ERROR
    assert validation.attributes is not None
    assert validation.attributes["error.type"] == "-32602"
    assert INCIDENT not in validation.attributes


@ERAS
async def test_a_prompt_is_traced_with_its_name(otel: Recorded, protocol: str) -> None:
    (await client(protocol).prompt("greet", {"who": "Ada"})).assertOk()
    stages = otel.stages()
    assert names(stages) == [VALIDATION, RESOLUTION, HANDLER, OUTPUT]
    server = otel.server_span()
    for span in stages:
        assert parent_of(span) == server.context.span_id
        assert span.attributes is not None
        assert span.attributes["mcp.method.name"] == "prompts/get"
        assert span.attributes["gen_ai.prompt.name"] == "greet"


@ERAS
async def test_a_prompt_missing_an_argument_fails_validation(otel: Recorded, protocol: str) -> None:
    result = await client(protocol).prompt("greet", {})
    assert result.error is not None
    (validation,) = otel.stages()
    assert validation.status.status_code == StatusCode.ERROR
    assert validation.attributes is not None
    assert validation.attributes["error.type"] == "-32602"


async def test_listings_and_unknown_components_have_no_stage_spans(otel: Recorded) -> None:
    mcp = client("2026-07-28")
    (await mcp.list_tools()).assertOk()
    assert (await mcp.tool("nope")).error is not None
    assert otel.stages() == []
    served = [s.name for s in otel.spans() if s.kind == SpanKind.SERVER]
    assert served == ["tools/list", "tools/call nope"]
