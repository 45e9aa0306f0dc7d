"""Each injected fault maps to its documented error, with an incident id logged server-side.

Documented (docs/tools.md, docs/resources-prompts.md, docs/visibility.md):

- a tool: ``isError: true``, ``Tool execution failed (incident <id>)``, the id in
  ``_meta.incident``;
- a resource read, a prompt, a completion: JSON-RPC ``-32603`` with the incident id;
- a listing whose visibility hook raises: ``-32603``, ``Listing failed (incident <id>)``;
- in every case the traceback is logged on logger ``mcp_adapter`` (ERROR) with
  the same id, and the client sees neither it nor the exception text.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from container import Container
from mcp_adapter import McpRequest, McpResponse, Prompt, Resource, Server, Tool
from mcp_adapter.testing import McpResult, McpTestClient
from schemas import Schema
from tests.reliability.servers import INCIDENT, SECRET, explode, leaks

pytestmark = pytest.mark.anyio

FINALIZED: list[str] = []


class BrokenFinalizer:
    """A scoped service whose generator raises after ``yield`` (its finalizer fails)."""


def broken_finalizer() -> Iterator[BrokenFinalizer]:
    yield BrokenFinalizer()
    FINALIZED.append("sync")
    explode()


class AsyncBrokenFinalizer:
    pass


async def async_broken_finalizer() -> AsyncIterator[AsyncBrokenFinalizer]:
    yield AsyncBrokenFinalizer()
    FINALIZED.append("async")
    explode()


class BrokenFactory:
    pass


def broken_factory() -> BrokenFactory:
    explode()
    return BrokenFactory()


class Point(Schema):
    x: int
    y: int


class OutputViolation(Tool[Schema, Point]):
    name = "output_violation"

    async def handle(self) -> McpResponse:
        return McpResponse.structured({"x": SECRET})


class TextForTypedOutput(Tool[Schema, Point]):
    name = "text_for_typed_output"

    async def handle(self) -> McpResponse:
        return McpResponse.text(SECRET)


class Unserializable(Tool):
    name = "unserializable"

    async def handle(self) -> McpResponse:
        return McpResponse.structured({"value": object(), "note": SECRET})


class ReturnsDict(Tool):
    name = "returns_dict"

    async def handle(self) -> Any:
        return {"content": [{"type": "text", "text": SECRET}]}


class TwoStructured(Tool):
    name = "two_structured"

    async def handle(self) -> list[McpResponse]:
        return [McpResponse.structured(1), McpResponse.structured(SECRET)]


class ShouldRegisterRaises(Tool):
    name = "should_register_raises"

    def shouldRegister(self, request: McpRequest) -> bool:
        explode()
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class AuthorizeRaises(Tool):
    name = "authorize_raises"

    async def authorize(self, request: McpRequest) -> bool:
        explode()
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class FinalizerRaises(Tool):
    name = "finalizer_raises"

    async def handle(self, service: BrokenFinalizer) -> McpResponse:
        return McpResponse.text("handled")


class AsyncFinalizerRaises(Tool):
    name = "async_finalizer_raises"

    async def handle(self, service: AsyncBrokenFinalizer) -> McpResponse:
        return McpResponse.text("handled")


class FactoryRaises(Tool):
    name = "factory_raises"

    async def handle(self, service: BrokenFactory) -> McpResponse:
        return McpResponse.text("unreachable")


class ConstructorRaises(Tool):
    name = "constructor_raises"

    def __init__(self) -> None:
        explode()

    async def handle(self) -> McpResponse:
        return McpResponse.text("unreachable")


class ResourceFinalizerRaises(Resource):
    name = "resource_finalizer"
    uri = "faults://finalizer"

    async def handle(self, service: BrokenFinalizer) -> McpResponse:
        return McpResponse.text("read")


class ResourceAuthorizeRaises(Resource):
    name = "resource_authorize"
    uri = "faults://authorize"

    def authorize(self, request: McpRequest) -> bool:
        explode()
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("read")


class ResourceReturnsError(Resource):
    name = "resource_error_response"
    uri = "faults://error-response"

    async def handle(self) -> McpResponse:
        return McpResponse.error(SECRET)


class PromptShouldRegisterRaises(Prompt):
    name = "prompt_should_register"

    def shouldRegister(self) -> bool:
        explode()
        return True

    async def handle(self) -> McpResponse:
        return McpResponse.text("prompt")


class PromptFinalizerRaises(Prompt):
    name = "prompt_finalizer"

    async def handle(self, service: AsyncBrokenFinalizer) -> McpResponse:
        return McpResponse.text("prompt")


class PromptReturnsNone(Prompt):
    name = "prompt_none"

    async def handle(self) -> Any:
        return None


class FaultServer(Server):
    name = "faults"
    tools = (
        OutputViolation,
        TextForTypedOutput,
        Unserializable,
        ReturnsDict,
        TwoStructured,
        ShouldRegisterRaises,
        AuthorizeRaises,
        FinalizerRaises,
        AsyncFinalizerRaises,
        FactoryRaises,
        ConstructorRaises,
    )
    resources = (ResourceFinalizerRaises, ResourceAuthorizeRaises, ResourceReturnsError)
    prompts = (PromptShouldRegisterRaises, PromptFinalizerRaises, PromptReturnsNone)


def fault_container() -> Container:
    container = Container()
    container.scoped(BrokenFinalizer, broken_finalizer)
    container.scoped(AsyncBrokenFinalizer, async_broken_finalizer)
    container.scoped(BrokenFactory, broken_factory)
    return container


TOOL_FAULTS = [
    "output_violation",
    "text_for_typed_output",
    "unserializable",
    "returns_dict",
    "two_structured",
    "should_register_raises",
    "authorize_raises",
    "finalizer_raises",
    "async_finalizer_raises",
    "factory_raises",
    "constructor_raises",
]


def _logged(caplog: pytest.LogCaptureFixture, incident: str) -> logging.LogRecord:
    records = [r for r in caplog.records if r.name == "mcp_adapter" and incident in r.getMessage()]
    assert len(records) == 1, [r.getMessage() for r in caplog.records]
    record = records[0]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None, "the traceback is logged with the incident"
    return record


def _safe(result: McpResult) -> str:
    text = json.dumps(result.message)
    assert not leaks(text), (leaks(text), result.message)
    return text


@pytest.mark.parametrize("name", TOOL_FAULTS)
async def test_a_tool_fault_is_an_execution_failure_with_a_logged_incident(
    name: str, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_adapter")
    client = McpTestClient(fault_container(), FaultServer, protocol=era)  # type: ignore[arg-type]
    result = await client.tool(name)
    assert result.error is None, "a tool failure is a result, not a protocol error"
    result.assertError("Tool execution failed")
    incident = result.result["_meta"]["incident"]  # type: ignore[index]
    assert result.texts == [f"Tool execution failed (incident {incident})"]
    _safe(result)
    _logged(caplog, incident)


async def test_a_finalizer_that_raises_still_ran_and_the_next_call_is_served(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_adapter")
    FINALIZED.clear()
    client = McpTestClient(fault_container(), FaultServer, protocol=era)  # type: ignore[arg-type]
    for _ in range(3):
        (await client.tool("finalizer_raises")).assertError("Tool execution failed")
        (await client.tool("async_finalizer_raises")).assertError("Tool execution failed")
    assert FINALIZED == ["sync", "async"] * 3


@pytest.mark.parametrize(
    ("method", "params", "what"),
    [
        ("resources/read", {"uri": "faults://finalizer"}, "Resource read failed"),
        ("resources/read", {"uri": "faults://authorize"}, "Resource read failed"),
        ("resources/read", {"uri": "faults://error-response"}, "Resource read failed"),
        ("prompts/get", {"name": "prompt_should_register"}, "Prompt failed"),
        ("prompts/get", {"name": "prompt_finalizer"}, "Prompt failed"),
        ("prompts/get", {"name": "prompt_none"}, "Prompt failed"),
        ("prompts/list", {}, "Listing failed"),
        ("resources/list", {}, "Listing failed"),
        ("tools/list", {}, "Listing failed"),
    ],
)
async def test_other_faults_are_internal_errors_with_a_logged_incident(
    method: str, params: dict[str, Any], what: str, era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcp_adapter")
    client = McpTestClient(fault_container(), FaultServer, protocol=era)  # type: ignore[arg-type]
    result = await client.request(method, params)
    assert result.error is not None, result.message
    assert result.error["code"] == -32603
    assert what in result.error["message"]
    found = INCIDENT.search(result.error["message"])
    assert found is not None, result.error
    _safe(result)
    _logged(caplog, found.group(1))
