"""The request stage: server-wide layers around everything the dispatcher does for one
request, before the name is looked up, any hook runs or any scope opens.

What a request-stage layer sees and may do is said in ``declare.middleware``. Here the
chain is run: each layer gets its injected singletons and the request's ``McpRequest``
(no scope exists yet), ``call_next`` ends in the dispatcher's own answer (a protocol
result, or a raised ``MCPError``), and what a layer raises is answered as the method
answers it everywhere else: a ``Refusal`` as its safe answer, anything else as an
incident. A layer that declared context values in ``provides`` and passed the call on
without one fails the call as an incident.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeVar, get_args

from mcp import MCPError, types

from mcp_adapter.compiled.handlers import Layer
from mcp_adapter.declare.middleware import Call, Next, RequestCall
from mcp_adapter.declare.request import McpRequest
from mcp_adapter.dispatch.results import error_result, execution_failed
from mcp_adapter.errors import (
    ContextNotProvided,
    Forbidden,
    IncidentError,
    NotFound,
    Refusal,
    ToolError,
    forbidden,
    refused,
    resource_not_found,
)
from mcp_adapter.interrupts import cancelled_for_real
from mcp_adapter.tasks.wire import CreateTaskResult

T = TypeVar("T")
NO_CONTEXT: Final[Mapping[Any, Any]] = MappingProxyType({})
Inner = Callable[[Mapping[Any, Any]], Awaitable[T]]
"""The dispatcher's own answer to the request, given the context values the layers gave."""
Incident = Callable[[str, str, BaseException], str]
"""Logs a failure (what, name, error) and returns its incident id (``DispatchCore._incident``)."""


@dataclass(frozen=True, slots=True)
class Answers:
    """How one method answers: the results a layer may return, and what a layer's
    refusal or failure becomes."""

    kind: str
    """How errors name the kind (``"tool"``, ``"resource"``, ``"listing"``, ...)."""
    failed: str
    """The message of a failure's ``-32603`` (``"Resource read failed"``)."""
    results: tuple[type, ...]

    def refusal(self, refusal: Refusal, call: Call, modern: bool) -> Any:
        if self.kind == "tool":
            if isinstance(refusal, ToolError):
                return error_result(refusal.message)
            raise refused("tool", call.name, refusal) from None
        if self.kind == "resource":
            if isinstance(refusal, NotFound):
                raise resource_not_found(call.name, modern=modern) from None
            if isinstance(refusal, Forbidden):
                raise forbidden("resource", call.component or call.name) from None
        raise refused(self.kind, call.name, refusal) from None

    def failure(self, incident: str) -> Any:
        if self.kind == "tool":
            return execution_failed(incident)
        raise IncidentError(self.failed, incident)


ToolAnswer = types.CallToolResult | types.InputRequiredResult | CreateTaskResult
"""Every answer of ``tools/call``: a result, the questions of a round (2026-07-28), or the
handle of the task it started (the tasks extension)."""

TOOL: Final = Answers("tool", "Tool execution failed", get_args(ToolAnswer))
ResourceAnswer = types.ReadResourceResult | types.InputRequiredResult
"""Every answer of ``resources/read``: its contents, or the questions of a round."""
PromptAnswer = types.GetPromptResult | types.InputRequiredResult
"""Every answer of ``prompts/get``: its messages, or the questions of a round."""

RESOURCE: Final = Answers("resource", "Resource read failed", get_args(ResourceAnswer))
PROMPT: Final = Answers("prompt", "Prompt failed", get_args(PromptAnswer))
COMPLETION: Final = Answers("completion", "Completion failed", (types.CompleteResult,))
LISTINGS: Final = {
    "tools/list": Answers("listing", "Listing failed", (types.ListToolsResult,)),
    "resources/list": Answers("listing", "Listing failed", (types.ListResourcesResult,)),
    "resources/templates/list": Answers(
        "listing", "Listing failed", (types.ListResourceTemplatesResult,)
    ),
    "prompts/list": Answers("listing", "Listing failed", (types.ListPromptsResult,)),
}


async def staged(
    layers: Sequence[Layer],
    call: RequestCall,
    inner: Inner[T],
    request: McpRequest | None,
    answers: Answers,
    incident: Incident,
    modern: bool,
) -> Any:
    """Run ``call`` through the request-stage ``layers`` (first outermost), then ``inner``;
    answer what a layer raised or returned wrongly as ``answers`` says (so what it returns
    is what ``inner`` would: one of ``answers.results``)."""

    def innermost(passed: Call) -> Awaitable[T]:
        return inner(passed.context if isinstance(passed, RequestCall) else NO_CONTEXT)

    chain: Next = innermost
    for layer in reversed(layers):
        chain = _link(layer, chain, request)
    try:
        value = await chain(call)
    except MCPError:
        raise
    except Refusal as refusal:
        return answers.refusal(refusal, call, modern)
    except Exception as exc:  # noqa: BLE001 - a layer's failure becomes a safe answer
        return answers.failure(incident(answers.kind, call.name, exc))
    except BaseException as exc:
        if cancelled_for_real(exc):
            raise
        return answers.failure(incident(answers.kind, call.name, exc))
    if not isinstance(value, answers.results):
        wrong = TypeError(
            f"a request-stage layer returned {type(value).__name__} to {call.method}; return "
            f"what call_next returned, or a {answers.results[0].__name__}"
        )
        return answers.failure(incident(answers.kind, call.name, wrong))
    return value


def _link(layer: Layer, call_next: Next, request: McpRequest | None) -> Next:
    function = layer.function
    passed_on = _checked(layer, call_next) if layer.provides else call_next
    if not layer.injects:

        def step(call: Call) -> Awaitable[Any]:  # the layer's own awaitable: no coroutine here
            return function(call, passed_on)

        return step

    plan = layer.plan

    async def step_injected(call: Call) -> Any:
        return await function(call, passed_on, **await plan.injected(None, request))

    return step_injected


def _checked(layer: Layer, call_next: Next) -> Next:
    """``call_next`` that fails when ``layer`` did not give a value it declared."""
    provides = layer.provides

    async def checked(call: Call) -> Any:
        given = call.context if isinstance(call, RequestCall) else NO_CONTEXT
        missing = [key for key in provides if given.get(key) is None]
        if missing:
            names = ", ".join(sorted(getattr(key, "__qualname__", repr(key)) for key in missing))
            raise ContextNotProvided(
                f"the request-stage layer {layer.function!r} declares it provides {names} and "
                "passed the call on without it (call.with_context({...}))"
            )
        return await call_next(call)

    return checked
