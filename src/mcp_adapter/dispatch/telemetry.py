"""OpenTelemetry for component calls: the adapter's stages as child spans of the SDK's
span, and the ``mcp.server.operation.duration`` histogram (docs/observability.md).

The SDK's ``OpenTelemetryMiddleware`` opens one SERVER span per inbound message; a
``tools/call``, ``resources/read`` or ``prompts/get`` the adapter answers gets, under
it, one INTERNAL span per stage (visibility hooks, argument validation, building the
component instance, the handler, the output check) and one duration measurement.

Nothing of this runs while no tracer or meter provider is configured (OpenTelemetry's
default: the API's proxy providers), nor when ``Server.telemetry`` is ``False`` or
``MCP_ADAPTER_TELEMETRY=off``. The dispatcher decides per call with one attribute
read (:attr:`Activity.on`) and, while it is ``False``, one step of a countdown (a C
iterator): the providers are looked at again every :data:`RECHECK` calls (looking
costs microseconds), when a dispatcher is made, and on :func:`refresh`. A provider,
once set, cannot be replaced (OpenTelemetry sets it once per process), so once found
it is not looked for again.

Every ``opentelemetry`` import of the adapter is in this module.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeVar

from mcp import MCPError, types
from opentelemetry import metrics, trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from mcp_adapter.dispatch import results
from mcp_adapter.errors import Refusal, incident_of
from mcp_adapter.input.questions import is_marker
from mcp_adapter.interrupts import cancelled_for_real

T = TypeVar("T")

ENVIRONMENT: Final = "MCP_ADAPTER_TELEMETRY"
"""``off`` (or ``0``, ``false``, ``no``) turns the adapter's spans and metric off for
every server the process builds afterwards, whatever ``Server.telemetry`` says."""
_OFF = frozenset({"off", "0", "false", "no"})

RECHECK: Final = 1000
"""Calls between two looks for a provider while none is configured."""

INCIDENT: Final = "mcp_adapter.incident"
"""The incident id of a failure the client is answered with (its ``_meta.incident``)."""

DURATION: Final = "mcp.server.operation.duration"
BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The explicit bucket boundaries the MCP semantic conventions advise for it."""

VISIBILITY: Final = "mcp_adapter.visibility"
VALIDATION: Final = "mcp_adapter.validation"
RESOLVER: Final = "mcp_adapter.resolver"
"""One call of a resolver (``Resolve(fn)``) in a call's input phase, once per resolver a
round runs; its attributes name it (:data:`RESOLVER_KEY`) and say whether it asked."""
RESOLUTION: Final = "mcp_adapter.resolution"
HANDLER: Final = "mcp_adapter.handler"
OUTPUT: Final = "mcp_adapter.output"
STAGES: Final = (VISIBILITY, VALIDATION, RESOLVER, RESOLUTION, HANDLER, OUTPUT)
"""The names of the adapter's spans, in the order a call runs them."""
RESOLVER_KEY: Final = "mcp_adapter.resolver.key"
"""The resolver's wire key (``module:qualname``) on its span."""
ASKED: Final = "mcp_adapter.resolver.asked"
"""On a resolver's span: whether it returned a question (``Elicit``, ``Sample``, ...)."""

_tracer = trace.get_tracer("mcp_adapter")
_duration = metrics.get_meter("mcp_adapter").create_histogram(
    DURATION,
    unit="s",
    description="MCP request duration as observed on the receiver, from the time it "
    "was received until the result is sent",
    explicit_bucket_boundaries_advisory=BUCKETS,
)


def _real(provider: object) -> bool:
    """Not one of the API's own providers: its proxy (what there is until a provider is
    set) or its no-op one; those make spans and measurements that record nothing."""
    return not type(provider).__module__.startswith(
        ("opentelemetry.trace", "opentelemetry.metrics")
    )


class Activity:
    """Whether a tracer or a meter provider is configured, read once per call.

    A dispatcher asks ``otel.on or (next(otel.due) and otel.refresh())``: while ``on``
    is ``False``, ``due`` (a C iterator, no Python frame) is true once every
    :data:`RECHECK` calls, and only then are the providers looked at.
    """

    __slots__ = ("due", "metrics", "on", "traces")

    def __init__(self) -> None:
        self.traces = self.metrics = self.on = False
        self.due: Iterator[bool] = _countdown()

    def refresh(self) -> bool:
        """Look at the global providers now; ``on``: either is a real one."""
        if not self.traces:
            self.traces = _real(trace.get_tracer_provider())
        if not self.metrics:
            self.metrics = _real(metrics.get_meter_provider())
        self.on = self.traces or self.metrics
        self.due = _countdown()
        return self.on


def _countdown() -> Iterator[bool]:
    return itertools.cycle((False,) * (RECHECK - 1) + (True,))


ACTIVITY: Final = Activity()
"""The one activity of the process (providers are global)."""


def refresh() -> bool:
    """Look for a configured provider now (one set after the server was built is
    otherwise noticed within :data:`RECHECK` calls); ``True`` when there is one."""
    return ACTIVITY.refresh()


def switch(server: type) -> Activity | None:
    """What a dispatcher serving ``server`` reads per call: ``None`` when its telemetry is
    switched off (``Server.telemetry = False`` or ``MCP_ADAPTER_TELEMETRY=off``)."""
    if os.environ.get(ENVIRONMENT, "").strip().lower() in _OFF:
        return None
    if getattr(server, "telemetry", True) is False:
        return None
    ACTIVITY.refresh()
    return ACTIVITY


@dataclass(frozen=True, slots=True)
class Kind:
    """A method the adapter measures and traces, and what names its target."""

    method: str
    target: str
    """The attribute naming the component (``gen_ai.tool.name``, ...)."""
    on_metric: bool = True
    """Whether the target is an attribute of the metric too (``mcp.resource.uri`` is
    opt-in there: unbounded)."""


TOOL: Final = Kind("tools/call", "gen_ai.tool.name")
RESOURCE: Final = Kind("resources/read", "mcp.resource.uri", on_metric=False)
PROMPT: Final = Kind("prompts/get", "gen_ai.prompt.name")


async def observed(
    kind: Kind,
    target: str,
    ctx: Any,
    answer: Callable[..., Awaitable[T]],
    params: Any,
    *,
    known: bool,
    details: bool = False,
) -> T:
    """``await answer(ctx, params, tracing, True)`` (the dispatcher's method again, told it
    is observed): with stage spans when tracing, its duration recorded when measuring.

    ``known``: the catalog has a component named ``target``; only then is the name an
    attribute of the metric (a name the client made up would make a series of its own:
    unknown names share the series without it). ``details``: failed stages record the
    exception's message and stack trace (``Server.telemetry_exception_details``)."""
    activity = ACTIVITY
    if not (activity.traces and activity.metrics) and next(activity.due):
        activity.refresh()  # the other provider may come later
    tracing = Tracing(kind, target, details) if activity.traces else None
    if not activity.metrics:
        return await answer(ctx, params, tracing, True)
    attributes: dict[str, Any] = {"mcp.method.name": kind.method}
    if kind.on_metric and known:
        attributes[kind.target] = target
    if kind is TOOL:
        attributes["gen_ai.operation.name"] = "execute_tool"
    version = getattr(ctx, "protocol_version", None)
    if isinstance(version, str):
        attributes["mcp.protocol.version"] = version
    start = time.perf_counter()
    try:
        result = await answer(ctx, params, tracing, True)
    except MCPError as error:
        code = str(error.error.code)
        attributes["error.type"] = attributes["rpc.response.status_code"] = code
        raise
    except BaseException as error:
        attributes["error.type"] = type(error).__qualname__
        raise
    else:
        if isinstance(result, types.CallToolResult) and result.is_error:
            attributes["error.type"] = "tool_error"
        return result
    finally:
        _duration.record(time.perf_counter() - start, attributes)


def incident(incident: str) -> None:
    """Name the incident a call was answered with on the current span (the SDK's)."""
    if ACTIVITY.traces:
        trace.get_current_span().set_attribute(INCIDENT, incident)


class Tracing:
    """One traced call: the attributes of its spans, and its modes."""

    __slots__ = ("attributes", "details")

    def __init__(self, kind: Kind, target: str, details: bool = False) -> None:
        self.attributes: Mapping[str, Any] = MappingProxyType(
            {"mcp.method.name": kind.method, kind.target: target}
        )
        self.details = details

    def on(self, mode: Any) -> Traced:
        """``mode`` (see ``dispatch.modes``) with a span around each stage."""
        return Traced(mode, self.attributes, self.details)


class Traced:
    """A call mode whose stages are spans, children of the current span (the SDK's).

    It has every part of a mode (:mod:`mcp_adapter.dispatch.modes`); ``scope`` and
    ``inject`` are the wrapped mode's own, and each stage runs where the mode runs it.
    """

    __slots__ = ("attributes", "details", "inject", "mode", "scope")

    def __init__(self, mode: Any, attributes: Mapping[str, Any], details: bool = False) -> None:
        self.mode = mode
        self.attributes = attributes
        self.details = details
        self.scope = mode.scope
        self.inject = mode.inject

    async def visible(self, component: Any, scope: Any, request: Any) -> tuple[bool, bool]:
        with _stage(VISIBILITY, self.attributes, self.details) as span:
            registered, authorized = await self.mode.visible(component, scope, request)
            span.set_attribute("mcp_adapter.registered", registered)
            span.set_attribute("mcp_adapter.authorized", authorized)
            return registered, authorized

    def check_wire(self, check: Callable[[Any], Any], arguments: Any) -> Any:
        with _stage(VALIDATION, self.attributes, self.details) as span:
            payload, errors = check(arguments)
            if errors:
                span.set_attribute("error.type", "invalid_arguments")
                span.set_status(StatusCode.ERROR, "invalid arguments")
            return payload, errors

    def check(self, function: Callable[..., T], *args: Any) -> T:
        with _stage(VALIDATION, self.attributes, self.details):
            return function(*args)

    def resolve(self, build: Callable[..., T], *args: Any) -> T:
        with _stage(RESOLUTION, self.attributes, self.details):
            return self.mode.resolve(build, *args)  # type: ignore[no-any-return]

    async def aresolve(self, build: Callable[..., Awaitable[T]], *args: Any) -> T:
        with _stage(RESOLUTION, self.attributes, self.details):
            return await self.mode.aresolve(build, *args)  # type: ignore[no-any-return]

    async def call(self, plan: Any, *args: Any) -> Any:
        key = plan.resolver
        if key is None:
            with _stage(HANDLER, self.attributes, self.details):
                return await self.mode.call(plan, *args)
        with _stage(RESOLVER, {**self.attributes, RESOLVER_KEY: key}, self.details) as span:
            value = await self.mode.call(plan, *args)
            span.set_attribute(ASKED, is_marker(value))
            return value

    def tool_result(self, *args: Any, **kwargs: Any) -> types.CallToolResult:
        with _stage(OUTPUT, self.attributes, self.details):
            return results.tool_result(*args, **kwargs)

    def resource_contents(self, *args: Any, **kwargs: Any) -> types.ReadResourceResult:
        with _stage(OUTPUT, self.attributes, self.details):
            return results.resource_contents(*args, **kwargs)

    def prompt_messages(self, *args: Any, **kwargs: Any) -> types.GetPromptResult:
        with _stage(OUTPUT, self.attributes, self.details):
            return results.prompt_messages(*args, **kwargs)


@contextmanager
def _stage(name: str, attributes: Mapping[str, Any], details: bool) -> Iterator[Span]:
    with _tracer.start_as_current_span(
        name,
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as error:
            failed(span, error, details)
            raise


EXCEPTION: Final = "exception"
"""The span event of a failure (OpenTelemetry's name), with ``exception.type``."""


def failed(span: Span, error: BaseException, details: bool = False) -> None:
    """Mark ``span`` failed by ``error``: status ERROR, ``error.type``, and the incident
    id when the failure becomes an incident (not a protocol error, not a ``Refusal``,
    not a real cancellation), with an ``exception`` event naming its type. Its message
    and stack trace (which often carry the call's data: arguments, URIs, rows) are
    recorded only with ``details`` (``Server.telemetry_exception_details``)."""
    kind = str(error.error.code) if isinstance(error, MCPError) else type(error).__qualname__
    span.set_attribute("error.type", kind)
    span.set_status(StatusCode.ERROR, kind)
    if isinstance(error, MCPError | Refusal):
        return
    if isinstance(error, Exception) or not cancelled_for_real(error):
        span.set_attribute(INCIDENT, incident_of(error))
        if details:
            span.record_exception(error)
        else:
            span.add_event(EXCEPTION, {"exception.type": _type_name(error)})


def _type_name(error: BaseException) -> str:
    cls = type(error)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )
